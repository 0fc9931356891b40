"""``medlink cache``: list and prune the encoded-names cache."""

from __future__ import annotations

import time

import typer

from medlink.cli.common import new_app

app = new_app("See and prune the cache of encoded names ($MEDLINK_HOME/encode-cache).")


@app.command("info")
def cache_info() -> None:
    """List the cached encodings: size, last use, complete or resumable."""
    from medlink.retrieval.encode_cache import cache_dir, cache_entries

    entries = cache_entries()
    for entry in entries:
        used = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.last_used))
        typer.echo(f"{entry.key}\t{entry.bytes / 1e6:.1f} MB\tlast used {used}\t{'complete' if entry.complete else 'partial (resumable)'}")
    typer.echo(f"{len(entries)} entries, {sum(e.bytes for e in entries) / 1e6:.1f} MB in {cache_dir()}")


@app.command("clear")
def cache_clear(
    older_than: float | None = typer.Option(None, "--older-than", min=0, help="Only entries unused for this many days (default: all)."),
) -> None:
    """Remove cached encodings (indexes keep their own vectors; a rebuild of the same names re-encodes them)."""
    from medlink.retrieval.encode_cache import clear_cache

    removed, busy = clear_cache(older_than)
    typer.echo(
        f"removed {len(removed)} entries, {sum(e.bytes for e in removed) / 1e6:.1f} MB"
        + (f"; kept {len(busy)} in use by a running build" if busy else "")
    )
