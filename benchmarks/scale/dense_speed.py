"""CPU cost of dense linking: encoding throughput and end-to-end dense linking speed.

    python benchmarks/scale/dense_speed.py [--model PATH] [--repeats 3]

Encoding: 10,000 MEDIC names (BioSyn train dictionary), bf16 and fp32, 1 and 2 threads, batches of
64, 128 (the default) and 256 texts grouped by token count, medians over repeats; with each row, its
ratio to bf16 / 2 threads / batch 128 measured in the same run. Linking: a dense-only index over the same KB (vectors from the encode cache),
the 960 NCBI test mentions linked in one call after loading (fresh process for the peak RSS).
"""

from __future__ import annotations

import argparse
import json
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
from medlink.linking.linker import Linker  # noqa: E402

ENCODINGS = [(2, True, 128), (2, True, 64), (2, True, 256), (2, False, 128), (1, True, 128), (1, False, 128)]  # (threads, bf16, batch); first = baseline

ENCODE = """
import json, statistics, sys, time, torch
from medlink.encoders import Encoder
names = json.loads(open(sys.argv[1]).read()); threads, bf16, repeats, batch = int(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4]), int(sys.argv[6])
torch.set_num_threads(threads)
encoder = Encoder(sys.argv[5] or None, bf16=bf16)
encoder.encode(names[:512])
rates = []
for _ in range(repeats):
    started = time.perf_counter(); encoder.encode(names, batch_size=batch); rates.append(len(names) / (time.perf_counter() - started))
print(json.dumps({"names_per_second": statistics.median(rates)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "medlink-bench")
    args = parser.parse_args()
    kb = ncbi_kb(args.workdir, "train")
    names = [kb.normalize(text) for _, text, _ in kb.iter_names()][:: 7][:10_000]
    names_file = args.workdir / "speed-names.json"
    names_file.write_text(json.dumps(names))
    encoding = []
    for threads, bf16, batch in ENCODINGS:
        out = subprocess.run([sys.executable, "-c", ENCODE, str(names_file), str(threads), "1" if bf16 else "0", str(args.repeats), args.model,
                              str(batch)], capture_output=True, text=True, check=True)
        encoding.append({"threads": threads, "bf16": bf16, "batch": batch, **json.loads(out.stdout.strip().splitlines()[-1])})
        print(encoding[-1], flush=True)
    index = args.workdir / "dense-speed-index"
    config = LinkerConfig.from_dict({"generators": [{"name": "dense", "type": "dense", "names": "kb", "params": {"model": args.model or None}}],
                                     "k_per_generator": 32})
    started = time.perf_counter()
    Linker.build(kb, config).save(index)
    build = time.perf_counter() - started
    mentions = args.workdir / "ncbi-test-mentions.txt"
    mentions.write_text("\n".join(p for m in load_dataset(ncbi_split("test")) for p in m.parts) + "\n")
    link = measure_in_fresh_process([sys.executable, str(THROUGHPUT), str(index), str(mentions), str(args.repeats), "10"], 1)
    linking = {**json.loads(link["stdout"]), "peak_rss_mb": link["peak_rss_mb_median"], "index_build_seconds": build}
    print(linking, flush=True)
    publish("dense_speed", {"command": command_line(__file__, sys.argv[1:]), "repeats": args.repeats, "encoded_names": len(names),
                            "kb_names": kb.stats()["names"], "encoding": encoding, "linking": linking})


if __name__ == "__main__":
    main()
