"""Which number format a transformer runs in on this CPU (float32 or bfloat16), and a bfloat16 copy of a model.

Why decided per machine: bfloat16 weights make MiniLM much faster on a CPU with bf16
instructions (AVX-512 BF16, AMX) and several times *slower* on one without them (AVX2 only), where
oneDNN emulates them (BENCHMARKS.md, Speed). So ``auto`` (the default everywhere) asks torch which instruction set it
dispatches to and times a transformer-shaped probe once in float32, int8 and (where bf16 might pay)
bf16; the answer is cached per machine (CPU model, flags, torch version, instruction-set limits) in
``$MEDLINK_HOME/precision.json``. ``--precision`` (or ``MEDLINK_PRECISION``) overrides both the
probe and a config's own setting for one process.

int8 is a format for *encoding* only (a bi-encoder's forward without gradients, ``resolve_encoding``), asked for with
``--precision int8`` or chosen by 'auto' where the same probe times it faster than the other formats (with ``INT8_FOR_AUTO``):
torch's int8 product is fast with AVX-512 VNNI and far slower than float32 on an AVX2-only CPU (BENCHMARKS.md, Speed), so
neither can be assumed. Training, the cross-encoder and the tagger run float32 when int8 is asked for (``resolve``).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import logging
import os
import platform
import time
from dataclasses import asdict, dataclass, replace

from medlink.errors import MedlinkError

log = logging.getLogger(__name__)

PRECISIONS = ("auto", "fp32", "bf16", "int8")  # int8: encoding only (see resolve_encoding)
ENV = "MEDLINK_PRECISION"  # set by the CLI's --precision; wins over configs for the whole process (and its children)
PROBE_FILE = "precision.json"
FORMAT_NAMES = {"fp32": "float32", "bf16": "bf16", "int8": "int8"}  # how a format reads in messages
PROBE_VERSION = 2  # part of the machine key: a change to the probe or the kernels it times re-probes (2: int8 timed too)
# Whether 'auto' may encode in int8 where the probe times it fastest. int8 here is per-token (``Int8Linear``):
# default-dense links as accurately as with float32 (benchmarks/results/default_dense_int8.json, default_dense_fp32.json),
# its vectors stay close to float32's and do not depend on what they are batched with; faster than float32 where the
# CPU has AVX-512 VNNI, far slower on AVX2-only CPUs (BENCHMARKS.md, Speed: dense_speed).
INT8_FOR_AUTO = True
BF16_GAIN = 1.1  # bf16 (or int8) must be at least this much faster in the probe: a near tie keeps float32's exact vectors
_NO_BF16 = ("DEFAULT", "NO AVX", "AVX", "AVX2")  # torch CPU capabilities with no bf16 instructions: bf16 not timed
_LIMITS = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")  # env vars that change what the probe would see


@dataclass(frozen=True)
class MachineChoice:
    """What ``auto`` means on this machine, and the evidence: ``precision`` for training and models that run in float32
    or bf16, ``encoding`` for a bi-encoder's encoding (the same, or int8)."""

    precision: str
    encoding: str
    reason: str
    fp32_ms: float | None = None
    bf16_ms: float | None = None
    int8_ms: float | None = None


def check_precision(value: str, where: str = "--precision") -> str:
    if value not in PRECISIONS:
        raise MedlinkError(f"{where}: precision must be one of {', '.join(PRECISIONS)}, not {value!r}")
    return value


def force(value: str | None) -> None:
    """The CLI's ``--precision``: every encoder this process (and its child processes) makes uses ``value``."""
    if value is not None:
        os.environ[ENV] = check_precision(value)


def requested(requested: str | None = "auto") -> str:
    """What this process is asked for: ``MEDLINK_PRECISION`` if set, else ``requested`` (checked; None is 'auto')."""
    override = os.environ.get(ENV)
    if override:
        return check_precision(override, ENV)
    return check_precision(requested or "auto", "precision")


def resolve(requested_: str | None = "auto") -> str:
    """'fp32' or 'bf16', the number format a model trains and runs in: ``MEDLINK_PRECISION`` if set, else ``requested``;
    'auto' is decided by ``machine_choice``. int8 is an encoding format only (``resolve_encoding``): here it is float32."""
    asked = requested(requested_)
    resolved = machine_choice().precision if asked == "auto" else asked
    return "fp32" if resolved == "int8" else resolved


