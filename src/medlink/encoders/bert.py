"""A BERT encoder for inference in plain torch: the weights read straight from ``model.safetensors`` and the tokenizer
from ``tokenizer.json`` with the ``tokenizers`` library, without importing transformers.

Why: on the way to a dense index's first answer, ``import transformers`` and ``AutoModel.from_pretrained`` cost more
than the forward pass (BENCHMARKS.md speed, dense start-up), and an index only ever runs its encoder forward. The
modules keep transformers' names (``encoder.layer.0.attention.self.query``...), so the same state dict loads and the
same Linear layers are quantised; the arithmetic is BERT's (post-LayerNorm, exact GELU, scaled dot-product attention
over the padding mask), and the tests hold its vectors to transformers' on fixture names. Anything this does not
cover (another architecture, relative positions, a pytorch_model.bin, a tokenizer without tokenizer.json) returns
None from ``load_fast`` and the caller loads the model with transformers. Training always uses transformers.
"""

from __future__ import annotations

import json
from pathlib import Path

BERT_ACTIVATIONS = ("gelu",)


def supported(path: Path) -> dict | None:
    """The folder's config when this module can run it (a BERT with absolute positions, safetensors weights and a
    tokenizer.json), else None."""
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict) or config.get("model_type") != "bert":
        return None
    if config.get("position_embedding_type", "absolute") != "absolute" or config.get("hidden_act", "gelu") not in BERT_ACTIVATIONS:
        return None
    if not (path / "model.safetensors").is_file() or not (path / "tokenizer.json").is_file():
        return None
    if config.get("is_decoder") or config.get("add_cross_attention"):
        return None
    return config


class FastTokenizer:
    """The slice of a transformers tokenizer that ``length_sorted_batches`` and ``Encoder`` use, over ``tokenizers``."""

    padding_side = "right"

    def __init__(self, path: Path):
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        special = {}
        try:
            special = json.loads((path / "special_tokens_map.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass

        def token(name: str, default: str) -> str:
            value = special.get(name, default) if isinstance(special, dict) else default
            return value.get("content", default) if isinstance(value, dict) else value

        self.pad_token, self.sep_token, self.cls_token = (
            token("pad_token", "[PAD]"),
            token("sep_token", "[SEP]"),
            token("cls_token", "[CLS]"),
        )
        self.pad_token_id = self._tokenizer.token_to_id(self.pad_token)
        self.model_input_names = ["input_ids", "token_type_ids", "attention_mask"]
        self._max_length: int | None = None

    def __call__(self, texts, pairs=None, truncation: bool = True, max_length: int | None = None) -> dict:
        if max_length != self._max_length:
            if max_length:
                self._tokenizer.enable_truncation(max_length)
            else:
                self._tokenizer.no_truncation()
            self._max_length = max_length
        inputs = list(texts) if pairs is None else list(zip(texts, pairs))
        encodings = self._tokenizer.encode_batch(inputs, add_special_tokens=True)
        return {
            "input_ids": [e.ids for e in encodings],
            "token_type_ids": [e.type_ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
        }


def _modules(config: dict):
    import torch
    from torch import nn

    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    eps = float(config.get("layer_norm_eps", 1e-12))
    meta = {"device": "meta"}  # no memory and no random init: load_state_dict(assign=True) puts the real weights in

    def embedding(rows: int):  # given a weight, nn.Embedding skips its random init (normal_ on meta would import torch._refs)
        return nn.Embedding(rows, hidden, _weight=torch.empty(rows, hidden, device="meta"))

    class Embeddings(nn.Module):
        def __init__(self):
            super().__init__()
            self.word_embeddings = embedding(int(config["vocab_size"]))
            self.position_embeddings = embedding(int(config["max_position_embeddings"]))
            self.token_type_embeddings = embedding(int(config.get("type_vocab_size", 2)))
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps, **meta)

        def forward(self, input_ids, token_type_ids):
            positions = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
            x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids) + self.position_embeddings(positions)
            return self.LayerNorm(x)

    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.query, self.key, self.value = (
                nn.Linear(hidden, hidden, **meta),
                nn.Linear(hidden, hidden, **meta),
                nn.Linear(hidden, hidden, **meta),
            )

        def forward(self, x, mask):
            batch, length, _ = x.shape

            def split(t):
                return t.view(batch, length, heads, hidden // heads).transpose(1, 2)

            context = torch.nn.functional.scaled_dot_product_attention(
                split(self.query(x)), split(self.key(x)), split(self.value(x)), attn_mask=mask
            )
            return context.transpose(1, 2).reshape(batch, length, hidden)

    class Output(nn.Module):  # dense -> (dropout) -> LayerNorm(x + residual): BertSelfOutput and BertOutput alike
        def __init__(self, inner: int):
            super().__init__()
            self.dense = nn.Linear(inner, hidden, **meta)
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps, **meta)

        def forward(self, x, residual):
            return self.LayerNorm(self.dense(x) + residual)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.self = SelfAttention()
            self.output = Output(hidden)

        def forward(self, x, mask):
            return self.output(self.self(x, mask), x)

    class Intermediate(nn.Module):
        def __init__(self):
            super().__init__()
            self.dense = nn.Linear(hidden, int(config["intermediate_size"]), **meta)

        def forward(self, x):
            return torch.nn.functional.gelu(self.dense(x))

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = Attention()
            self.intermediate = Intermediate()
            self.output = Output(int(config["intermediate_size"]))

        def forward(self, x, mask):
            x = self.attention(x, mask)
            return self.output(self.intermediate(x), x)

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.ModuleList(Layer() for _ in range(int(config["num_hidden_layers"])))

    class Output_(tuple):
        @property
        def last_hidden_state(self):
            return self[0]

    class Bert(nn.Module):
        """BertModel's forward up to ``last_hidden_state`` (no pooler: medlink pools itself)."""

        def __init__(self):
            super().__init__()
            self.embeddings = Embeddings()
            self.encoder = Stack()

        def forward(self, input_ids, attention_mask=None, token_type_ids=None):
            if attention_mask is None:
                attention_mask = torch.ones_like(input_ids)
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(input_ids)
            x = self.embeddings(input_ids, token_type_ids)
            # additive mask over keys: 0 where attended, the dtype's minimum over padding (as transformers' sdpa path)
            mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
            for layer in self.encoder.layer:
                x = layer(x, mask)
            return Output_((x,))

    return Bert


def load_fast(path: Path):
    """(model, tokenizer) for ``path`` without transformers, or None when the folder is not one this module runs."""
    config = supported(path)
    if config is None:
        return None
    from safetensors.torch import load_file

    try:
        tokenizer = FastTokenizer(path)
        weights = load_file(str(path / "model.safetensors"))
    except Exception:  # noqa: BLE001 - a damaged file (tokenizers and safetensors raise their own types): transformers' path reports it
        return None
    if weights and all(k.startswith("bert.") or not k.startswith("embeddings.") and not k.startswith("encoder.") for k in weights):
        weights = {k.removeprefix("bert."): v for k, v in weights.items()}  # a checkpoint saved from a BertFor... head model
    model = _modules(config)()
    wanted = set(model.state_dict())
    missing = wanted - set(weights)
    if missing:
        return None
    model.load_state_dict({k: weights[k].float() for k in wanted}, strict=True, assign=True)
    model.eval()
    model.config = _Config(config)
    return model, tokenizer


class _Config:
    """What Encoder reads from ``model.config``."""

    def __init__(self, config: dict):
        self.hidden_size = int(config["hidden_size"])
        self.model_type = config["model_type"]
