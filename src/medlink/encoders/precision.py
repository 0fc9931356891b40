"""bfloat16 weights for CPU inference, kept in step with a model that is still training."""

from __future__ import annotations

import copy


class Bf16Copy:
    """A bfloat16 copy of a model's weights, remade whenever an optimizer step has changed them.

    Weights cast once avoid autocast's cast at every matrix product (faster on the CPU: see
    BENCHMARKS.md dense_speed; vectors stay within a cosine of 0.999 of float32, as the tests
    check). Training keeps float32 weights; tensor version counters tell when the copy is stale.
    """

    def __init__(self) -> None:
        self._copy = None
        self._versions: tuple[int, ...] = ()

    def of(self, model):
        import torch

        versions = tuple(p._version for p in model.parameters())
        if self._copy is None or versions != self._versions:
            self._copy = copy.deepcopy(model).to(torch.bfloat16).eval()
            self._versions = versions
        return self._copy
