"""The dense generator with the packaged all-MiniLM-L6-v2 on the fixture dictionary (14 names)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from medlink.encoders import default_model_dir
from medlink.encoders.transformer import Encoder, check_model_dir
from medlink.errors import MedlinkError
from medlink.kb.build import build_kb
from medlink.kb.store import KB
from medlink.linking.config import LinkerConfig
from medlink.linking.linker import Linker
from medlink.params import DENSE_PARAMS
from medlink.retrieval import dense

pytestmark = pytest.mark.dense


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """14 names gain nothing from threads, and on a shared CPU two OpenMP threads run several times slower."""
    import faiss
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    faiss.omp_set_num_threads(threads)


def config(**params) -> LinkerConfig:
    return LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb", "params": params}]})


def ranking(linker: Linker, mentions: list[str], k: int = 5) -> list[list[tuple[str, float]]]:
    return [[(c.concept_id, c.score) for c in result.candidates] for result in linker.link(mentions, k=k)]


@pytest.fixture(scope="module")
def flat(kb) -> Linker:
    return Linker.build(kb, config())


@pytest.fixture
def model_copy(tmp_path):
    """A private copy of the default model folder, free to break."""
    return shutil.copytree(default_model_dir(), tmp_path / "model")


MENTIONS = ["breast tumours", "colon cancer", "ataxia telangiectasia", "kidney disease"]


def test_breast_tumours_links_to_breast_neoplasms(flat):
    result = flat.link(["breast tumours"], k=3)[0].candidates
    assert result[0].concept_id == "D001943"
    assert result[0].matched_name in ("breast cancer", "breast neoplasms")
    assert set(result[0].scores_by_stage) == {"dense"}
    scores = [c.score for c in result]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1.0001


def test_save_load_round_trip_gives_identical_scores(flat, kb, tmp_path):
    flat.save(tmp_path / "idx")
    saved = json.loads((tmp_path / "idx" / "generators" / "dense" / "dense.json").read_text())
    assert saved["params"]["index"] == "flat" and saved["params"]["model"] is None
    assert saved["encoder"]["fingerprint"] and saved["vectors"] == len(flat.tables["kb"])
    loaded = Linker.load(tmp_path / "idx", kb)
    assert ranking(loaded, MENTIONS) == ranking(flat, MENTIONS)


def test_encode_mentions_matches_the_indexed_names(flat):
    generator = flat.generators["dense"]
    keys = flat.tables["kb"].keys[:3]
    vectors = generator.encode_mentions(keys)
    assert vectors.shape == (3, generator.encoder.dimension) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    scores, rows = generator.index.search(vectors, 1)
    assert rows[:, 0].tolist() == [0, 1, 2] and np.all(scores[:, 0] > 0.99)


@pytest.mark.parametrize("params", [{"fp16": True}, {"index": "hnsw"}, {"index": "hnsw", "fp16": True}, {"index": "ivfpq"}])
def test_index_variants_agree_with_flat(kb, flat, tmp_path, params):
    linker = Linker.build(kb, config(**params))
    got, expected = ranking(linker, MENTIONS, k=3), ranking(flat, MENTIONS, k=3)
    assert got[0][0][0] == "D001943"
    if params.get("index") != "ivfpq":  # product quantisation moves scores visibly; the others barely
        assert [[c for c, _ in r] for r in got] == [[c for c, _ in r] for r in expected]
        for a, b in zip(got, expected):
            np.testing.assert_allclose([s for _, s in a], [s for _, s in b], atol=2e-3)
    linker.save(tmp_path / "idx")
    assert ranking(Linker.load(tmp_path / "idx", kb), MENTIONS, k=3) == got


def test_fp16_halves_the_stored_vectors(kb, flat, tmp_path):
    Linker.build(kb, config(fp16=True)).save(tmp_path / "half")
    flat.save(tmp_path / "full")
    half = (tmp_path / "half" / "generators" / "dense" / "faiss.index").stat().st_size
    full = (tmp_path / "full" / "generators" / "dense" / "faiss.index").stat().st_size
    vectors = len(flat.tables["kb"]) * flat.generators["dense"].encoder.dimension
    assert full - half == pytest.approx(vectors * 2, rel=0.05)


@pytest.mark.parametrize("params, message", [
    ({"nprobes": 3}, "unknown key 'nprobes'"),
    ({"index": "lsh"}, "'index' must be one of flat, hnsw, ivfpq, not 'lsh'"),
    ({"index": "hnsw", "hnsw_m": 0}, "'hnsw_m' must be an integer >= 2, not 0"),  # was a FAISS abort
    ({"index": "ivfpq", "nprobe": 0}, "'nprobe' must be an integer >= 1, not 0"),  # was an error at link time
    ({"bf16": "no"}, "'precision' must be one of auto, fp32, bf16, int8, not 'no'"),  # an old config's bf16, read as true once
    ({"precision": "fp16"}, "'precision' must be one of auto, fp32, bf16, int8, not 'fp16'"),
    ({"max_length": 0}, "'max_length' must be an integer >= 2 and <= 512, not 0"),
])
def test_bad_params_are_refused_before_loading_a_model(kb, params, message):
    assert set(dense.DEFAULTS) == set(DENSE_PARAMS)  # every param has a default and a check
    with pytest.raises(MedlinkError, match=re.escape(f"generators[0] (dense) params: {message}")):
        Linker.build(kb, config(**params))


def test_model_folder_without_weights_names_the_missing_file(kb, model_copy):
    (model_copy / "model.safetensors").unlink()
    with pytest.raises(MedlinkError, match=r"model\.safetensors"):
        Linker.build(kb, config(model=str(model_copy)))


@pytest.mark.parametrize("missing", ["torch", "transformers"])
def test_without_the_dense_extra_encoders_say_what_to_install(kb, monkeypatch, missing):
    from medlink.encoders.cross import CrossEncoder

    monkeypatch.setitem(sys.modules, missing, None)  # find_spec then reports the package as absent
    for make in (lambda: Linker.build(kb, config()), CrossEncoder):
        with pytest.raises(MedlinkError, match=rf"need {missing}: install medlink's dense extra \(in medlink's source folder: pip install '\.\[dense\]'"):
            make()


@pytest.mark.parametrize("damage", ["config without model_type", "truncated weights", "junk tokenizer"])
def test_broken_model_folder_is_a_clear_error_not_a_traceback(kb, model_copy, damage):
    if damage == "config without model_type":
        config_file = model_copy / "config.json"
        config_file.write_text(json.dumps({k: v for k, v in json.loads(config_file.read_text()).items() if k != "model_type"}))
        expected = "cannot load the (tokenizer|model)"
    elif damage == "truncated weights":
        weights = model_copy / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:1000])
        expected = "cannot load the model"
    else:
        (model_copy / "tokenizer.json").write_text("not a tokenizer")
        expected = "cannot load the tokenizer"
    with pytest.raises(MedlinkError, match=rf"{model_copy}.*{expected}.*Hugging Face transformer folder"):
        Linker.build(kb, config(model=str(model_copy)))


def test_a_file_given_as_model_folder_is_named_as_a_file(tmp_path):
    (tmp_path / "kb.sqlite").write_text("not a model")
    with pytest.raises(MedlinkError, match="kb.sqlite is a file; a model is a folder"):
        check_model_dir(tmp_path / "kb.sqlite")


def test_bpe_tokenizer_files_count_as_a_tokenizer_but_need_merges(model_copy):
    for name in ("tokenizer.json", "vocab.txt"):
        (model_copy / name).unlink(missing_ok=True)
    (model_copy / "vocab.json").write_text("{}")
    with pytest.raises(MedlinkError, match="merges.txt is missing"):
        check_model_dir(model_copy)
    (model_copy / "merges.txt").write_text("#version: 0.2\n")
    check_model_dir(model_copy)  # complete as far as files go


def test_changed_or_missing_model_is_refused_at_load(kb, model_copy, tmp_path):
    Linker.build(kb, config(model=str(model_copy))).save(tmp_path / "idx")
    Linker.load(tmp_path / "idx", kb)  # unchanged: fine
    weights = model_copy / "model.safetensors"
    with open(weights, "r+b") as handle:  # perturb tensor bytes near the end: same size, same shapes
        handle.seek(weights.stat().st_size - 64)
        data = handle.read(16)
        handle.seek(weights.stat().st_size - 64)
        handle.write(bytes(b ^ 0x55 for b in data))
    with pytest.raises(MedlinkError, match="weights changed"):
        Linker.load(tmp_path / "idx", kb)
    shutil.rmtree(model_copy)
    with pytest.raises(MedlinkError, match="rebuild") as error:
        Linker.load(tmp_path / "idx", kb)
    assert str(model_copy) in str(error.value)


def test_interrupted_encoding_resumes_and_finished_cache_is_reused(kb, monkeypatch, tmp_path):
    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(dense, "CHUNK_ROWS", 4)
    original = Encoder.encode
    calls: list[int] = []

    def interrupted(self, texts, *args, **kwargs):
        if calls:
            raise KeyboardInterrupt  # as if the user stopped the build during the second chunk
        calls.append(len(texts))
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Encoder, "encode", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Linker.build(kb, config())
    state = json.loads(next((tmp_path / "home" / "encode-cache").glob("*.json")).read_text())
    n = state["total"]
    assert calls == [4] and state["rows"] == 4 and n > 8

    def counting(self, texts, *args, **kwargs):
        calls.append(len(texts))
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Encoder, "encode", counting)
    calls.clear()
    resumed = Linker.build(kb, config())
    assert sum(calls) == n - 4 and calls[0] == 4  # only the rows after the checkpoint
    assert json.loads(next((tmp_path / "home" / "encode-cache").glob("*.json")).read_text())["rows"] == n

    calls.clear()
    state_file = next((tmp_path / "home" / "encode-cache").glob("*.json"))
    os.utime(state_file, (0, 0))
    again = Linker.build(kb, config(index="hnsw"))  # another index over the same names: nothing to encode
    assert calls == []
    assert state_file.stat().st_mtime > 0  # reuse counts as use: 'medlink cache clear --older-than' keeps it
    assert ranking(again, MENTIONS, k=3)[0][0][0] == "D001943"

    fresh = resumed.generators["dense"].encoder.encode(resumed.tables["kb"].keys)
    cached = dense.encode_cached(resumed.generators["dense"].encoder, resumed.tables["kb"].keys)
    np.testing.assert_allclose(cached, fresh, atol=2e-2)  # bf16: batch composition moves the last digits
    assert ranking(resumed, MENTIONS)[0][0][0] == "D001943"


def test_entity_text_embeds_types_and_definition(tmp_path):
    """text = name_types_definition (paper 002): each name is embedded with its concept's types and definition."""
    terms = Path(__file__).parent / "fixtures" / "custom" / "terms.jsonl"
    kb = KB.open(build_kb(tmp_path / "terms.sqlite", [f"jsonl:{terms}"], progress=False).path)
    described = Linker.build(kb, config(text="name_types_definition", max_length=64))
    plain = Linker.build(kb, config())
    generator = described.generators["dense"]
    texts = dense.row_texts(generator.table, generator.params, {0: (["disorder"], "Any disorder of the heart or blood vessels.")}, "[SEP]")
    row = generator.table.keys.index("cardiovascular disorder")
    assert texts[row] == "cardiovascular disorder [SEP] disorder [SEP] Any disorder of the heart or blood vessels."
    assert texts[generator.table.keys.index("heart attack")] == "heart attack"  # nothing known beyond the name: the name alone
    from medlink.text.concept_text import entity_text

    assert entity_text("shock", ["disorder"], None) == "shock [SEP] disorder"
    assert entity_text("shock", [], "Low blood flow.") == "shock [SEP]  [SEP] Low blood flow."
    # the same names, embedded with more text, give other vectors and (still) a sensible ranking
    mention = ["disorder of the heart or blood vessels"]
    assert described.link(mention, k=1)[0].candidates[0].concept_id == "C001"
    assert ranking(described, mention) != ranking(plain, mention)
    described.save(tmp_path / "idx")
    assert Linker.load(tmp_path / "idx").link(mention, k=1)[0].candidates[0].concept_id == "C001"


