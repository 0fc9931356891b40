"""Ways to damage an input file, shared by the property tests and the long fuzzing benchmark (benchmarks/robustness).

Each mutation models something that happens to real files: a download cut short, an editor's BOM or line
endings, a wrong encoding, a binary file given by mistake, a giant line, lines repeated or reordered.
"""

from __future__ import annotations

import random

MUTATIONS = ("truncate", "nul", "invalid_utf8", "bom", "crlf", "cr_only", "long_line", "duplicate_lines", "shuffle_lines", "drop_field",
             "empty", "binary")


def mutate(data: bytes, kind: str, rng: random.Random) -> bytes:
    """``data`` damaged one way; ``rng`` chooses where."""
    lines = data.splitlines(keepends=True)
    at = rng.randrange(len(data) + 1) if data else 0
    if kind == "truncate":
        return data[:at]
    if kind == "nul":
        return data[:at] + b"\x00" * rng.randint(1, 4) + data[at:]
    if kind == "invalid_utf8":
        return data[:at] + rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xe9"]) + data[at:]
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "crlf":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    if kind == "cr_only":
        return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")
    if kind == "long_line":
        return data[:at] + b"x" * rng.choice([70_000, 1_000_000]) + data[at:]
    if kind == "duplicate_lines":
        if not lines:
            return data
        i = rng.randrange(len(lines))
        return b"".join(lines[: i + 1] + [lines[i]] * rng.randint(1, 3) + lines[i + 1 :])
    if kind == "shuffle_lines":
        rng.shuffle(lines)
        return b"".join(lines)
    if kind == "drop_field":
        if not lines:
            return data
        i = rng.randrange(len(lines))
        for separator in (b"||", b"\t", b"|", b": ", b","):
            if separator in lines[i]:
                fields = lines[i].split(separator)
                del fields[rng.randrange(len(fields))]
                lines[i] = separator.join(fields)
                break
        return b"".join(lines)
    if kind == "empty":
        return b""
    if kind == "binary":
        return bytes(rng.randrange(256) for _ in range(rng.randint(1, 2048)))
    raise ValueError(f"unknown mutation {kind!r}")