def resolve_encoding(requested_: str | None = "auto") -> str:
    """'fp32', 'bf16' or 'int8': the format a bi-encoder *encodes* in (no gradients). 'auto' is what the machine's probe
    timed fastest (int8: per-token int8 Linear layers, see ``Int8Copy``)."""
    asked = requested(requested_)
    return machine_choice().encoding if asked == "auto" else asked


@functools.lru_cache(maxsize=1)
def int8_runs() -> bool:
    """Can this torch multiply int8 matrices on the CPU (``torch._int_mm``, what ``Int8Linear`` needs)? If not, the probe
    leaves int8 out (an explicit --precision int8 then fails with torch's own message)."""
    import torch

    try:
        torch._int_mm(torch.ones((17, 8), dtype=torch.int8), torch.ones((8, 8), dtype=torch.int8))
        return True
    except (AttributeError, RuntimeError, NotImplementedError):
        return False


def from_legacy(settings: dict) -> dict:
    """A config or spec that says ``"bf16": true/false`` instead of 'precision': true becomes 'auto' (bf16 where it
    pays); false stays float32."""
    if "bf16" not in settings:
        return settings
    settings = dict(settings)
    bf16 = settings.pop("bf16")
    settings.setdefault("precision", "auto" if bf16 is True else "fp32" if bf16 is False else bf16)
    return settings


# -- deciding 'auto' ------------------------------------------------------------------------------------------
_choice: MachineChoice | None = None


def machine_choice() -> MachineChoice:
    """float32, or bf16 where torch dispatches bf16 instructions and a timed probe finds it faster; for encoding, int8
    where the probe times it faster still. Once per machine."""
    global _choice
    if _choice is None:
        _choice = _cached_or_probed()
    return _choice


def _cpu_model_and_flags() -> tuple[str, list[str]]:
    """The CPU's model name and feature flags (Linux's /proc/cpuinfo; elsewhere what ``platform`` knows)."""
    model, flags = None, []
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model is None:
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = value.split()
    except OSError:
        pass
    return model or platform.processor() or platform.machine(), flags


def machine_key() -> str:
    """Identifies what the probe's answer depends on: the probe's version, CPU model and flags, torch, its threads and
    any ISA limit."""
    import torch

    model, flags = _cpu_model_and_flags()
    parts = [
        f"probe {PROBE_VERSION}",
        model,
        " ".join(sorted(flags)),
        torch.__version__,
        str(torch.get_num_threads()),
        *(f"{name}={os.environ.get(name, '')}" for name in _LIMITS),
    ]
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=12).hexdigest()


def _cached_or_probed() -> MachineChoice:
    import torch

    capability = torch.backends.cpu.get_cpu_capability()
    from medlink.settings import medlink_home

    path, key = medlink_home() / PROBE_FILE, machine_key()
    known = _read_probes(path)
    if key in known:
        try:
            return MachineChoice(**known[key])
        except TypeError:
            pass  # a record without 'encoding': probe again
    choice = _probe(bf16=capability not in _NO_BF16, int8=INT8_FOR_AUTO and int8_runs())
    if capability in _NO_BF16:
        choice = replace(
            choice, reason=f"torch dispatches {capability}: bf16 would be emulated (several times slower), not timed; {choice.reason}"
        )
    log.info(
        "precision: encoding in %s on this CPU, the fastest format timed (once per machine, kept in %s): %s",
        FORMAT_NAMES[choice.encoding],
        path,
        choice.reason,
    )
    from medlink.directories import write_atomic

    try:
        write_atomic(path, json.dumps({**_read_probes(path), key: asdict(choice)}, indent=1, sort_keys=True))
    except OSError as error:  # a read-only home still links; it only probes again next time
        log.warning("could not record the precision probe in %s: %s", path, error)
    return choice


def _read_probes(path) -> dict:
    try:
        probes = json.loads(path.read_text(encoding="utf-8"))
        return probes if isinstance(probes, dict) else {}
    except (OSError, ValueError):
        return {}


