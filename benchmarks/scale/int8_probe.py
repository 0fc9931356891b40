"""Would int8 make MiniLM fast enough on a CPU without bf16? Speed, agreement with float32, and batch independence.

    python benchmarks/scale/int8_probe.py            # add MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2
                                                     # in front to see an AVX2-only CPU's figures on this one

1,500 MEDIC names (every 47th of the BioSyn train dictionary), the packaged all-MiniLM-L6-v2, 2 threads: float32, then
torch's dynamic int8 quantisation of every Linear layer (per-tensor and per-channel weights; activations scaled per
batch), then medlink's own int8 (``--precision int8``: activations scaled per token): names/s, the cosine of each int8
vector to its float32 vector, how often a name's nearest other name stays the same, and the lowest cosine between 50
names encoded one at a time and the same names inside the whole batch (1.0: a vector does not depend on its batch).
Prints; see benchmarks/notes.md for what it printed.
"""

from __future__ import annotations

import copy
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import ncbi_kb  # noqa: E402

from medlink.encoders import Encoder  # noqa: E402


def main() -> None:
    import torch
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig, quantize_dynamic

    torch.set_num_threads(2)
    kb = ncbi_kb(Path(tempfile.gettempdir()) / "medlink-bench", "train")
    names = [kb.normalize(text) for _, text, _ in kb.iter_names()][::47][:1500]
    encoder = Encoder(None, precision="fp32")
    reference = encoder.encode(names)
    started = time.perf_counter()
    encoder.encode(names)
    fp32 = len(names) / (time.perf_counter() - started)
    base = encoder.model
    nearest = reference @ reference.T
    np.fill_diagonal(nearest, -9)
    variants = []
    for label, qconfig in (("torch dynamic, per-tensor", default_dynamic_qconfig), ("torch dynamic, per-channel", per_channel_dynamic_qconfig)):
        quantised_encoder = Encoder(None, precision="fp32")
        quantised_encoder.model = quantize_dynamic(copy.deepcopy(base), {torch.nn.Linear: qconfig}, dtype=torch.qint8)
        variants.append((label, quantised_encoder))
    variants.append(("medlink per-token (--precision int8)", Encoder(None, precision="int8", inference_only=True)))
    for label, int8_encoder in variants:
        int8_encoder.encode(names[:64])
        started = time.perf_counter()
        vectors = int8_encoder.encode(names)
        int8 = len(names) / (time.perf_counter() - started)
        cosine = (reference * vectors).sum(1)
        quantised = vectors @ vectors.T
        np.fill_diagonal(quantised, -9)
        agreement = (nearest.argmax(1) == quantised.argmax(1)).mean()
        alone = np.vstack([int8_encoder.encode([name]) for name in names[:50]])
        batch_independence = (alone * vectors[:50]).sum(1).min()
        print(f"{label}: float32 {fp32:.0f} names/s, int8 {int8:.0f} names/s ({int8 / fp32:.1f}x); cosine to float32 mean "
              f"{cosine.mean():.4f}, min {cosine.min():.4f}; nearest other name unchanged for {agreement:.1%}; "
              f"alone vs in the batch: min cosine {batch_independence:.4f}", flush=True)


if __name__ == "__main__":
    main()
