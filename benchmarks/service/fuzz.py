"""API fuzzing: schemathesis against the served OpenAPI schema, then the named kinds of bad input, one request each.

    python benchmarks/service/fuzz.py [--index default] [--max-examples 150]

schemathesis (its examples, coverage and fuzzing phases; checks: no server error, responses fit the schema) sends
generated requests to every endpoint but /admin/reload; its HAR report gives the count of requests and of answers
by status. Then malformed JSON, wrong types, empty and oversized bodies, invalid UTF-8 and unknown concept ids are
sent by hand, each answer's status and message kept. Targets: >= 1,000 generated requests, 0 answers >= 500.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import command_line, publish  # noqa: E402
from benchmarks.service.server import medlink_serve  # noqa: E402

JSON = {"content-type": "application/json"}
LOAD_AT_START = [round(x, 2) for x in os.getloadavg()]  # the machine is shared: how busy it was when the run began
BAD = [  # (what, method, path, body bytes)
    ("malformed JSON", "POST", "/link", b'{"mentions": ["heart attack"'),
    ("wrong type: mentions a string", "POST", "/link", b'{"mentions": "heart attack"}'),
    ("wrong type: a number for a mention", "POST", "/link", b'{"mentions": [42]}'),
    ("wrong type: ground_multi given an object", "POST", "/ground_multi", b'{"text": "heart attack"}'),
    ("empty body", "POST", "/link", b""),
    ("empty body", "POST", "/annotate", b""),
    ("empty object", "POST", "/annotate", b"{}"),
    ("oversized body (3 MB)", "POST", "/annotate", json.dumps({"text": "chest pain " * 300_000}).encode()),
    ("too many mentions (1,001)", "POST", "/link", json.dumps({"mentions": ["MI"] * 1001}).encode()),
    ("top_k over the limit", "POST", "/link", b'{"mentions": ["MI"], "top_k": 1000}'),
    ("invalid UTF-8", "POST", "/link", b'{"mentions": ["\xff\xfe heart"]}'),
    ("a lone surrogate", "POST", "/ground", b'{"text": "\\ud800"}'),
    ("an unknown key", "POST", "/annotate", b'{"txt": "chest pain"}'),
    ("unknown concept id", "GET", "/concepts/HP:9999999", b""),
    ("unknown concept id with a slash", "GET", "/concepts/a/b/../c", b""),
    ("a damaged PubTator file", "POST", "/annotate", b'{"content": "1|t|x\\n1\\tbad\\n", "format": "pubtator"}'),
]


def schemathesis_run(url: str, max_examples: int, folder: Path) -> dict:
    har = folder / "schemathesis.har"
    command = [sys.executable, "-m", "schemathesis.cli", "run", f"{url}/openapi.json", "--max-examples", str(max_examples)]
    command += ["--checks", "not_a_server_error,response_schema_conformance", "--phases", "examples,coverage,fuzzing", "--seed", "51"]
    command += ["--generation-database", "none", "--exclude-path", "/admin/reload", "--request-timeout", "60", "--no-color"]
    command += ["--report", "har", "--report-har-path", str(har), "--workers", "2"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=folder)
    entries = json.loads(har.read_text())["log"]["entries"]
    statuses = collections.Counter(entry["response"]["status"] for entry in entries)
    return {
        "command": " ".join(command[1:]).replace(url, "URL").replace(str(har), "HAR").replace(sys.executable, "python"),
        "exit_status": done.returncode,
        "requests": len(entries),
        "by_status": {str(code): count for code, count in sorted(statuses.items())},
        "responses_500_or_more": sum(count for code, count in statuses.items() if code >= 500),
        "summary": done.stdout.strip().splitlines()[-60:],
    }


def bad_inputs(url: str) -> list[dict]:
    out = []
    with httpx.Client(base_url=url, timeout=60) as http:
        for what, method, path, body in BAD:
            answer = http.request(method, path, content=body or None, headers=JSON if method == "POST" else None)
            try:
                detail = answer.json().get("detail")
            except ValueError:
                detail = answer.text[:200]
            out.append({"input": what, "request": f"{method} {path}", "status": answer.status_code, "detail": str(detail)[:240]})
            print(json.dumps(out[-1]), flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", default="default")
    parser.add_argument("--max-examples", type=int, default=150)
    parser.add_argument("--name", default="service_fuzz", help="The results file: benchmarks/results/NAME.json.")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="medlink-bench-fuzz-"))
    with medlink_serve(args.index, "--workers", "2", log=folder / "serve.log") as (url, _seconds, _process):
        fuzzed = schemathesis_run(url, args.max_examples, folder)
        print(json.dumps({k: v for k, v in fuzzed.items() if k != "summary"}), flush=True)
        handmade = bad_inputs(url)
    server_errors = [line for line in (folder / "serve.log").read_text().splitlines() if "internal error" in line]
    publish(
        args.name,
        {"command": command_line(__file__, sys.argv[1:]), "load_average_at_start": LOAD_AT_START, "index": args.index, "schemathesis": fuzzed, "bad_inputs": handmade,
         "server_log_internal_errors": len(server_errors)},
    )  # fmt: skip


if __name__ == "__main__":
    main()