def _probe(bf16: bool = True, int8: bool = True, repeats: int = 7) -> MachineChoice:
    """Time a MiniLM-sized feed-forward block (the bulk of a transformer's work) in float32, with bfloat16 weights and
    with ``Int8Linear`` layers (those asked for). A format more than twice float32's time on its first timed run is
    not timed further: emulated bf16, or int8 without VNNI, costs seconds per run."""
    import torch

    generator = torch.Generator().manual_seed(0)
    block = torch.nn.Sequential(torch.nn.Linear(384, 1536), torch.nn.GELU(), torch.nn.Linear(1536, 384)).eval()
    tokens = torch.randn(64 * 8, 384, generator=generator)  # 64 short names
    formats = {"fp32": (block, tokens)}
    if bf16:
        formats["bf16"] = (copy.deepcopy(block).to(torch.bfloat16), tokens.to(torch.bfloat16))
    if int8:
        formats["int8"] = (Int8Copy()._make(block), tokens)
    timings: dict[str, float] = {}
    with torch.inference_mode():
        for name, (model, x) in formats.items():
            model(x)  # warm-up: oneDNN picks and caches its kernels
            runs = []
            for _ in range(repeats):
                started = time.perf_counter()
                model(x)
                runs.append(time.perf_counter() - started)
                if name != "fp32" and runs[0] * 1000 > 2 * timings["fp32"]:
                    break
            timings[name] = sorted(runs)[len(runs) // 2] * 1000
    fp32 = timings["fp32"]
    precision = "bf16" if "bf16" in timings and timings["bf16"] * BF16_GAIN <= fp32 else "fp32"
    encoding = "int8" if "int8" in timings and timings["int8"] * BF16_GAIN <= timings[precision] else precision
    reason = "probe: " + ", ".join(f"{FORMAT_NAMES[name]} {ms:.2f} ms" for name, ms in timings.items()) + " per block"
    return MachineChoice(precision, encoding, reason, *(round(timings[f], 3) if f in timings else None for f in ("fp32", "bf16", "int8")))


class InferenceCopy:
    """A copy of a model for inference in another number format, remade whenever an optimizer step has changed the
    weights (tensor version counters tell when it is stale). Training keeps the float32 model."""

    def __init__(self) -> None:
        self._copy = None
        self._versions: tuple[int, ...] = ()

    def of(self, model):
        versions = tuple(p._version for p in model.parameters())
        if self._copy is None or versions != self._versions:
            self._copy = self._make(model)
            self._versions = versions
        return self._copy

    def _make(self, model):
        raise NotImplementedError


class Bf16Copy(InferenceCopy):
    """bfloat16 weights: cast once, they avoid autocast's cast at every matrix product (faster on a CPU with bf16
    instructions; vectors stay within a cosine of 0.999 of float32, as the tests check)."""

    def _make(self, model):
        import torch

        return copy.deepcopy(model).to(torch.bfloat16).eval()


class Int8Copy(InferenceCopy):
    """Every Linear layer in int8 (``Int8Linear``): faster than float32 on a CPU with AVX-512 VNNI, far slower than
    float32 on an AVX2-only one (so 'auto' times it first; BENCHMARKS.md, Speed). Activations are quantised per token, so a string's
    vector does not depend on what it is batched with."""

    def _make(self, model):
        import torch

        copied = copy.deepcopy(model).float().eval()
        for parent in list(copied.modules()):
            for name, child in list(parent.named_children()):
                if type(child) is torch.nn.Linear:
                    setattr(parent, name, int8_linear_class()(child))
        return copied


@functools.lru_cache(maxsize=1)
def int8_linear_class():
    """The ``Int8Linear`` module class (defined on first use: this module must not import torch when loaded)."""
    import torch

    class Int8Linear(torch.nn.Module):
        """y = x W^T + b with W in int8 (a scale per output channel) and x quantised to int8 per row (token) at each
        call: an int8 x int8 -> int32 product (``torch._int_mm``), then rescaled. Per-row scales keep each token's
        numbers independent of the other tokens and texts in the batch (torch's dynamic quantisation scales the whole
        batch at once, which made a name's vector depend on its neighbours)."""

        def __init__(self, linear: torch.nn.Linear):
            super().__init__()
            weight = linear.weight.detach().float()
            scale = weight.abs().amax(dim=1).clamp(min=1e-12) / 127.0
            self.register_buffer("weight_int8", torch.round(weight / scale[:, None]).to(torch.int8).t().contiguous())
            self.register_buffer("weight_scale", scale)
            self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().float().clone())
            self.out_features = linear.out_features

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            rows = x.reshape(-1, x.shape[-1]).float()
            scale = rows.abs().amax(dim=1, keepdim=True).clamp(min=1e-12) / 127.0
            quantised = torch.round(rows / scale).to(torch.int8)
            y = torch._int_mm(quantised, self.weight_int8).float() * scale * self.weight_scale
            if self.bias is not None:
                y = y + self.bias
            return y.reshape(*x.shape[:-1], self.out_features)

    return Int8Linear


COPIES = {"bf16": Bf16Copy, "int8": Int8Copy}