def test_entity_text_needs_the_kb_descriptions(kb):
    table = Linker.build(kb, config()).generators["dense"].table
    with pytest.raises(MedlinkError, match="types and definitions"):
        dense.DenseGenerator.build(table, [], text="name_types_definition")


def test_bf16_encoding_follows_the_training_weights():
    """encode() runs a bfloat16 copy of the weights: close to float32, and remade after the weights change."""
    import torch

    texts = ["myocardial infarction", "heart attack", "type 2 diabetes"]
    encoder, reference = Encoder(precision="bf16"), Encoder(precision="fp32")
    fast, exact = encoder.encode(texts), reference.encode(texts)
    assert np.all(np.sum(fast * exact, axis=1) > 0.999)
    with torch.no_grad():  # what an optimizer step does: in-place updates of the float32 weights
        encoder.model.embeddings.word_embeddings.weight.mul_(-1.0)
    changed = encoder.encode(texts)
    assert not np.allclose(changed, fast, atol=1e-3)
    encoder.precision = "fp32"  # the float32 weights themselves
    assert np.all(np.sum(changed * encoder.encode(texts), axis=1) > 0.999)


def test_cls_pooling_takes_the_first_token_s_state():
    import torch

    cls = Encoder(pooling="cls", precision="fp32")
    vectors = cls.encode(["heart attack", "chest pain"])
    with torch.no_grad():
        states = cls.model(**cls.tokenizer(["heart attack", "chest pain"], return_tensors="pt", padding=True)).last_hidden_state
    expected = torch.nn.functional.normalize(states[:, 0], dim=-1).numpy()
    assert np.allclose(vectors, expected, atol=1e-5)
    assert not np.allclose(vectors, Encoder(precision="fp32").encode(["heart attack", "chest pain"]), atol=1e-2)  # not mean pooling


