"""Dense speed paths: the transformers-free BERT loader, int8 encoding, what 'auto' picks for encoding, and an index's
mentions encoded in the format its names were (all on the fixture dictionary's 14 names; nothing timed)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from medlink.encoders import default_model_dir, precision  # noqa: E402
from medlink.encoders.bert import load_fast, supported  # noqa: E402
from medlink.encoders.transformer import Encoder  # noqa: E402
from medlink.errors import MedlinkError  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.retrieval import dense  # noqa: E402

pytestmark = pytest.mark.dense

NAMES = ["breast cancer", "colon cancer", "ataxia telangiectasia", "kidney disease", "heart attack", "can't sleep", "",
         "Crohn's disease, façade — 肺炎", "x" * 300]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def reference():
    """transformers' own model and tokenizer, float32."""
    return Encoder(precision="fp32")


def test_fast_bert_gives_transformers_vectors_and_token_ids(reference):
    fast = Encoder(precision="fp32", inference_only=True)
    assert fast.fast and not reference.fast
    for pairs in (None, ["x"] * len(NAMES)):
        ours = fast.tokenizer(NAMES, pairs, truncation=True, max_length=32)
        theirs = reference.tokenizer(NAMES, pairs, truncation=True, max_length=32)
        assert ours["input_ids"] == theirs["input_ids"] and ours["token_type_ids"] == theirs["token_type_ids"]
    cosine = (fast.encode(NAMES) * reference.encode(NAMES)).sum(1)
    assert cosine.min() > 0.99999
    with pytest.raises(MedlinkError, match="inference-only"):
        fast.save(default_model_dir().parent / "never-written")


def test_folders_the_fast_loader_does_not_cover_fall_back_to_transformers(tmp_path):
    folder = shutil.copytree(default_model_dir(), tmp_path / "model")
    assert supported(folder) is not None
    (folder / "tokenizer.json").unlink()  # a WordPiece vocab.txt alone: transformers builds the tokenizer
    assert supported(folder) is None and load_fast(folder) is None
    encoder = Encoder(folder, precision="fp32", inference_only=True)
    assert not encoder.fast and encoder.encode(["heart attack"]).shape == (1, 384)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "position_embedding_type": "relative_key"}))
    assert supported(folder) is None


def test_int8_vectors_stay_close_to_float32(reference):
    int8 = Encoder(precision="int8", inference_only=True)
    assert int8.precision == "int8" and int8.spec.precision == "int8"
    vectors, exact = int8.encode(NAMES), reference.encode(NAMES)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)  # the empty and the 300-character name too
    words = [i for i, name in enumerate(NAMES) if name and len(name) < 100]
    cosine = (vectors[words] * exact[words]).sum(1)
    assert cosine.mean() > 0.99 and cosine.min() > 0.98, cosine  # per-token int8: ~0.997 (torch's per-batch dynamic int8 gave ~0.97)
    pair = int8.encode(["heart attack", "myocardial infarction", "fracture of femur"])
    assert pair[0] @ pair[1] > pair[0] @ pair[2]  # a ranking int8 keeps


def test_int8_vectors_do_not_depend_on_the_batch():
    """A name alone (a query) and the same name among many longer ones (an index build) get the same vector: activations
    are quantised per token, not per batch (a batch's range would change every name's rounding)."""
    int8 = Encoder(precision="int8", inference_only=True)
    alone = int8.encode(NAMES[:4])
    among_others = int8.encode(NAMES[:4] + [f"{name} with {NAMES[-1]}" for name in NAMES * 3])[:4]
    words = [i for i, name in enumerate(NAMES[:4]) if name]
    assert np.all((alone[words] * among_others[words]).sum(1) > 0.995)


def test_int8_is_an_encoding_format_only(monkeypatch):
    """Training and the other models run float32 when int8 is asked for; encoders run int8."""
    monkeypatch.delenv(precision.ENV, raising=False)
    assert precision.resolve("int8") == "fp32" and precision.resolve_encoding("int8") == "int8"
    monkeypatch.setenv(precision.ENV, "int8")
    assert precision.resolve("auto") == "fp32" and precision.resolve_encoding("bf16") == "int8"


def test_auto_encoding_follows_the_machine_choice(monkeypatch):
    monkeypatch.delenv(precision.ENV, raising=False)
    for choice, encoding in (("bf16", "bf16"), ("fp32", "int8"), ("fp32", "fp32")):
        monkeypatch.setattr(precision, "_choice", precision.MachineChoice(choice, encoding, "test"))
        assert precision.resolve_encoding("auto") == encoding
        assert precision.resolve("auto") == choice


def test_an_index_encodes_mentions_as_its_names_were_and_records_it(kb, tmp_path, monkeypatch):
    monkeypatch.setenv(precision.ENV, "int8")
    config = LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb"}]})
    built = Linker.build(kb, config)
    assert built.precisions() == {"dense": "int8"}
    built.save(tmp_path / "index")
    saved = json.loads((tmp_path / "index" / "generators" / "dense" / dense.PARAMS_FILE).read_text())
    assert saved["encoded_with"] == "int8" and saved["encoder"]["precision"] == "auto"
    monkeypatch.delenv(precision.ENV)
    monkeypatch.setattr(precision, "_choice", precision.MachineChoice("bf16", "bf16", "test"))  # a machine where auto means bf16
    loaded = Linker.load(tmp_path / "index")
    assert loaded.precisions() == {"dense": "int8"} and loaded.generators["dense"].encoder.fast
    first = [c.concept_id for c in built.link(["breast tumours"], k=3)[0].candidates]
    assert [c.concept_id for c in loaded.link(["breast tumours"], k=3)[0].candidates] == first
    monkeypatch.setenv(precision.ENV, "fp32")  # an explicit --precision still wins
    assert Linker.load(tmp_path / "index").precisions() == {"dense": "fp32"}
