"""Names whose sign is their meaning ("HER2-", "ER+", "HR+ with HER2-"), linked with signs dropped and with signs read.

    python benchmarks/lexical/signed_names.py [--workdir DIR]

The default KB's sources are built twice, once by a normaliser that drops "+" and "-" (as medlink did before session
32: "HER2-" and "HER2+" then share the key "her2") and once by today's, which reads a sign closing a marker's name as
its word (``medlink.text.normalize.read_signs``); each gets the default index. Every name of the KB that carries such
a sign is then linked as a mention, as written and spelt out ("HER2 negative"), and scored against its own concept
(Acc@1), with the names it gets wrong.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish, scratch  # noqa: E402

from medlink.kb.build import build_kb  # noqa: E402
from medlink.kb.default import NOT_FINDINGS  # noqa: E402
from medlink.kb.sources import default_sources  # noqa: E402
from medlink.kb.store import KB  # noqa: E402
from medlink.linking.index import DEFAULT_INDEXES, build_index  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.text.normalize import Normalizer, read_signs, signs_in  # noqa: E402

SETTINGS = {"signs dropped": Normalizer(signs_as_words=False), "signs read": Normalizer()}


def signed_names(kb: KB) -> list[tuple[str, str]]:
    """(name, concept) for every name with a sign the normaliser reads as a word."""
    return sorted({(text, cid) for cid, text, _ in kb.iter_names() if any(signs_in(text))})


def accuracy(linker: Linker, pairs: list[tuple[str, str]]) -> dict:
    firsts = [r.candidates[0].concept_id if r.candidates else None for r in linker.link([text for text, _ in pairs])]
    wrong = [[text, cid, first] for first, (text, cid) in zip(firsts, pairs) if first != cid]
    return {"mentions": len(pairs), "acc@1": round(1 - len(wrong) / len(pairs), 4), "wrong": wrong}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=scratch("medlink-bench-signed"))
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for label, normalizer in SETTINGS.items():
        stem = label.replace(" ", "_")
        build_kb(args.workdir / f"{stem}.sqlite", default_sources(), normalizer=normalizer, progress=False)
        kb = KB.open(args.workdir / f"{stem}.sqlite")
        _, make_config = DEFAULT_INDEXES["default"]
        build_index(kb, args.workdir / f"index_{stem}", make_config(), finder_skip=[root for root in NOT_FINDINGS if kb.resolve(root)])
        linker = Linker.load(args.workdir / f"index_{stem}", kb)
        pairs = signed_names(kb)
        spelt = [(" ".join(read_signs(text).split()), cid) for text, cid in pairs]
        rows.append({"setting": label, "as written": accuracy(linker, pairs), "spelt out": accuracy(linker, spelt)})
        print(label, {k: rows[-1][k]["acc@1"] for k in ("as written", "spelt out")}, flush=True)
    publish("signed_names", {"signed_rows": rows, "kb": "default (ICD-10-CM 2026 + HPO)", "command": command_line(__file__, sys.argv[1:])})


if __name__ == "__main__":
    main()