def test_a_failed_save_leaves_the_previous_index_intact(kb, tmp_path, monkeypatch):
    linker = Linker.build(kb, config())
    target = linker.save(tmp_path / "index")
    before = (target / "manifest.json").read_bytes()

    def disk_full(self, directory):
        raise OSError("No space left on device")

    monkeypatch.setattr(dense.DenseGenerator, "save", disk_full)
    with pytest.raises(OSError, match="No space"):
        linker.save(target)
    assert (target / "manifest.json").read_bytes() == before and Linker.load(target).link(["colon cancer"], k=1)[0].candidates
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index"]  # no half-written temporary directory left behind


def test_knn_reranker_in_a_linker_votes_saves_and_needs_a_memory(kb, tmp_path):
    from medlink.linking.memory import memory_from_datasets
    from tests.conftest import FIXTURES

    knn = LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb+memory", "params": {}}],
                                  "reranker": {"type": "knn", "generator": "dense", "k": 4, "lambda_": 0.5, "beta1": 0.05, "beta2": 0.05}})
    with pytest.raises(MedlinkError, match="no mention memory was given.*--memory"):
        Linker.build(kb, knn)
    from medlink.linking.memory import MemoryEntries

    with pytest.raises(MedlinkError, match=r"no usable entry \(2 composite, 1 with no concept"):
        Linker.build(kb, knn, MemoryEntries(skipped_composite=2, skipped_unknown_concept=1))
    linker = Linker.build(kb, knn, memory_from_datasets(kb, [f"biosyn:{FIXTURES / 'eval' / 'biosyn_processed'}"]))
    best = linker.link(["acth deficiency"], k=3)[0].candidates[0]
    assert best.concept_id in ("201400", "C535668") and "knn" in best.scores_by_stage
    assert {"neighbour": "acth deficiency", "concept": best.concept_id, "similarity": 1.0} in best.evidence  # the training mention that voted
    linker.save(tmp_path / "knn-index")
    from medlink.linking.memory import read_memory

    saved = read_memory(tmp_path / "knn-index" / "memory.tsv")  # each mention's document kept, for folds by document
    assert saved.pairs == linker.memory.pairs and len(saved.documents) == len(saved.pairs) and "1:10021369" in saved.documents
    loaded = Linker.load(tmp_path / "knn-index")
    again = loaded.link(["acth deficiency"], k=3)[0].candidates
    assert [(c.concept_id, round(c.score, 5)) for c in again] == [(c.concept_id, round(c.score, 5)) for c in linker.link(["acth deficiency"], k=3)[0].candidates]


