"""Encoding on ONNX Runtime: same vectors as PyTorch float32, chosen by default, recorded in the index."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from medlink.encoders import onnx_runtime, transformer
from medlink.encoders.transformer import Encoder, resolve_runtime
from medlink.errors import MedlinkError, MissingInputError
from medlink.retrieval import dense

pytest.importorskip("onnxruntime")
TEXTS = ["myocardial infarction", "heart attack", "type 2 diabetes mellitus with diabetic nephropathy", "", "T2DM"]


@pytest.fixture(scope="module")
def onnx_encoder() -> Encoder:
    return Encoder(runtime="onnx")


def test_onnx_vectors_match_pytorch_float32(onnx_encoder):
    exact = Encoder(bf16=False, runtime="torch").encode(TEXTS)
    fast = onnx_encoder.encode(TEXTS, batch_size=2)  # batches of different padded lengths
    assert fast.dtype == np.float32 and fast.shape == exact.shape
    assert np.all(np.sum(fast * exact, axis=1) > 0.9999)
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)


def test_exported_graph_is_cached_by_weights(onnx_encoder):
    path = onnx_runtime.exported_path(onnx_encoder.spec.fingerprint, onnx_encoder.dimension)
    assert path.is_file()
    stamp = path.stat().st_mtime_ns
    Encoder(runtime="onnx").encode(["asthma"])
    assert path.stat().st_mtime_ns == stamp  # a second encoder reuses the export


def test_runtime_resolution(monkeypatch):
    assert resolve_runtime("auto") == "onnx"
    assert resolve_runtime("torch") == "torch"
    with pytest.raises(MedlinkError, match="unknown encoder runtime"):
        resolve_runtime("tensorrt")
    monkeypatch.setattr(transformer, "onnx_available", lambda: False)
    assert resolve_runtime("auto") == "torch"
    with pytest.raises(MissingInputError, match="onnxruntime"):
        resolve_runtime("onnx")


def test_index_built_on_onnx_is_queried_with_torch_when_onnx_is_missing(onnx_encoder, monkeypatch):
    spec = onnx_encoder.spec
    assert spec.runtime == "onnx" and spec.precision == "onnx-fp32"
    monkeypatch.setattr(transformer, "onnx_available", lambda: False)
    with pytest.warns(UserWarning, match="ONNX Runtime, which is not installed"):
        fallback = Encoder.from_spec(spec.to_dict())
    assert fallback.runtime == "torch"


def test_vector_cache_tells_runtimes_apart(onnx_encoder):
    torch_encoder = Encoder(runtime="torch")
    assert dense.cache_key(onnx_encoder, TEXTS) != dense.cache_key(torch_encoder, TEXTS)
    assert dense.cache_key(onnx_encoder, TEXTS) == dense.cache_key(Encoder(runtime="onnx"), TEXTS)


def test_dense_index_records_its_runtime(tmp_path, kb_for_runtime):
    from medlink.linking.config import LinkerConfig
    from medlink.linking.linker import Linker

    config = LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb", "params": {}}]})
    linker = Linker.build(kb_for_runtime, config)
    assert linker.generators["dense"].encoder.runtime == "onnx"
    linker.save(tmp_path / "index")
    saved = json.loads(next((tmp_path / "index").rglob(dense.PARAMS_FILE)).read_text())
    assert saved["encoder"]["runtime"] == "onnx"
    loaded = Linker.load(tmp_path / "index")
    assert loaded.generators["dense"].encoder.runtime == "onnx"
    assert [c.concept_id for c in loaded.link(["colon cancer"], k=3)[0]] == [c.concept_id for c in linker.link(["colon cancer"], k=3)[0]]


@pytest.fixture(scope="module")
def kb_for_runtime(tmp_path_factory):
    from medlink.kb.build import build_kb
    from medlink.kb.store import KB

    path = tmp_path_factory.mktemp("onnx-kb") / "kb.sqlite"
    dictionary = Path(__file__).parent / "fixtures" / "eval" / "dictionary.txt"
    return KB.open(build_kb(path, [f"biosyn:{dictionary}"], progress=False).path)
