"""Batches for encoding: texts tokenized once, grouped by token count, padded only to their batch's longest.

Sorting by token count (not characters) and tokenizing a whole window in one call, instead of
padding each batch through the tokenizer, is what makes encoding fast (BENCHMARKS.md, Speed,
dense_speed): a batch of short names does not carry one long name's padding, and the tokenizer's per-call overhead is paid once per window.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

WINDOW = 16_384  # texts tokenized (and sorted) together: bounds the memory of token lists for huge inputs


def length_sorted_batches(
    tokenizer, texts: Sequence[str], max_length: int, batch_size: int, window: int = WINDOW, pairs: Sequence[str] | None = None
) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
    """Yield (row numbers into ``texts``, model inputs as int64 arrays) for every text exactly once.

    With ``pairs`` each row is the pair (texts[i], pairs[i]) in one sequence, as a cross-encoder
    reads it; the second segment's token types are kept.
    """
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    left = getattr(tokenizer, "padding_side", "right") == "left"
    with_types = "token_type_ids" in getattr(tokenizer, "model_input_names", ())
    window = max(window, batch_size)
    for first in range(0, len(texts), window):
        second = list(pairs[first : first + window]) if pairs is not None else None
        encoded = tokenizer(list(texts[first : first + window]), second, truncation=True, max_length=max_length)
        ids = encoded["input_ids"]
        types = encoded.get("token_type_ids") if with_types and second is not None else None
        lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            width = int(lengths[rows].max())
            input_ids = np.full((len(rows), width), pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            token_types = np.zeros((len(rows), width), dtype=np.int64)
            for line, row in enumerate(rows):
                span = slice(width - lengths[row], width) if left else slice(0, lengths[row])
                input_ids[line, span] = ids[row]
                mask[line, span] = 1
                if types is not None:
                    token_types[line, span] = types[row]
            batch = {"input_ids": input_ids, "attention_mask": mask}
            if with_types:
                batch["token_type_ids"] = token_types
            yield first + rows, batch
