"""From candidates to a ranked, scored list per source concept, with a confidence a user can threshold.

Without a trained aligner the ranking is the lexical fusion and the confidence is the best alias's character n-gram
TF-IDF cosine (clipped to [0, 1]), an absolute string similarity rather than the fused score, which is relative to each
query's best; a candidate whose names carry an identifying word the source's do not (a number, a letter, a side:
``align.identifiers``) counts half, in its fused score (its rank) and its confidence. With a trained aligner
(``medlink train aligner``) every candidate is ranked by a logistic calibration fitted on known mappings over its
lexical evidence (fused score, TF-IDF cosine, BM25 relative to the query's best, its fused rank), where it sits in the
target's hierarchy (depth, children: a terminology's mappings favour some levels, as DO's xrefs favour ICD-10-CM
categories over their subcodes), whether only an ancestor step brought it in, and, when the aligner has a
cross-encoder, its logit for the first ``depth`` candidates: the confidence is then a probability that the mapping is
right, and the same number orders the list. The calibration is a logistic regression or, where the evidence interacts
(a weak string match that the bi-encoder and the hierarchy level vouch for), gradient-boosted trees
(``medlink.boosted_trees``): ``--calibration auto`` fits both and keeps the one that ranks better on mappings its fit
did not see (``calibration_core``: the out-of-fold fit and the threshold search linking uses too).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from medlink.align import substitutions as word_substitutions
from medlink.align.candidates import CandidateSet, SourceQueries
from medlink.align.evidence import FEATURES, LEXICAL_FEATURES, features, identifiers_differ
from medlink.align.evidence import cross_logits as cross_logits  # benchmarks/align/cross_alone.py imports it from here
from medlink.align.identifiers import MISMATCH_FACTOR
from medlink.boosted_trees import BoostedTrees
from medlink.calibration_core import calibration_summary, choose_variant, out_of_fold, shuffled_folds
from medlink.errors import MedlinkError

ALIGNER_FILE = "medlink_aligner.json"
ALIGNER_KIND = "medlink aligner"  # the file's signature
MIN_THRESHOLD_SOURCES = 20  # held-out sources needed to choose the confidence threshold; with fewer it is DEFAULT_THRESHOLD
DEFAULT_THRESHOLD = 0.5  # the confidence is a probability: keep a mapping more likely right than wrong
MODELS = ("logistic", "trees")  # what maps the evidence to a probability
CHOICES = (*MODELS, "auto")  # auto: the model with the better out-of-fold top-1 accuracy on the fitting mappings
CHOICE_FOLDS = 3


@dataclass
class Calibration:
    """confidence = sigmoid(log-odds): ``bias + sum of weight x feature`` (logistic) or the boosted ``trees`` over
    ``features`` in that order; ``threshold``: the confidence chosen on dev (mapping F1)."""

    weights: dict[str, float]  # logistic coefficients (empty with trees)
    bias: float = 0.0
    threshold: float = 0.5
    depth: int = 16  # candidates per source the cross-encoder reads
    fitted_on: dict = field(default_factory=dict)
    bi_encoder: str | None = None  # the bi-encoder behind the "dense" feature: "packaged" or a model folder (align.dense)
    dense_candidates: bool = False  # the bi-encoder also proposes candidates (a third generator beside BM25 and TF-IDF)
    dense_strip: str | None = None  # the qualifier (a regex) the bi-encoder leaves out of target names (align.dense)
    model: str = "logistic"  # MODELS
    features: list[str] = field(default_factory=list)  # the trees' inputs, in column order
    trees: dict | None = None  # BoostedTrees.to_dict()
    substitutions: dict[str, str] = field(default_factory=dict)  # source word -> target phrase, learned (align.substitutions)

    def queries(self, queries: SourceQueries, normalize) -> SourceQueries:
        """The source queries as this aligner was trained to read them: with its substitutions' twins (``normalize``:
        the target's normaliser, which made the queries' keys; hand-edited entries are read through it)."""
        return word_substitutions.expand(queries, self.substitutions, normalize)

    def inputs(self) -> tuple[str, ...]:
        """The evidence this calibration reads."""
        return tuple(self.features) if self.model == "trees" else tuple(self.weights)

    def log_odds(self, features: dict[str, np.ndarray]) -> np.ndarray:
        if self.model == "trees":
            if getattr(self, "_trees", None) is None:
                self._trees = BoostedTrees.from_dict(self.trees or {}, len(self.features), "aligner calibration")
            return self._trees.log_odds(np.column_stack([features[name] for name in self.features]))
        total = np.full(len(next(iter(features.values()))), self.bias, dtype=np.float64)
        for name, weight in self.weights.items():
            total += weight * features[name]
        return total

    def save(self, directory: Path) -> None:
        from medlink.directories import write_atomic

        write_atomic(Path(directory) / ALIGNER_FILE, json.dumps({"kind": ALIGNER_KIND, **asdict(self)}, indent=2))  # fields only

    @classmethod
    def load(cls, directory: Path) -> Calibration:
        path = Path(directory) / ALIGNER_FILE
        if Path(directory).is_file() and Path(directory).name == ALIGNER_FILE:
            raise MedlinkError(f"{directory}: give the aligner's folder ({Path(directory).parent}), not its {ALIGNER_FILE}")
        if not path.is_file():
            raise MedlinkError(
                f"{directory}: not an aligner folder (no {ALIGNER_FILE}); give the folder 'medlink train aligner' wrote with --out"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.pop("kind", None) != ALIGNER_KIND:
                raise ValueError(f'"kind" is not "{ALIGNER_KIND}"')
            known = {f.name for f in fields(cls)}
            if set(data) - known or "weights" not in data:
                raise ValueError(
                    ", ".join(
                        [
                            *(f'unknown field "{name}"' for name in sorted(set(data) - known)),
                            *(['no "weights" field'] if "weights" not in data else []),
                        ]
                    )
                )
            calibration = cls(**data)
            calibration.check()
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as error:
            raise MedlinkError(
                f"{path}: not an aligner 'medlink train aligner' wrote, or damaged ({error}); fix the file, or train it again with --out"
            ) from None
        if calibration.model == "trees":
            BoostedTrees.from_dict(calibration.trees or {}, len(calibration.features), str(path))
        if calibration.bi_encoder not in (None, "packaged"):
            from medlink.encoders.transformer import check_model_dir

            try:
                check_model_dir(Path(calibration.bi_encoder))
            except MedlinkError as error:
                raise MedlinkError(
                    f"{path}: its bi-encoder cannot be used ({error}); restore that folder or train the aligner again"
                ) from None
        return calibration

    def check(self) -> None:
        """Refuse numbers no training writes (ValueError, worded for the file's reader)."""
        known = {*FEATURES, "dense"}
        if self.model not in MODELS:
            raise ValueError(f'"model" {self.model!r} is not one of {", ".join(MODELS)}')
        if self.model == "trees" and (not self.features or set(self.features) - known or len(set(self.features)) != len(self.features)):
            raise ValueError(f'"features" {self.features} must name known evidence ({", ".join(sorted(known))}), each once')
        if self.model == "logistic" and (
            not self.weights
            or set(self.weights) - known
            or not all(isinstance(w, (int, float)) and math.isfinite(w) for w in self.weights.values())
        ):
            raise ValueError(f'"weights" {self.weights} must give a finite number for known evidence ({", ".join(sorted(known))})')
        for name, value, low, high in (("threshold", self.threshold, 0, 1), ("bias", self.bias, -math.inf, math.inf)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high or math.isnan(value):
                raise ValueError(f'"{name}" {value!r} must be a number' + (f" in [{low}, {high}]" if high != math.inf else ""))
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 1:
            raise ValueError(f'"depth" {self.depth!r} must be a whole number of at least 1')
        if self.dense_strip is not None:
            if not isinstance(self.dense_strip, str):
                raise ValueError(f'"dense_strip" {self.dense_strip!r} must be a regular expression (a string) or null')
            try:
                re.compile(self.dense_strip)
            except re.error as error:
                raise ValueError(f'"dense_strip" {self.dense_strip!r} is not a regular expression ({error})') from None
        word_substitutions.check(self.substitutions)


@dataclass
class Ranking:
    """Per source concept (CSR ``indptr``): target positions best first, their ranking score and confidence in [0, 1]."""

    candidates: CandidateSet
    indptr: np.ndarray
    targets: np.ndarray
    scores: np.ndarray
    confidence: np.ndarray
    method: str  # "lexical", "calibrated", "calibrated + bi-encoder" or "cross-encoder"

    def row(self, i: int) -> slice:
        return slice(int(self.indptr[i]), int(self.indptr[i + 1]))

    def ranked_ids(self) -> dict[str, list[str]]:
        ids, sources = self.candidates.target.concept_ids, self.candidates.queries.concept_ids
        return {s: [ids[t] for t in self.targets[self.row(i)]] for i, s in enumerate(sources)}

    def top(self) -> dict[str, tuple[str, float]]:
        """Each source's best target and its confidence (sources without candidates left out)."""
        ids, sources = self.candidates.target.concept_ids, self.candidates.queries.concept_ids
        return {
            s: (ids[int(self.targets[self.indptr[i]])], float(self.confidence[self.indptr[i]]))
            for i, s in enumerate(sources)
            if self.indptr[i] < self.indptr[i + 1]
        }


def is_aligner_folder(path: Path) -> bool:
    """Whether ``path`` is a folder holding an aligner file medlink wrote (its signature, not only its name)."""
    try:
        return json.loads((Path(path) / ALIGNER_FILE).read_text(encoding="utf-8")).get("kind") == ALIGNER_KIND
    except (OSError, ValueError, AttributeError):
        return False


def running_minimum(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Each source's confidences capped by the one ranked above (CSR rows): a string similarity ranks by the fused
    score, so a lower candidate could claim more certainty than the first ("Type 1 diabetes mellitus" at 0.91 under
    the first at 0.71), and a user keeping confidence >= 0.8 would keep a runner-up over its first."""
    out = values.astype(np.float64, copy=True)
    for start, end in zip(indptr[:-1].tolist(), indptr[1:].tolist()):
        out[start:end] = np.minimum.accumulate(out[start:end])
    return out


def rank(
    candidates: CandidateSet, calibration: Calibration | None = None, cross: np.ndarray | None = None, dense: np.ndarray | None = None
) -> Ranking:
    """Order each source's candidates and give each a confidence (module docstring: lexical, or calibrated)."""
    hits = candidates.hits
    query = hits.query_index()
    feats = features(candidates, cross, dense)
    if calibration is None:  # string evidence alone: a candidate naming what the source does not counts half, in rank and confidence
        factor = np.where(identifiers_differ(candidates), MISMATCH_FACTOR, 1.0)
        scores, confidence = factor * hits.scores, factor * feats["tfidf"]
        order = np.lexsort((-scores, query))
        return Ranking(
            candidates,
            hits.indptr.copy(),
            hits.concepts[order].astype(np.int64),
            scores[order].astype(np.float64),
            running_minimum(confidence[order], hits.indptr),
            "lexical",
        )
    inputs = calibration.inputs()
    if "dense" in inputs and dense is None:
        raise MedlinkError(
            f"this aligner's calibration weighs a bi-encoder's similarities ({calibration.bi_encoder}): compute them "
            "(align.dense.bi_encoder_similarity)"
        )
    read = np.ones(len(query), bool)
    if "cross" in inputs:
        if cross is None:
            raise MedlinkError("this aligner's calibration weighs a cross-encoder's scores: load its model (aligner.load_aligner)")
        read = ~np.isnan(feats["cross"])
        # candidates the cross-encoder did not read rank below those it read, as if they scored its query's lowest logit
        lowest = np.full(hits.n_queries, 0.0)
        if read.any():
            np.minimum.at(lowest, query[read], feats["cross"][read])
        feats["cross"] = np.where(read, feats["cross"], lowest[query])
    z = calibration.log_odds(feats)
    order = np.lexsort((-z, ~read, query))
    confidence = 1.0 / (1.0 + np.exp(-z))
    method = "cross-encoder" if "cross" in inputs else "calibrated + bi-encoder" if "dense" in inputs else "calibrated"
    return Ranking(candidates, hits.indptr.copy(), hits.concepts[order].astype(np.int64), z[order], confidence[order], method)


def _fitted(model: str, matrix: np.ndarray, labels: np.ndarray, names: list[str], depth: int) -> Calibration:
    """A calibration of kind ``model`` fitted on candidate rows (``names``: the matrix's columns); threshold not chosen."""
    if model == "trees":
        trees = BoostedTrees.fit(matrix, labels)
        return Calibration({}, 0.0, 0.5, depth, model=model, features=names, trees=trees.to_dict())
    from sklearn.linear_model import LogisticRegression

    fitted = LogisticRegression(C=1.0, max_iter=2000).fit(matrix, labels)
    return Calibration(dict(zip(names, map(float, fitted.coef_[0]))), float(fitted.intercept_[0]), 0.5, depth)


def _fitter(model: str, names: list[str]) -> Callable[[np.ndarray, np.ndarray], Callable[[np.ndarray], np.ndarray]]:
    """``calibration_core.out_of_fold``'s ``fit``: a ``model`` calibration fitted on rows, predicting rows' log-odds."""

    def fit(matrix: np.ndarray, labels: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
        fitted = _fitted(model, matrix, labels, names, 0)
        return lambda rows: fitted.log_odds({name: rows[:, j] for j, name in enumerate(names)})

    return fit


def top1_share(scores: np.ndarray, labels: np.ndarray, source: np.ndarray) -> float:
    """The share of sources whose best-scored candidate row is right."""
    order = np.lexsort((-scores, source))
    first = np.ones(len(order), bool)
    first[1:] = source[order][1:] != source[order][:-1]
    return float(labels[order][first].mean()) if len(order) else 0.0


def out_of_fold_top1(
    model: str, matrix: np.ndarray, labels: np.ndarray, source: np.ndarray, names: list[str], folds: int = CHOICE_FOLDS, seed: int = 0
) -> float:
    """The share of sources whose best-scored candidate is right, each scored by a ``model`` fitted on the other
    sources' folds (sources split at random, seeded)."""
    fold = shuffled_folds(source, folds, seed)
    return top1_share(out_of_fold(_fitter(model, names), matrix, labels, fold, skip_one_class=True, fill=-np.inf), labels, source)


def fit_calibration(
    candidates: CandidateSet,
    cross: np.ndarray | None,
    gold: dict[str, set[str]],
    depth: int,
    threshold_gold: dict[str, set[str]] | None = None,
    dense: np.ndarray | None = None,
    bi_encoder: str | None = None,
    model: str = "logistic",
    dense_candidates: bool = False,
) -> Calibration:
    """A logistic regression or boosted trees (``model``; "auto": whichever puts a right target first for more sources
    out of fold) over the candidates of ``gold`` sources (label: the target is gold; with ``cross``, the ones it read),
    then the threshold on each source's top confidence that maximises mapping F1 over ``threshold_gold`` sources
    (default: ``gold``'s). Fit on mappings the cross-encoder was not trained on; choose the threshold on dev."""
    from medlink.align.metrics import best_threshold

    hits = candidates.hits
    query = hits.query_index()
    ids, sources = candidates.target.concept_ids, candidates.queries.concept_ids
    labels = np.array([ids[c] in gold.get(sources[q], ()) for q, c in zip(query.tolist(), hits.concepts.tolist())])
    feats = features(candidates, cross, dense)
    names = (FEATURES if cross is not None else LEXICAL_FEATURES) + (("dense",) if dense is not None else ())
    rows = np.isin(query, [i for i, s in enumerate(sources) if s in gold])
    if cross is not None:
        rows &= ~np.isnan(cross)
    if labels[rows].all() or not labels[rows].any():
        raise MedlinkError("the known mappings give only right or only wrong candidates: too few of them to calibrate on")
    matrix = np.column_stack([feats[name][rows] for name in names])
    if model not in CHOICES:
        raise MedlinkError(f"calibration model must be one of {', '.join(CHOICES)}, not {model!r}")
    bi_encoder = bi_encoder if dense is not None else None
    fitting_sources = len(np.unique(query[rows]))
    choice: dict = {"kept": model, "why": "asked for (--calibration)"}
    if model == "auto" and fitting_sources < MIN_THRESHOLD_SOURCES:
        choice = {
            "kept": "logistic",
            "why": f"only {fitting_sources} source(s) to fit on (fewer than {MIN_THRESHOLD_SOURCES}): too few "
            "to compare the two kinds; the simpler logistic model",
        }
    elif model == "auto":  # each kind judged on sources its fit did not see; ties go to the simpler logistic model (listed first)
        y, source, fold = labels[rows], query[rows], shuffled_folds(query[rows], CHOICE_FOLDS)
        kept, judged = choose_variant(
            MODELS,
            lambda kind: out_of_fold(_fitter(kind, list(names)), matrix, y, fold, skip_one_class=True, fill=-np.inf),
            lambda scores: round(top1_share(scores, y, source), 4),
        )
        choice = {
            **{f"{kind} out-of-fold top-1": rating for kind, (rating, _) in judged.items()},
            "kept": kept,
            "why": f"the higher share of sources with a right target first, {CHOICE_FOLDS} folds by source (a tie keeps logistic)",
        }
    model = choice["kept"]
    calibration = _fitted(model, matrix, labels[rows], list(names), depth)
    calibration.bi_encoder = bi_encoder
    calibration.dense_candidates = dense_candidates and bi_encoder is not None
    chooser = threshold_gold if threshold_gold else gold
    ranking = rank(candidates, calibration, cross, dense)
    tops = {s: v for s, v in ranking.top().items() if s in chooser}
    threshold, measures = best_threshold(tops, chooser)
    calibration.fitted_on = {"sources": int(sum(s in gold for s in sources)), "pairs": int(rows.sum()), "threshold_mapping": measures}
    calibration.fitted_on["model_choice"] = choice
    right = [target in chooser[s] for s, (target, _) in tops.items()]
    calibration.fitted_on["threshold_calibration"] = calibration_summary([p for _, p in tops.values()], right)  # top confidences
    if len(tops) < MIN_THRESHOLD_SOURCES:  # a threshold chosen on a handful is chance (one right top gives 0: keep everything)
        threshold = DEFAULT_THRESHOLD
        calibration.fitted_on["threshold_note"] = (
            f"only {len(tops)} held-out source(s) with known mappings (fewer than "
            f"{MIN_THRESHOLD_SOURCES}): threshold {DEFAULT_THRESHOLD}, not chosen"
        )
    calibration.threshold = float(max(0.0, min(1.0, threshold)))
    return calibration
