"""The ``medlink`` command: one sub-command per job, each a thin shell over the library.

One module per command group (``kb``, ``index``, ``train``, ``cache``; ``linking`` holds the top-level ``link``,
``eval`` and ``tune``; ``score`` scores annotated documents); this module assembles them and is the console entry point (``medlink.cli:main``).
"""

from __future__ import annotations

import logging
import os
import sys

import typer

from medlink.cli import align, annotate, cache, index, kb, linking, score, serve, train, train_documents
from medlink.cli.common import new_app, with_metavars
from medlink.encoders import precision
from medlink.errors import MedlinkError

app = new_app("Link medical mentions to concepts in medical terminologies.")
app.add_typer(annotate.app)  # annotate, then link, eval, tune: top-level commands, listed first
app.add_typer(linking.app)
app.add_typer(align.app)  # medlink align
app.add_typer(score.app)  # medlink score: annotated documents against gold ones
app.add_typer(serve.app)  # medlink serve: the HTTP service and its web page
app.add_typer(kb.app, name="kb")
app.add_typer(index.app, name="index")
train.app.add_typer(train_documents.app)  # tagger, selector
app.add_typer(train.app, name="train")
app.add_typer(cache.app, name="cache")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"medlink {version('medlink')}")
        raise typer.Exit()


@app.callback()
def _options(
    show_version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True, help="Print medlink's version and exit."),
) -> None:
    """Link medical mentions to concepts in medical terminologies."""


def command():
    """The click command behind ``app``, its options' metavars filled in (what ``main`` runs and the tests inspect)."""
    built = typer.main.get_command(app)
    with_metavars(built)
    return built


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a line is logged (a caller that swaps stderr, a test, keeps the lines)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:
        pass


def _show_progress_lines() -> None:
    """medlink's own INFO lines (phases of long builds) on stderr; other libraries stay at their defaults, and records
    still reach any handler the caller installed."""
    logger = logging.getLogger("medlink")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("medlink: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


INTERNAL_ERROR = (
    "this is a bug in medlink, not a problem with your files or index: please report it with the command you ran and the traceback above"
)
INTERRUPTED = "interrupted; nothing half-written was left"
HOW_TO_CONTINUE = {  # by command: what running it again does with what the interrupted run did
    "train": "run it again with --resume to continue from the last checkpoint",
    "index": "run it again (a dense stage reuses the names it already encoded)",
    "annotate": "with --out, the same command continues where it stopped",
}


def interrupted(argv: list[str]) -> str:
    """The line an interrupted command ends with: what was left, and how to continue that command."""
    command_name = next((arg for arg in argv[1:] if not arg.startswith("-")), "")
    return f"{INTERRUPTED}: {HOW_TO_CONTINUE.get(command_name, 'run it again to start over')}"


def main() -> None:
    """Console entry point: library errors become one clear line and exit code 2."""
    _show_progress_lines()
    try:
        if os.environ.get(precision.ENV):  # refused at once, not only when a command happens to load a neural model
            precision.check_precision(os.environ[precision.ENV], precision.ENV)
        command()(prog_name="medlink")
    except MedlinkError as error:
        typer.echo(f"error: {error}", err=True)
        sys.exit(2)
    except OSError as error:  # a path the system refuses (too long, no permission, disk full): one line, not a traceback
        where = f"{error.filename}: " if error.filename else ""
        typer.echo(f"error: {where}{error.strerror or error}", err=True)
        sys.exit(2)
    except Exception as error:  # a bug in medlink, not in the user's files: said so, with what a report needs
        import traceback

        traceback.print_exc()
        typer.echo(f"internal error ({type(error).__name__}): {INTERNAL_ERROR}", err=True)
        sys.exit(1)
    except KeyboardInterrupt:  # outside a command's run (typer handles those: below)
        typer.echo(interrupted(sys.argv), err=True)
        sys.exit(130)
    except SystemExit as done:
        if done.code == 130:  # typer ends a command's Ctrl-C with a silent exit 130; no medlink command exits so otherwise
            typer.echo(interrupted(sys.argv), err=True)
        raise
