"""Schumacher et al. (2020)'s pairwise neural ranker: a feed-forward scorer S(m, c) over pooled token representations of the mention
and the candidate's names, plus pairwise features (each retrieval stage's score, the fused score and rank, word
overlap).

Why these token representations: the ranker must cost well under the retrieval it reranks (<= 2 ms per mention on two
CPU cores), so it reads the packaged MiniLM's *input* word-piece embedding table (no transformer layers run), frozen,
through a trainable projection; a mention or name is pooled by max pooling or by single-head attention pooling (the
paper's two variants). The table is stored with the model (float16), so a folder needs nothing else, downloaded or
packaged. Saved as safetensors + a JSON spec; no pickle anywhere.

A candidate is read twice: by its preferred name and by the name that matched (a KB alias or a memory mention).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from medlink.core import Candidate
from medlink.errors import MedlinkError
from medlink.rerank.pairwise_features import TEXT_CACHE, feature_names, pair_features

SPEC_FILE = "medlink_ranker.json"  # the folder's signature: what a ranker folder is recognised by
WEIGHTS_FILE = "model.safetensors"  # the name transformer folders use, so model_fingerprint reads it too
TOKENIZER_FILE = "tokenizer.json"
FORMAT = "medlink-pairwise-ranker"
VERSION = 1
POOLINGS = ("max", "attention")
EMBEDDINGS_KEY = "embeddings.word_embeddings.weight"  # the input word-piece table of a BERT-style safetensors file
UNK_ID = 100  # BERT's [UNK]: what an empty text reads as (a pooled row must have one token)


@dataclass
class RankerSpec:
    """What a ranker folder holds besides its weights: the architecture, the stages its features read, how it was trained."""

    pooling: str = "attention"
    dim: int = 128  # the projection of the 384-d word pieces
    hidden: list[int] = field(default_factory=lambda: [256, 128])
    stages: list[str] = field(default_factory=list)  # retrieval stages read from scores_by_stage (the training index's)
    max_tokens: int = 16  # word pieces read of a mention or name
    dropout: float = 0.1
    embeddings: str = "all-MiniLM-L6-v2 input word pieces"
    training: dict = field(default_factory=dict)  # settings, data sizes, epochs, time: recorded, never read back
    format: str = FORMAT
    version: int = VERSION

    def __post_init__(self) -> None:
        if self.format != FORMAT or self.version != VERSION:
            raise MedlinkError(f"not a {FORMAT} version {VERSION} spec (format {self.format!r}, version {self.version!r})")
        if self.pooling not in POOLINGS:
            raise MedlinkError(f"pooling must be one of {', '.join(POOLINGS)}, not {self.pooling!r}")
        if not (
            isinstance(self.dim, int)
            and self.dim > 0
            and isinstance(self.max_tokens, int)
            and self.max_tokens > 0
            and isinstance(self.hidden, list)
            and all(isinstance(h, int) and h > 0 for h in self.hidden)
        ):
            raise MedlinkError(f"dim, max_tokens and hidden must be positive integers (got {self.dim}, {self.max_tokens}, {self.hidden})")
        if not (isinstance(self.stages, list) and all(isinstance(s, str) for s in self.stages)):
            raise MedlinkError(f"stages must be a list of stage names, not {self.stages!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RankerSpec:
        if not isinstance(data, dict):
            raise MedlinkError(f"a ranker spec is a JSON object, not {type(data).__name__}")
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            raise MedlinkError(f"unknown key(s) in the ranker spec: {', '.join(sorted(unknown))}")
        return cls(**data)


class Tokens:
    """Word-piece ids of texts (no special tokens, at most ``max_tokens``), cached: candidate names recur."""

    def __init__(self, tokenizer_file: Path, max_tokens: int):
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)
        self._cache: dict[str, list[int]] = {}

    def ids(self, texts: Sequence[str]) -> list[list[int]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > TEXT_CACHE:
                self._cache.clear()
            encoded = self.tokenizer.encode_batch(missing, add_special_tokens=False)
            self._cache.update((t, e.ids or [UNK_ID]) for t, e in zip(missing, encoded))
        return [self._cache[t] for t in texts]


def padded(rows: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Ids (n, longest) padded with 0 ([PAD]) and the mask of real tokens."""
    width = max((len(r) for r in rows), default=1)
    ids = np.zeros((len(rows), width), dtype=np.int64)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = row
    return ids, ids != 0


