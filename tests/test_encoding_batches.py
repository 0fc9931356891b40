"""Encoding batches: every text once, grouped by token count, padded only to their batch's longest."""

from __future__ import annotations

import numpy as np
import pytest

from medlink.encoders.batching import length_sorted_batches
from medlink.encoders.transformer import Encoder

pytestmark = pytest.mark.dense

TEXTS = ["type 2 diabetes mellitus with diabetic chronic kidney disease stage 3", "", "asthma", "heart attack", "t2dm",
         "autosomal dominant polycystic kidney disease", "can't sleep", "x"]


def test_every_text_once_in_token_order_with_minimal_padding():
    encoder = Encoder()
    seen, widths = [], []
    for rows, batch in length_sorted_batches(encoder.tokenizer, TEXTS, 32, batch_size=3, window=5):
        assert batch["input_ids"].shape == batch["attention_mask"].shape == batch["token_type_ids"].shape
        lengths = batch["attention_mask"].sum(1)
        assert lengths.max() == batch["input_ids"].shape[1]  # padded to this batch's longest, no further
        for row, length in zip(rows, lengths):
            expected = encoder.tokenizer(TEXTS[row], truncation=True, max_length=32)["input_ids"]
            assert list(batch["input_ids"][list(rows).index(row), :length]) == expected
        seen.extend(rows.tolist())
        widths.append(list(lengths))
    assert sorted(seen) == list(range(len(TEXTS)))
    assert all(w == sorted(w) for w in widths)  # within a window, batches follow token count


def test_left_padding_tokenizers_are_padded_on_the_left():
    encoder = Encoder()
    encoder.tokenizer.padding_side = "left"
    rows, batch = next(length_sorted_batches(encoder.tokenizer, ["asthma", "heart attack in a young adult"], 32, batch_size=2))
    assert batch["attention_mask"][0, 0] == 0 and batch["attention_mask"][0, -1] == 1


def test_batched_vectors_equal_one_at_a_time():
    encoder = Encoder(precision="fp32")
    together = encoder.encode(TEXTS, batch_size=3)
    alone = np.stack([encoder.encode([text])[0] for text in TEXTS])
    assert np.all(np.sum(together * alone, axis=1) > 0.99999)
