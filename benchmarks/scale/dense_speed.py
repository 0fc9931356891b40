"""CPU cost of dense linking: encoding throughput and end-to-end dense linking speed.

    python benchmarks/scale/dense_speed.py [--model PATH] [--repeats 3] [--avx2-only --section dense_speed_avx2]

Encoding: 10,000 MEDIC names (BioSyn train dictionary) with precision auto (what this machine's probe
chose), bf16 and fp32, 1 and 2 threads, batches of 64, 128 (the default) and 256 texts grouped by token
count, medians over repeats; with each row, its ratio to auto / 2 threads / batch 128 measured in the
same run. Linking: a dense-only index over the same KB (vectors from the encode cache), the 960 NCBI
test mentions linked in one call after loading (fresh process for the peak RSS). ``--avx2-only`` runs
every child with MKL, oneDNN and ATen limited to AVX2 (MKL_ENABLE_INSTRUCTIONS, ONEDNN_MAX_CPU_ISA,
ATEN_CPU_CAPABILITY): what a CPU without AVX-512 or bf16 instructions does, on this one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.data import ncbi_kb, ncbi_split  # noqa: E402
from benchmarks._common.harness import THROUGHPUT, command_line, measure_in_fresh_process, publish  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.linking.config import LinkerConfig  # noqa: E402

# (threads, precision, batch); the first is the baseline
ENCODINGS = [(2, "auto", 128), (2, "fp32", 128), (2, "bf16", 128), (2, "auto", 64), (2, "auto", 256), (1, "fp32", 128), (1, "bf16", 128)]
AVX2_ONLY = {"MKL_ENABLE_INSTRUCTIONS": "AVX2", "ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}

ENCODE = """
import json, statistics, sys, time, torch
from medlink.encoders import Encoder
names = json.loads(open(sys.argv[1]).read()); threads, precision, repeats, batch = int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[6])
torch.set_num_threads(threads)
encoder = Encoder(sys.argv[5] or None, precision=precision)
encoder.encode(names[:512])
rates = []
for _ in range(repeats):
    started = time.perf_counter(); encoder.encode(names, batch_size=batch); rates.append(len(names) / (time.perf_counter() - started))
print(json.dumps({"names_per_second": statistics.median(rates), "resolved": encoder.precision, "capability": torch.backends.cpu.get_cpu_capability()}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    parser.add_argument("--avx2-only", action="store_true", help="limit MKL, oneDNN and ATen to AVX2 in every child process")
    parser.add_argument("--section", default="dense_speed")
    parser.add_argument("--names", type=int, default=10_000, help="how many MEDIC names each encoding row encodes")
    args = parser.parse_args()
    env = {**os.environ, **(AVX2_ONLY if args.avx2_only else {})}
    kb = ncbi_kb(args.workdir, "train")
    names = [kb.normalize(text) for _, text, _ in kb.iter_names()][:: 7][: args.names]
    names_file = args.workdir / "speed-names.json"
    names_file.write_text(json.dumps(names))
    encoding = []
    for threads, precision, batch in ENCODINGS:
        out = subprocess.run([sys.executable, "-c", ENCODE, str(names_file), str(threads), precision, str(args.repeats), args.model,
                              str(batch)], capture_output=True, text=True, check=True, env=env)
        encoding.append({"threads": threads, "precision": precision, "batch": batch, **json.loads(out.stdout.strip().splitlines()[-1])})
        encoding[-1]["ratio"] = encoding[-1]["names_per_second"] / encoding[0]["names_per_second"]
        print(encoding[-1], flush=True)
    index = args.workdir / "dense-speed-index"
    config = LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb", "params": {"model": args.model or None}}],
                                     "k_per_generator": 32})
    config_file = args.workdir / "dense-speed-config.json"
    config_file.write_text(json.dumps(config.to_dict()))
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "medlink", "index", "build", "--kb", str(kb.path), "--config", str(config_file), "--out", str(index)],
                   check=True, env=env, capture_output=True)
    build = time.perf_counter() - started
    mentions = args.workdir / "ncbi-test-mentions.txt"
    mentions.write_text("\n".join(p for m in load_dataset(ncbi_split("test")) for p in m.parts) + "\n")
    link = measure_in_fresh_process([sys.executable, str(THROUGHPUT), str(index), str(mentions), str(args.repeats), "10"], 1,
                                    env=AVX2_ONLY if args.avx2_only else None)
    linking = {**json.loads(link["stdout"]), "peak_rss_mb": link["peak_rss_mb_median"], "index_build_seconds": build}
    print(linking, flush=True)
    publish(args.section, {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "encoded_names": len(names),
                           "isa_limit": "AVX2 (MKL, oneDNN, ATen limited; simulated on this CPU)" if args.avx2_only else None,
                            "kb_names": kb.stats()["names"], "encoding": encoding, "linking": linking})


if __name__ == "__main__":
    main()
