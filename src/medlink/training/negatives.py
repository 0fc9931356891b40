"""Dynamic hard negatives (Lin et al. 2023): the current model's top wrong concepts from the whole KB.

Refreshed once per epoch: encode every KB name with the model being trained, search each
anchor's nearest names with FAISS, and keep the first ``p`` distinct concepts other than the
gold one, each represented by its nearest name.
"""

from __future__ import annotations

import numpy as np

from medlink.encoders.transformer import ENCODE_BATCH, Encoder
from medlink.errors import MedlinkError
from medlink.retrieval.vector_index import flat_index
from medlink.training.examples import ConceptNames, Example


class NameIndex:
    """All KB names embedded by one state of the model, searchable by inner product."""

    def __init__(self, encoder: Encoder, names: ConceptNames, batch_size: int = ENCODE_BATCH, progress: bool = True):
        self.texts, self.ids = names.flat()
        self.index = flat_index(encoder.encode(self.texts, batch_size=batch_size, progress=progress))

    def search(self, vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return self.index.search(vectors, k)

    def top_concepts(self, vectors: np.ndarray, k: int) -> list[list[str]]:
        """The first ``k`` distinct concepts per query (dev accuracy, candidate lists)."""
        _, rows = self.search(vectors, max(4 * k, k + 16))
        out = []
        for row in rows:
            seen: list[str] = []
            for r in row:
                if r >= 0 and self.ids[r] not in seen:
                    seen.append(self.ids[r])
                    if len(seen) == k:
                        break
            out.append(seen)
        return out


def hard_negatives(
    encoder: Encoder, index: NameIndex, examples: list[Example], p: int, batch_size: int = ENCODE_BATCH
) -> list[list[tuple[str, str]]]:
    """For each example, ``p`` (name, concept) hard negatives: nearest names of concepts other than the gold one."""
    vectors = encoder.encode([e.anchor for e in examples], batch_size=batch_size)
    _, rows = index.search(vectors, 4 * p + 16)
    rng = np.random.default_rng(len(examples))  # padding draws: deterministic, and a fresh draw each time
    out = []
    for example, row in zip(examples, rows):
        chosen: list[tuple[str, str]] = []
        gold = {example.positive_id, example.anchor_id}
        used = set(gold)
        for r in row:
            if r < 0:
                continue
            concept = index.ids[r]
            if concept not in used:
                used.add(concept)
                chosen.append((index.texts[r], concept))
                if len(chosen) == p:
                    break
        if len(chosen) < p:  # the nearest names were nearly all the gold concept's (or the KB is tiny): pad with random others
            others = [r for r in range(len(index.ids)) if index.ids[r] not in gold]
            if not others:
                raise MedlinkError("hard negatives need a KB with at least two concepts")
            fresh = [r for r in others if index.ids[r] not in used] or others
            missing = p - len(chosen)
            picks = rng.choice(fresh, missing, replace=len(fresh) < missing)
            chosen.extend((index.texts[r], index.ids[r]) for r in picks.tolist())
        out.append(chosen)
    return out


def dev_pool(names: ConceptNames, dev: list[tuple[str, str]], per_mention: int) -> ConceptNames:
    """The concepts per-epoch dev accuracy is judged among: each dev mention's gold concept and its ``per_mention`` nearest
    concepts by character n-gram TF-IDF, chosen once before training. Why: re-encoding every KB name after every epoch
    is most of an epoch on a CPU without bf16 (MEDIC: 72k names); the pool keeps the close calls that decide Acc@1."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts, ids = names.flat()
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, lowercase=False, dtype=np.float32)
    matrix = vectorizer.fit_transform(texts)
    scores = (vectorizer.transform([text for text, _ in dev]) @ matrix.T).tocsr()
    keep = {gold for _, gold in dev if gold in names.names}
    for row in range(scores.shape[0]):
        start, end = scores.indptr[row], scores.indptr[row + 1]
        order = scores.indices[start:end][np.argsort(-scores.data[start:end], kind="stable")]
        found: list[str] = []
        for name_row in order:
            if ids[name_row] not in found:
                found.append(ids[name_row])
                if len(found) == per_mention:
                    break
        keep.update(found)
    return ConceptNames({concept: names.names[concept] for concept in names.names if concept in keep})
