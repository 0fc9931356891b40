"""Precision by what the CPU can do: float32 where bf16 would be emulated, bf16 only where a probe finds it faster."""

import json
import subprocess
import sys

import pytest

from medlink.encoders import precision
from medlink.errors import MedlinkError

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.dense


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No remembered choice in this process, no override, a cache folder of the test's own."""
    monkeypatch.setattr(precision, "_choice", None)
    monkeypatch.delenv(precision.ENV, raising=False)
    monkeypatch.setenv("MEDLINK_HOME", str(tmp_path))
    return tmp_path


def test_without_bf16_instructions_auto_is_float32_and_bf16_is_not_timed(fresh, monkeypatch):
    asked = []

    def probe(bf16, int8):
        asked.append(bf16)
        return precision.MachineChoice("fp32", "fp32", "probe: float32 10 ms, int8 500 ms per block", 10.0, None, 500.0)

    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX2")
    monkeypatch.setattr(precision, "_probe", probe)
    assert precision.resolve("auto") == "fp32" and precision.resolve_encoding("auto") == "fp32" and asked == [False]
    assert "AVX2" in precision.machine_choice().reason and "int8 500 ms" in precision.machine_choice().reason


def test_the_probe_runs_once_per_machine_and_its_answer_is_kept(fresh, monkeypatch):
    calls = []

    def probe(bf16, int8):
        calls.append(1)
        return precision.MachineChoice("bf16", "bf16", "probe: float32 2 ms, bf16 1 ms", 2.0, 1.0)

    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    monkeypatch.setattr(precision, "_probe", probe)
    assert precision.resolve("auto") == "bf16"
    monkeypatch.setattr(precision, "_choice", None)  # a new process: reads the file instead of probing
    assert precision.resolve("auto") == "bf16" and len(calls) == 1
    recorded = json.loads((fresh / precision.PROBE_FILE).read_text())
    assert recorded == {precision.machine_key(): {"precision": "bf16", "encoding": "bf16", "reason": "probe: float32 2 ms, bf16 1 ms",
                                                  "fp32_ms": 2.0, "bf16_ms": 1.0, "int8_ms": None}}
    recorded[precision.machine_key()].pop("encoding")  # a record from before int8 was timed: probed again
    (fresh / precision.PROBE_FILE).write_text(json.dumps(recorded))
    monkeypatch.setattr(precision, "_choice", None)
    assert precision.resolve_encoding("auto") == "bf16" and len(calls) == 2


def test_the_real_probe_encodes_in_int8_only_where_it_timed_faster(fresh):
    """On an AVX2-only AMD EPYC torch's int8 product is ~50x slower than float32; with AVX-512 VNNI ~2x faster."""
    choice = precision._probe()
    assert choice.fp32_ms > 0 and choice.bf16_ms > 0 and choice.int8_ms > 0
    fastest = choice.int8_ms * precision.BF16_GAIN <= (choice.bf16_ms if choice.precision == "bf16" else choice.fp32_ms)
    assert choice.encoding == ("int8" if fastest else choice.precision)
    assert choice.precision == ("bf16" if choice.bf16_ms * precision.BF16_GAIN <= choice.fp32_ms else "fp32")


def test_a_damaged_probe_file_is_probed_again(fresh, monkeypatch):
    (fresh / precision.PROBE_FILE).write_text("{not json")
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    monkeypatch.setattr(precision, "_probe", lambda bf16, int8: precision.MachineChoice("fp32", "fp32", "probe"))
    assert precision.resolve("auto") == "fp32"
    assert json.loads((fresh / precision.PROBE_FILE).read_text())[precision.machine_key()]["precision"] == "fp32"


def test_explicit_precision_and_the_override_win_over_auto(fresh, monkeypatch):
    monkeypatch.setattr(precision, "_probe", lambda bf16, int8: pytest.fail("an explicit precision needs no probe"))
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX512")
    assert precision.resolve("bf16") == "bf16" and precision.resolve("fp32") == "fp32"
    monkeypatch.setenv(precision.ENV, "fp32")  # what --precision fp32 sets
    assert precision.resolve("bf16") == "fp32"
    monkeypatch.setenv(precision.ENV, "fp16")
    with pytest.raises(MedlinkError, match="MEDLINK_PRECISION: precision must be one of auto, fp32, bf16, int8, not 'fp16'"):
        precision.resolve("auto")


def test_old_configs_bf16_flag_becomes_a_precision():
    assert precision.from_legacy({"bf16": True, "top": 3}) == {"precision": "auto", "top": 3}  # true was the old default
    assert precision.from_legacy({"bf16": False}) == {"precision": "fp32"}
    assert precision.from_legacy({"precision": "bf16"}) == {"precision": "bf16"}


@pytest.mark.slow
def test_emulated_bf16_loses_the_real_probe():
    """With oneDNN limited to AVX2 (what an AVX2-only CPU has), bf16 is emulated and the timed probe must say float32."""
    code = "from medlink.encoders.precision import _probe; print(_probe().precision)"
    env = {"ONEDNN_MAX_CPU_ISA": "AVX2", "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "fp32"


def test_encoders_record_what_they_were_asked_and_what_they_run(fresh):
    from medlink.encoders import Encoder

    encoder = Encoder(precision="fp32")
    assert (encoder.precision, encoder.spec.precision) == ("fp32", "fp32")
    auto = Encoder()  # the index records 'auto', to be decided again by the machine that loads it
    assert auto.spec.precision == "auto" and auto.precision in ("fp32", "bf16", "int8")  # int8 where the probe timed it fastest
    with pytest.raises(MedlinkError, match="precision must be one of"):
        Encoder(precision="half")
