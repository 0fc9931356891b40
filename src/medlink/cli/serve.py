"""``medlink serve``: the HTTP service and its web page (a top-level command, no group); needs the serve extra."""

from __future__ import annotations

from pathlib import Path

import typer

from medlink.cli.common import fail, new_app

app = new_app()  # its command joins the main app's top level
LOOPBACK = ("127.0.0.1", "::1", "localhost")


@app.command("serve")
def serve(
    index: str = typer.Option(
        "default", "--index", help="Index directory, 'default' (lexical, built on first use) or 'default-dense' (the dense extra)."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; the default answers this machine only."),
    port: int = typer.Option(8000, "--port", min=1, max=65535, help="Port to listen on."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker processes, each with the index loaded once."),
    api_key_file: Path | None = typer.Option(
        None, "--api-key-file", help="File whose first line is the API key: requests must send 'Authorization: Bearer KEY'."
    ),
    max_body_bytes: int = typer.Option(2_000_000, "--max-body-bytes", min=1, help="Largest request body; larger gets 413."),
    max_mentions: int = typer.Option(1000, "--max-mentions", min=1, help="Mentions per /link or /ground_multi request."),
    max_documents: int = typer.Option(100, "--max-documents", min=1, help="Documents per /annotate request."),
    max_text_chars: int = typer.Option(200_000, "--max-text-chars", min=1, help="Characters per document (and per mention's context)."),
    max_mention_chars: int = typer.Option(1000, "--max-mention-chars", min=1, help="Characters per mention."),
    max_candidates: int = typer.Option(50, "--max-candidates", min=1, help="Largest top_k a request may ask for."),
    page: bool = typer.Option(True, "--page/--no-page", help="Serve the web page at / (the API is served either way)."),
) -> None:
    """Serve linking over HTTP, with a web page: /link, /annotate, Gilda's /ground; the API reference at /docs."""
    try:
        from medlink.serve.app import run
        from medlink.serve.settings import Limits, ServeSettings, read_api_key
    except ImportError as error:
        fail(f"the service needs the serve extra ({error.name} is missing): pip install 'medlink[serve]'")
    if api_key_file is not None:
        read_api_key(api_key_file)  # refused now, with a message, rather than in each worker
    elif host not in LOOPBACK:
        typer.echo(f"warning: listening on {host} without --api-key-file: anyone who reaches this port can use the service", err=True)
    _check_index(index)
    limits = Limits(max_body_bytes, max_mentions, max_documents, max_text_chars, max_mention_chars, max_candidates)
    settings = ServeSettings(index, host, port, workers, str(api_key_file.resolve()) if api_key_file else None, limits, page)
    run(settings)


def _check_index(index: str) -> None:
    """The index refused here, by name, before any worker starts (a default one built now, once): a worker that cannot
    load it would otherwise fail at start-up with a traceback, and several would leave their supervisor waiting."""
    from medlink.errors import MedlinkError
    from medlink.serve.engine import check_on_disk

    try:
        check_on_disk(index)
    except MedlinkError as error:
        fail(str(error))