@dataclass
class PairBatch:
    """Pairs to score, with each distinct text tokenised once: pair p reads texts[mention[p]], texts[name[p]] and
    texts[matched[p]], and features[p]."""

    ids: np.ndarray
    mask: np.ndarray
    mention: np.ndarray
    name: np.ndarray
    matched: np.ndarray
    features: np.ndarray
    sizes: list[int]  # pairs per mention, in order

    @classmethod
    def of(
        cls,
        tokens: Tokens,
        mentions: Sequence[str],
        groups: Sequence[Sequence[Candidate]],
        features: Sequence[np.ndarray],
        matched: bool = True,
    ) -> PairBatch:
        """``groups[i]``: candidates of ``mentions[i]``, ``features[i]`` their rows (computed over the whole retrieved list:
        ranks and relative scores depend on it). ``matched`` False: the preferred name in the matched slot too (synonym
        pre-training, where retrieval matched the query itself)."""
        position: dict[str, int] = {}
        at = lambda text: position.setdefault(text, len(position))  # noqa: E731
        mention, name, alias = [], [], []
        for text, group in zip(mentions, groups):
            for candidate in group:
                preferred = candidate.name or candidate.matched_name or candidate.concept_id
                mention.append(at(text))
                name.append(at(preferred))
                alias.append(at(candidate.matched_name or preferred) if matched else name[-1])
        ids, mask = padded(tokens.ids(list(position)))
        as_array = lambda values: np.array(values, dtype=np.int64)  # noqa: E731
        width = next((f.shape[1] for f in features), 0)
        stacked = np.concatenate(list(features)).astype(np.float32) if len(features) else np.zeros((0, width), dtype=np.float32)
        return cls(ids, mask, as_array(mention), as_array(name), as_array(alias), stacked, [len(g) for g in groups])