def test_two_dense_generators_fuse_save_and_load(kb, tmp_path):
    """An ensemble of bi-encoders is a config with several dense generators: each keeps its own index directory."""
    two = LinkerConfig.from_dict({"generators": [{"name": "first", "type": "dense", "names": "kb", "params": {}},
                                                 {"name": "second", "type": "dense", "names": "kb", "params": {"bf16": False}}],
                                  "fusion": {"method": "weighted", "weights": {"first": 1.0, "second": 0.5}}})
    linker = Linker.build(kb, two)
    before = linker.link(MENTIONS, k=3)
    assert all(set(c.scores_by_stage) == {"first", "second"} for c in before[0].candidates)
    linker.save(tmp_path / "ensemble")
    loaded = Linker.load(tmp_path / "ensemble")
    assert [[c.concept_id for c in r.candidates] for r in loaded.link(MENTIONS, k=3)] == [[c.concept_id for c in r.candidates] for r in before]
    assert loaded.generators["second"].encoder.precision == "fp32"  # an old config's "bf16": false


def test_pooling_comes_from_the_model_folder_unless_a_config_says_otherwise(model_copy):
    assert Encoder(model_copy).pooling == "mean"  # the packaged MiniLM's 1_Pooling: mean tokens
    (model_copy / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}))
    assert Encoder(model_copy).pooling == "cls"  # a CLS-trained model (SapBERT-style) is read as it was trained
    (model_copy / "medlink_encoder.json").write_text(json.dumps({"pooling": "mean", "max_length": 32}))
    assert Encoder(model_copy).pooling == "mean"  # what medlink trained it with comes first
    assert Encoder(model_copy, pooling="cls").pooling == "cls"  # an explicit choice wins


