"""BIO tagging between character spans and sub-word tokens: what the tagger's training and its finder share.

Why word-level labels: a sentence is tokenised once with the fast tokenizer's offset mapping; the
first sub-token of each word (the tokenizer's pre-tokenised words: for BERT, split at white space
and punctuation) carries the word's B-/I-/O label and the word's other sub-tokens carry -100 (no
loss). So the loss is not dominated by long rare words split into many pieces (disease names
often are: MiniLM reads "pilomatricomas" as six), the model never has to agree with itself inside a
word, and decoding reads one prediction per word: a span found always starts and ends at word edges,
as NCBI Disease's gold spans do (all but a few annotation slips among the training spans, such as
"autosomal dominant disorde"). Spans come back as offsets into the original text
(non-ASCII included: the offsets are the tokenizer's, into the same Python string).
A window holds as many whole consecutive sentences as fit (``pack``); a sentence longer than a window is
read in overlapping windows, each token's prediction taken from the window where it has the most
context on both sides (``windows``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

IGNORE = -100  # the label that cross-entropy skips (torch's ignore_index)
OUTSIDE = "O"
SINGLE_TYPE = "Disease"  # the one type when mention types are collapsed
_EDGE_PUNCTUATION = set(".,;:!?/\\|\"'`“”‘’«»*•·")
_LEADING_ONLY = set("-–—")  # a trailing hyphen is part of some names ("G6PD A-"); a leading one is not
_CLOSERS = {")": "(", "]": "[", "}": "{"}
_OPENERS = {v: k for k, v in _CLOSERS.items()}


@dataclass(frozen=True)
class Span:
    """A typed character span [start, end) of a text."""

    start: int
    end: int
    type: str


@dataclass
class TokenizedSentence:
    """A sentence's sub-tokens: ids, character offsets into the whole text, and which token starts a word.

    ``word_end[i]`` is, for a word's first token ``i``, the end offset of that word's last token (else -1).
    """

    ids: list[int]
    offsets: list[tuple[int, int]]
    word_end: list[int]

    def first_tokens(self) -> Iterable[int]:
        return (i for i, end in enumerate(self.word_end) if end >= 0)


def special_template(tokenizer) -> tuple[list[int], list[int]]:
    """The special tokens a single sequence gets before and after its text ([CLS] / [SEP] for BERT, <s> / </s> for
    RoBERTa), learnt from encoding one probe word: windows are cut from token ids and wrapped without re-tokenising."""
    probe = tokenizer("a", add_special_tokens=True, return_special_tokens_mask=True)
    ids, special = probe["input_ids"], probe["special_tokens_mask"]
    if 0 not in special:
        raise ValueError("the tokenizer gave no text token for a probe word")
    first = special.index(0)
    last = len(special) - special[::-1].index(0)
    return list(ids[:first]), list(ids[last:])


def labels_for(types: Iterable[str]) -> list[str]:
    """The label list of a tagger over ``types``: O first, then B-/I- per type (sorted, so the list is reproducible)."""
    labels = [OUTSIDE]
    for kind in sorted(set(types)):
        labels += [f"B-{kind}", f"I-{kind}"]
    return labels


def tokenize_sentences(tokenizer, text: str, spans: Sequence[tuple[int, int]]) -> list[TokenizedSentence]:
    """Tokenise ``text[start:end]`` for every sentence span in one tokenizer call (a fast tokenizer: offsets and words)."""
    if not spans:
        return []
    encoded = tokenizer(
        [text[start:end] for start, end in spans],
        add_special_tokens=False,
        return_offsets_mapping=True,
        return_attention_mask=False,
        return_token_type_ids=False,
    )
    sentences = []
    for row, (start, _end) in enumerate(spans):
        offsets = [(start + a, start + b) for a, b in encoded["offset_mapping"][row]]
        words = encoded.word_ids(row)
        word_end = [-1] * len(words)
        first = -1
        for i, word in enumerate(words):
            if word is None:  # a token of no word: its own one-token word
                first = i
                word_end[i] = offsets[i][1]
            elif i == 0 or word != words[i - 1]:
                first = i
                word_end[i] = offsets[i][1]
            else:
                word_end[first] = max(word_end[first], offsets[i][1])
        sentences.append(TokenizedSentence(list(encoded["input_ids"][row]), offsets, word_end))
    return sentences


def encode_labels(sentence: TokenizedSentence, spans: Sequence[Span], label_ids: dict[str, int]) -> list[int]:
    """Per token: the label id of its word (B- on a span's first word, I- on the others, O outside), or ``IGNORE``
    on a word's later sub-tokens. ``spans`` must not overlap (``resolve_overlaps`` keeps the longest)."""
    labels = [IGNORE] * len(sentence.ids)
    ordered = sorted(spans, key=lambda s: s.start)
    at, outside = 0, label_ids[OUTSIDE]
    previous: Span | None = None
    for i in sentence.first_tokens():
        word_start, word_end = sentence.offsets[i][0], sentence.word_end[i]
        while at < len(ordered) and ordered[at].end <= word_start:
            at += 1
        span = ordered[at] if at < len(ordered) and ordered[at].start < word_end else None
        if span is None:
            labels[i] = outside
        else:
            labels[i] = label_ids[f"{'I' if span is previous else 'B'}-{span.type}"]
        previous = span
    return labels


def follows(labels: Sequence[str]) -> np.ndarray:
    """``allowed[previous, next]``: an I- label may follow only the B- or I- label of its own type; every other
    label may follow any label. The first word of a sentence follows O."""
    allowed = np.ones((len(labels), len(labels)), dtype=bool)
    for j, label in enumerate(labels):
        tag, _, kind = label.partition("-")
        if tag == "I":
            allowed[:, j] = [previous in (f"B-{kind}", f"I-{kind}") for previous in labels]
    return allowed


def constrained_labels(probabilities: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """The most probable label sequence of one sentence's words (rows: each word's label probabilities) among those
    where no I- follows O or another type (Viterbi over log probabilities).

    Why not each word's argmax: the argmax reads every word alone, so a word it finds 70% "inside" after an "outside"
    one starts a span that the model itself rates unlikely as a whole (the decoder has to repair it into B-), and a
    B- whose right edge wavers ends the span early; choosing the best whole sequence settles both by the model's own
    numbers (a better NCBI dev strict-span F1: docs/benchmark-history.md, the tagger's Viterbi decoding)."""
    if not len(probabilities):
        return np.zeros(0, dtype=np.int64)
    allowed = follows(labels)
    log_p = np.log(np.clip(probabilities.astype(np.float64), 1e-12, 1.0))
    penalty = np.where(allowed, 0.0, -np.inf)
    score = log_p[0] + penalty[0]  # the sentence starts after an O (labels[0])
    back = np.zeros((len(log_p), len(labels)), dtype=np.int64)
    for t in range(1, len(log_p)):
        step = score[:, None] + penalty
        back[t] = step.argmax(0)
        score = step.max(0) + log_p[t]
    path = np.zeros(len(log_p), dtype=np.int64)
    path[-1] = int(score.argmax())
    for t in range(len(log_p) - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def decode_labels(sentence: TokenizedSentence, predicted: Sequence[int], labels: Sequence[str], text: str) -> list[Span]:
    """Spans from per-token label ids (only words' first tokens are read). An I- without a B- (or after another
    type) starts a span; span edges are trimmed of white space and stray punctuation."""
    spans: list[Span] = []
    current: list | None = None  # [start, end, type]
    for i in sentence.first_tokens():
        label = labels[predicted[i]]
        tag, _, kind = label.partition("-")
        if tag == "I" and current is not None and current[2] == kind:
            current[1] = sentence.word_end[i]
            continue
        if current is not None:
            spans.append(Span(*current))
            current = None
        if tag in ("B", "I"):
            current = [sentence.offsets[i][0], sentence.word_end[i], kind]
    if current is not None:
        spans.append(Span(*current))
    trimmed = (trim_span(text, span) for span in spans)
    return [span for span in trimmed if span is not None]


def trim_span(text: str, span: Span) -> Span | None:
    """``span`` without white space or punctuation at its edges (a bracket only when unbalanced inside the span);
    None if nothing is left."""
    start, end = span.start, span.end
    while start < end:
        if text[start].isspace() or text[start] in _EDGE_PUNCTUATION or text[start] in _LEADING_ONLY:
            start += 1
        elif text[start] in _CLOSERS or (text[start] in _OPENERS and _OPENERS[text[start]] not in text[start:end]):
            start += 1
        elif text[end - 1].isspace() or text[end - 1] in _EDGE_PUNCTUATION:
            end -= 1
        elif text[end - 1] in _OPENERS or (text[end - 1] in _CLOSERS and _CLOSERS[text[end - 1]] not in text[start:end]):
            end -= 1
        else:
            break
    return Span(start, end, span.type) if start < end else None


def windows(length: int, body: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """(start, end, owned_start, owned_end) token ranges covering ``length`` tokens in windows of at most ``body``.

    Consecutive windows share ``overlap`` tokens; the owned ranges tile ``[0, length)`` exactly, each in the
    middle of its window (about ``overlap / 2`` tokens of context on each side), so every prediction is read
    from one window and a long sentence costs ``length / (body - overlap)`` windows: linear, never quadratic.
    """
    if length <= body:
        return [(0, length, 0, length)]
    overlap = max(0, min(overlap, body - 1))
    step, half = body - overlap, overlap // 2
    starts = list(range(0, length - body, step)) + [length - body]
    result = []
    for k, start in enumerate(starts):
        owned_start = 0 if k == 0 else result[-1][3]
        owned_end = length if k == len(starts) - 1 else min(start + body - (overlap - half), starts[k + 1] + half)
        result.append((start, start + body, owned_start, max(owned_start, owned_end)))
    return result


def pack(lengths: Sequence[int], body: int, overlap: int) -> list[tuple[int, int, int, int]]:
    """Windows over consecutive sentences laid end to end (``lengths``: their sizes in sub-tokens), as
    (start, end, owned_start, owned_end) positions in that stream; the owned ranges tile it exactly.

    A window holds as many whole consecutive sentences as fit in ``body``; a sentence longer than that is read
    alone in overlapping ``windows``. Why pack: an abstract's sentences (5 to 120 sub-tokens) padded to their
    longest waste much of every batch, and a neighbouring sentence is useful context (an abbreviation
    defined one sentence earlier). A window is cut only at a sentence boundary, so a mention is never split.
    """
    result: list[tuple[int, int, int, int]] = []
    at, i = 0, 0
    while i < len(lengths):
        if lengths[i] > body:
            result += [(at + a, at + b, at + c, at + d) for a, b, c, d in windows(lengths[i], body, overlap)]
            at += lengths[i]
            i += 1
            continue
        start = at
        while i < len(lengths) and lengths[i] <= body and at + lengths[i] - start <= body:
            at += lengths[i]
            i += 1
        if at > start:
            result.append((start, at, start, at))
    return result