def _module():
    """The torch module class, defined on first use: importing this file must not need torch."""
    import torch
    from torch import nn

    class PairwiseNet(nn.Module):
        """S(m, c): [m, c, m*c, |m-c|, m*a, |m-a|, features] -> feed-forward -> one score (c: preferred name, a: matched)."""

        def __init__(self, spec: RankerSpec, embeddings: torch.Tensor):
            super().__init__()
            self.pooling = spec.pooling
            self.embeddings = nn.Embedding.from_pretrained(embeddings.half().float(), freeze=True, padding_idx=0)  # float16 as saved
            self.project = nn.Linear(embeddings.shape[1], spec.dim)
            if spec.pooling == "attention":
                self.attend = nn.Sequential(nn.Linear(spec.dim, spec.dim), nn.Tanh(), nn.Linear(spec.dim, 1, bias=False))
            n_features = len(feature_names(spec.stages))
            self.register_buffer("feature_mean", torch.zeros(n_features))
            self.register_buffer("feature_std", torch.ones(n_features))
            layers, width = [], 6 * spec.dim + n_features
            for size in spec.hidden:
                layers += [nn.Linear(width, size), nn.ReLU(), nn.Dropout(spec.dropout)]
                width = size
            self.score = nn.Sequential(*layers, nn.Linear(width, 1))

        def train(self, mode: bool = True):
            self._tables = None  # the projection is about to change
            return super().train(mode)

        def load_state_dict(self, *args, **kwargs):
            self._tables = None
            return super().load_state_dict(*args, **kwargs)

        def token_tables(self) -> tuple[torch.Tensor, torch.Tensor | None]:
            """Scoring: every word piece's tanh(projection) and attention logit, computed once over the frozen table.
            A token's vector and logit depend on its id alone, so scoring gathers rows instead of running a 384 x dim
            and a dim x dim product per token, most of the cost otherwise."""
            if getattr(self, "_tables", None) is None:
                with torch.no_grad():
                    vectors = torch.tanh(self.project(self.embeddings.weight))
                    self._tables = (vectors, self.attend(vectors).squeeze(-1) if self.pooling == "attention" else None)
            return self._tables

        def pool(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            """One vector per text: max over its tokens, or an attention-weighted sum (one head)."""
            if not self.training:
                return self.pool_by_length(ids, mask)
            tokens = torch.tanh(self.project(self.embeddings(ids)))
            logits = self.attend(tokens).squeeze(-1) if self.pooling == "attention" else None
            if logits is None:
                return tokens.masked_fill(~mask.unsqueeze(-1), -1e4).max(dim=1).values
            weights = logits.masked_fill(~mask, -1e4).softmax(dim=1)
            return (weights.unsqueeze(-1) * tokens).sum(dim=1)

        def pool_by_length(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            """``pool`` for scoring: texts of one length pooled together (ids are right-padded), so no padded token
            is read and no mask applied; a batch's texts are mostly short, padded to its longest otherwise."""
            vectors, table = self.token_tables()
            lengths = mask.sum(dim=1)
            out = torch.empty((ids.shape[0], vectors.shape[1]), dtype=vectors.dtype)
            for length in torch.unique(lengths).tolist():
                rows = torch.nonzero(lengths == length).squeeze(1)
                cut = ids[rows, :length]
                tokens = vectors[cut]
                if table is None:
                    out[rows] = tokens.max(dim=1).values
                else:
                    out[rows] = (table[cut].softmax(dim=1).unsqueeze(-1) * tokens).sum(dim=1)
            return out

        def forward(self, batch: PairBatch) -> torch.Tensor:
            texts = self.pool(torch.from_numpy(batch.ids), torch.from_numpy(batch.mask))
            m, c, a = (texts[torch.from_numpy(index)] for index in (batch.mention, batch.name, batch.matched))
            features = (torch.from_numpy(batch.features) - self.feature_mean) / self.feature_std
            return self.score(torch.cat([m, c, m * c, (m - c).abs(), m * a, (m - a).abs(), features], dim=1)).squeeze(-1)

    return PairwiseNet


def base_embeddings(model_dir: Path) -> torch.Tensor:  # noqa: F821
    """The input word-piece table of a BERT-style folder's ``model.safetensors`` (read alone: no transformer is built)."""
    from safetensors import safe_open

    weights = model_dir / "model.safetensors"
    if not weights.is_file():
        raise MedlinkError(f"{model_dir}: no model.safetensors to take word-piece embeddings from")
    with safe_open(str(weights), "pt") as handle:
        key = next((k for k in handle.keys() if k.endswith(EMBEDDINGS_KEY)), None)
        if key is None:
            raise MedlinkError(f"{weights}: no {EMBEDDINGS_KEY} tensor (not a BERT-style model)")
        return handle.get_tensor(key).float()


class PairwiseModel:
    """The network, its tokenizer and its spec: scores (mention, candidate) pairs."""

    def __init__(self, spec: RankerSpec, tokenizer_file: Path, embeddings: torch.Tensor, path: Path | None = None):  # noqa: F821
        import torch

        self.spec = spec
        self.tokenizer_file = tokenizer_file
        self.tokens = Tokens(tokenizer_file, spec.max_tokens)
        self.net = _module()(spec, embeddings)
        self.net.eval()
        self.path = path
        self.precision = "fp32"
        self._torch = torch

    @classmethod
    def new(cls, spec: RankerSpec, base: Path | None = None) -> PairwiseModel:
        """A fresh model over ``base``'s word pieces (default: the packaged MiniLM)."""
        from medlink.encoders.transformer import default_model_dir

        base = Path(base) if base else default_model_dir()
        if not (base / TOKENIZER_FILE).is_file():
            raise MedlinkError(f"{base}: no {TOKENIZER_FILE} (a fast tokenizer file is needed)")
        return cls(spec, base / TOKENIZER_FILE, base_embeddings(base))

    def features(self, mention: str, candidates: Sequence[Candidate], top: int | None = None) -> np.ndarray:
        return pair_features(mention, candidates, self.spec.stages, top)

    def forward(self, batch: PairBatch) -> torch.Tensor:  # noqa: F821
        return self.net(batch)

    def score_groups(self, mentions: Sequence[str], groups: Sequence[Sequence[Candidate]], top: int | None = None) -> list[np.ndarray]:
        """Each mention's scores for its first ``top`` candidates (one float32 array per mention), in one pass; the
        features read the whole list, as in training."""
        if not mentions:
            return []
        features = [self.features(m, g, top) for m, g in zip(mentions, groups)]
        batch = PairBatch.of(self.tokens, mentions, [g[:top] for g in groups], features)
        was_training = self.net.training
        self.net.eval()
        try:
            with self._torch.inference_mode(), self._torch.autocast("cpu", dtype=self._torch.bfloat16, enabled=self.precision == "bf16"):
                flat = self.net(batch).float().numpy()
        finally:
            self.net.train(was_training)
        return np.split(flat, np.cumsum(batch.sizes)[:-1])

    def fit_feature_scale(self, features: np.ndarray) -> None:
        """Standardise features by the training pairs' mean and spread (a constant feature keeps spread 1)."""
        mean = features.mean(axis=0) if len(features) else np.zeros(features.shape[1])
        std = features.std(axis=0) if len(features) else np.ones(features.shape[1])
        self.net.feature_mean.copy_(self._torch.from_numpy(mean.astype(np.float32)))
        self.net.feature_std.copy_(self._torch.from_numpy(np.where(std > 1e-6, std, 1.0).astype(np.float32)))

    # -- folders ------------------------------------------------------------------------------------------------
    def save(self, directory: Path, extra: dict | None = None) -> None:
        """Weights (the embedding table as float16), the tokenizer, then the spec: the signature comes last."""
        import json
        import shutil

        from safetensors.torch import save_file

        from medlink.directories import with_default_mode

        directory.mkdir(parents=True, exist_ok=True)
        state = {k: (v.half() if k == "embeddings.weight" else v).contiguous() for k, v in self.net.state_dict().items()}
        save_file(state, str(directory / WEIGHTS_FILE))
        if self.tokenizer_file.resolve() != (directory / TOKENIZER_FILE).resolve():
            shutil.copyfile(self.tokenizer_file, directory / TOKENIZER_FILE)
        with_default_mode(directory / WEIGHTS_FILE, directory / TOKENIZER_FILE)
        spec = {**self.spec.to_dict(), "training": {**self.spec.training, **(extra or {})}}
        (directory / SPEC_FILE).write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, directory: Path | str) -> PairwiseModel:
        """A folder ``medlink train ranker`` wrote; anything else is refused with what is wrong."""
        import json

        directory = Path(directory)
        if not directory.is_dir():
            raise MedlinkError(f"ranker folder not found: {directory} (train one with 'medlink train ranker --out DIR')")
        for name in (SPEC_FILE, WEIGHTS_FILE, TOKENIZER_FILE):
            if not (directory / name).is_file():
                raise MedlinkError(f"{directory}: not a ranker folder ({name} is missing); train one with 'medlink train ranker --out DIR'")
        try:
            spec = RankerSpec.from_dict(json.loads((directory / SPEC_FILE).read_text(encoding="utf-8")))
        except (ValueError, TypeError, MedlinkError) as error:
            raise MedlinkError(f"{directory / SPEC_FILE}: not a valid ranker spec: {error}") from None
        from safetensors import SafetensorError
        from safetensors.torch import load_file

        try:
            state = load_file(str(directory / WEIGHTS_FILE))
        except (SafetensorError, OSError) as error:
            raise MedlinkError(f"{directory / WEIGHTS_FILE}: damaged weights ({error}); train the ranker again") from None
        table = state.get("embeddings.weight")
        if table is None or table.ndim != 2:
            raise MedlinkError(f"{directory / WEIGHTS_FILE}: no word-piece table (embeddings.weight); train the ranker again")
        model = cls(spec, directory / TOKENIZER_FILE, table.float(), directory)
        try:
            model.net.load_state_dict(state, strict=True)
        except RuntimeError as error:
            first = str(error).strip().splitlines()[0]
            raise MedlinkError(
                f"{directory}: the weights do not fit the spec in {SPEC_FILE} ({first}); the folder was changed: train the ranker again"
            ) from None
        return model


def is_ranker_spec(path: Path) -> bool:
    """Is ``path`` a ranker spec medlink wrote (its format named)?"""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def parameter_count(model: PairwiseModel) -> int:
    """Trainable parameters (the frozen word-piece table left out)."""
    return sum(math.prod(p.shape) for p in model.net.parameters() if p.requires_grad)
