"""Running a transformer folder's encoder under ONNX Runtime, for faster CPU encoding.

ONNX Runtime's fused CPU kernels encode short names faster than PyTorch with bfloat16 weights on
this project's 2-core machine (BENCHMARKS.md dense_speed) and in float32, so vectors match
PyTorch float32. The graph is exported once per model (keyed by the weights' fingerprint) into
medlink's cache directory, never into the model folder, which may be read-only (site-packages).
Training keeps PyTorch: its weights change at every step.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from pathlib import Path

import numpy as np

from medlink.settings import medlink_home

OPSET = 17
GRAPH_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnx_available() -> bool:
    """True when both the runtime and the exporter's ``onnx`` package are installed."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def exported_path(fingerprint: str, hidden: int) -> Path:
    return medlink_home() / "onnx" / f"{fingerprint}-{hidden}-opset{OPSET}.onnx"


def export(model, tokenizer, path: Path) -> None:
    """Write ``model``'s last hidden state as an ONNX graph with dynamic batch and length, atomically."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *inputs):
            return self.inner(**dict(zip(names, inputs))).last_hidden_state

    sample = tokenizer(["heart attack", "type 2 diabetes mellitus"], padding=True, return_tensors="pt")
    names = [name for name in GRAPH_INPUTS if name in sample]
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    axes = {name: {0: "batch", 1: "tokens"} for name in [*names, "last_hidden_state"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer warnings about Python control flow on shapes: the graph is traced at dynamic axes
        torch.onnx.export(LastHiddenState(model).eval(), tuple(sample[name] for name in names), str(temporary), input_names=names,
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=OPSET, dynamo=False)
    os.replace(temporary, path)


class OnnxEncoderSession:
    """An ONNX Runtime session over an exported encoder; ``hidden`` returns the last hidden state as float32."""

    def __init__(self, path: Path, threads: int):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]

    def hidden(self, batch: dict[str, np.ndarray]) -> np.ndarray:
        feed = {name: np.asarray(batch[name], dtype=np.int64) for name in self.inputs}
        return self.session.run(None, feed)[0]