@pytest.mark.parametrize("files, message", [
    ({"1_Pooling/config.json": {"pooling_mode_max_tokens": True}}, "pooling max_tokens is not one medlink has"),
    ({"medlink_encoder.json": {"pooling": "max"}}, "'pooling' must be one of mean, cls, not 'max'"),
])
def test_a_pooling_medlink_does_not_have_is_refused_not_replaced(model_copy, files, message):
    for name, content in files.items():
        (model_copy / name).write_text(json.dumps(content))
    with pytest.raises(MedlinkError, match=re.escape(message)):
        Encoder(model_copy)


def test_names_encoded_before_are_reused_by_a_table_with_more_names(kb, monkeypatch, tmp_path):
    """Adding a mention memory to an index encodes only the names the memory adds (the cache matches names, not tables)."""
    from medlink.linking.memory import MemoryEntries

    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path / "home"))
    original = Encoder.encode
    encoded: list[str] = []

    def counting(self, texts, *args, **kwargs):
        encoded.extend(texts)
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Encoder, "encode", counting)
    plain = Linker.build(kb, config())
    names = list(plain.tables["kb"].keys)
    assert sorted(encoded) == sorted(names)
    encoded.clear()
    memory = MemoryEntries([("bowel cancer", "D015179"), ("Breast Cancer", "D001943")])
    with_memory = Linker.build(kb, LinkerConfig.from_dict({**config().to_dict(), "generators": [
        {**config().to_dict()["generators"][0], "names": "kb+memory"}]}), memory)
    assert encoded == ["bowel cancer"]  # "breast cancer" is a KB name already: nothing else encoded
    table = with_memory.tables["kb+memory"]
    fresh = with_memory.generators["dense"].encoder.encode(table.keys)
    np.testing.assert_allclose(dense.encode_cached(with_memory.generators["dense"].encoder, table.keys), fresh, atol=2e-2)
    assert with_memory.link(["bowel cancer"], k=1)[0].candidates[0].concept_id == "D015179"


