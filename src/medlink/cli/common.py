"""What the command modules share: the --precision option, the one-line failure, opening a KB or an index with its KB."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from medlink.errors import MedlinkError

PRECISION_HELP = ("Number format of neural models: auto (bf16 where this CPU runs it faster, measured once per machine; "
                  "else float32), fp32 or bf16. Default: the index's or model's setting (auto); also MEDLINK_PRECISION.")


def use_precision(precision: Optional[str]) -> None:
    """--precision: every encoder of this process (index build, queries, training) uses it."""
    from medlink.encoders.precision import force

    force(precision)


def fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def open_kb(kb: str):
    """A KB file, or 'default' (built on first use)."""
    from medlink.kb.store import KB

    return KB.open(kb)


def index_and_kb(directory: Path, kb: Optional[str]):
    """The KB (given, else the one the index records) and the index loaded against it."""
    from medlink.kb.store import KB
    from medlink.linking.linker import Linker
    from medlink.linking.manifest import read_manifest

    if kb is None:
        recorded = Path(read_manifest(directory)["kb"]["path"])
        if not recorded.is_file():
            raise MedlinkError(f"the KB this index was built from ({recorded}) is not there; give it with --kb (evaluation needs its ids)")
    store = KB.open(kb or recorded)
    return store, Linker.load(directory, store)  # a --kb other than the index's is refused here