def test_strip_encodes_each_condition_once_and_keeps_the_qualified_names_apart(monkeypatch, tmp_path):
    """'strip' (default-dense: ICD-10-CM's episode of care) encodes names that differ only in it once, under one vector;
    the lexical stages still tell the episodes apart, and a bad expression is refused naming the knob."""
    from medlink.linking.config import EPISODE_OF_CARE, default_dense_config

    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path / "home"))
    terms = tmp_path / "icd.jsonl"
    terms.write_text("\n".join(json.dumps(row) for row in [
        {"id": "S72.0", "name": "Fracture of neck of femur"},
        {"id": "S72.0A", "name": "Fracture of neck of femur, initial encounter for closed fracture"},
        {"id": "S72.0D", "name": "Fracture of neck of femur, subsequent encounter for fracture with routine healing"},
        {"id": "S72.0S", "name": "Fracture of neck of femur, sequela"},
        {"id": "B90", "name": "Sequela of tuberculosis"},
        {"id": "I21", "name": "Heart attack"},
    ]) + "\n")
    kb = KB.open(build_kb(tmp_path / "icd.sqlite", [f"jsonl:{terms}"], progress=False).path)
    original, encoded = Encoder.encode, []

    def counting(self, texts, *args, **kwargs):
        encoded.extend(texts)
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Encoder, "encode", counting)
    linker = Linker.build(kb, config(strip=EPISODE_OF_CARE))
    assert sorted(encoded) == ["fracture of neck of femur", "heart attack", "sequela of tuberculosis"]
    generator, keys = linker.generators["dense"], linker.tables["kb"].keys
    vectors = generator.name_vectors(np.arange(len(keys)))
    base = vectors[keys.index("fracture of neck of femur")]
    for key in keys:
        if key.startswith("fracture of neck of femur"):
            np.testing.assert_array_equal(vectors[keys.index(key)], base)
    linker.save(tmp_path / "idx")
    assert ranking(Linker.load(tmp_path / "idx", kb), ["hip fracture"]) == ranking(linker, ["hip fracture"])
    described = dense.row_texts(generator.table, {**generator.params, "text": "name_types_definition"}, {}, "[SEP]")
    assert described[keys.index("fracture of neck of femur sequela")] == "fracture of neck of femur"  # stripped before the entity text
    fused = Linker.build(kb, default_dense_config())
    assert fused.config.generators[-1].params["strip"] == EPISODE_OF_CARE
    assert fused.link(["fracture of neck of femur, sequela"], k=1)[0].candidates[0].concept_id == "S72.0S"
    with pytest.raises(MedlinkError, match=r"'strip' must be a regular expression \(Python's re\) \(or null\), not '\(unclosed'"):
        config(strip="(unclosed")  # refused as the config is read, before anything is built


def test_a_batch_of_queries_finds_what_each_query_alone_finds():
    """A batch large enough for FAISS's BLAS path (``vector_index.BLAS_WORK_PER_THREAD``) finds the neighbours and
    scores its query-by-query scan finds."""
    import faiss

    from medlink.retrieval.vector_index import BLAS_WORK_PER_THREAD, flat_index, use_threads

    rng = np.random.default_rng(4)
    names = rng.standard_normal((3000, 48)).astype(np.float32)
    names /= np.linalg.norm(names, axis=1, keepdims=True)
    index = flat_index(names)
    use_threads(2)
    assert faiss.cvar.distance_compute_blas_threshold == 2 * BLAS_WORK_PER_THREAD
    n = 2 * 2 * BLAS_WORK_PER_THREAD // 48  # twice the batch at which BLAS takes over
    queries = names[rng.choice(len(names), n, replace=False)] + 0.1 * rng.standard_normal((n, 48)).astype(np.float32)
    scores, rows = index.search(queries, 10)
    alone = [index.search(queries[i:i + 1], 10) for i in range(n)]
    assert (rows == np.vstack([r for _s, r in alone])).all()
    assert np.allclose(scores, np.vstack([s for s, _r in alone]), atol=1e-5)


def test_threads_encoding_at_once_get_what_one_at_a_time_gets():
    from concurrent.futures import ThreadPoolExecutor

    encoder = Encoder(precision="fp32")
    texts = [["heart attack", "chest pain"], ["renal cyst"], ["kidney stone", "gout", "fever of unknown origin"]] * 4
    alone = [encoder.encode(batch) for batch in texts]
    with ThreadPoolExecutor(max_workers=8) as pool:  # as a service's request threads call it
        together = list(pool.map(encoder.encode, texts))
    assert all(np.allclose(a, b, atol=1e-6) for a, b in zip(alone, together)) and not encoder.model.training
