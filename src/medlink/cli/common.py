"""What the command modules share: the --precision option, the one-line failure, opening a KB or an index with its KB."""

from __future__ import annotations

import atexit
import re
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

import typer

PRECISION_HELP = (
    "Number format of neural models: auto (bf16 where this CPU runs it faster, measured once per machine, else "
    "float32; int8 for encoding), fp32, bf16, or int8 (encoding only). Default: the index's or model's setting; "
    "also MEDLINK_PRECISION. docs/reference.md, Precision."
)


def quiet_option() -> typer.models.OptionInfo:
    """The ``-q/--quiet`` every long-running command takes (pass its value to ``quiet_phases``)."""
    return typer.Option(False, "--quiet", "-q", help="No progress bars or phase lines (warnings and errors still show).")


def quiet_phases(quiet: bool) -> None:
    """``--quiet``: no progress bar and no phase line ("medlink: indexing ...") for the rest of this command; warnings and
    errors still show."""
    if not quiet:
        return
    import logging

    from medlink.progress import silence_bars

    try:  # typer runs its commands on a copy of click of its own: their context is on that copy's stack
        from typer._click.globals import get_current_context
    except ImportError:
        from click import get_current_context

    logger = logging.getLogger("medlink")
    before, bars_before = logger.level, silence_bars(True)
    logger.setLevel(logging.WARNING)
    context = get_current_context(silent=True)
    if context is not None:  # in-process callers (tests, scripts) get both back when the command ends
        context.call_on_close(lambda: (logger.setLevel(before), silence_bars(bars_before)))


# what an option's value looks like in --help (instead of <str>, <path>, <int range>), by parameter name
METAVARS = {
    "index": "INDEX",
    "kb": "KB",
    "out": "PATH",
    "config": "CONFIG",
    "memory": "FORMAT:PATH",
    "dataset": "FORMAT:PATH",
    "dev": "FORMAT:PATH",
    "train": "FORMAT:PATH",
    "input_path": "FILE",
    "input_format": "FORMAT",
    "generators": "NAMES",
    "prefer_prefix": "PREFIX",
    "bi_encoder": "packaged|DIR",
    "precision": "auto|fp32|bf16|int8",
    "search": "STAGES",
    "pairs": "DIR",
    "model": "DIR",
    "candidates_model": "DIR",
    "config_file": "CONFIG",
    "tasks": "TASKS",
    "concept_text": "name|alias|entity",
    "pooling": "mean|cls",
    "keep": "CHARS",
    "learning_rate": "RATE",
    "tau": "T",
    "kg_weight": "W",
    "dev_fraction": "F",
    "older_than": "DAYS",
    "output_format": "FORMAT",
    "tagger": "DIR",
    "exclude_names": "FILE",
    "abbreviation_choice": "long|best",
    "calibration_model": "auto|trees|logistic",
    "dev_mappings": "FILE",
    "consistency": "both|propagate|vote|off",
    "overlap": "longest|all",
    "combine": "union|confirmed|confirmed+missed|learned",
    "selector": "FILE",
    "documents": "FORMAT:PATH",
    "finder": "dictionary|tagger|both|given",
}


ARGUMENTS = {"arguments": "[OUT] FORMAT:PATH", "mentions": "MENTION", "sources": "FORMAT:PATH", "texts": "NAME", "concept_id": "ID"}


def new_app(help: str | None = None) -> typer.Typer:
    """A command group as every medlink command shows it: plain help (flags without a type), -h as well as --help."""
    return typer.Typer(
        help=help,
        no_args_is_help=help is not None,
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
    )


def with_metavars(command) -> None:
    """Give every option that takes a value a metavar saying what it is (``FORMAT:PATH``, ``N``), recursively."""
    for param in getattr(command, "params", []):
        if param.param_type_name == "argument":
            if param.metavar is None:
                param.metavar = ARGUMENTS.get(param.name, param.name.upper()) + ("..." if param.nargs != 1 else "")
            param.display_type_rich = lambda ctx: None  # the metavar says what it is; no Python type (<list[str]>) beside it
        if getattr(param, "is_flag", False) or param.param_type_name != "option" or param.metavar is not None:
            continue
        kind = param.bare_type() if hasattr(param, "bare_type") else ""
        param.metavar = METAVARS.get(param.name) or (
            "N" if kind.startswith("int") else "X" if kind.startswith("float") else param.name.upper()
        )
    for sub in getattr(command, "commands", {}).values():
        if sub.short_help is None and sub.help:
            sub.short_help = first_sentence(sub.help)  # click would cut it at ~45 characters with "..."; it wraps instead
        with_metavars(sub)


def first_sentence(text: str) -> str:
    """The first sentence of a command's help, as its line in the parent's command list."""
    paragraph = text.strip().split("\n\n")[0]
    return re.split(r"(?<=\.)\s", " ".join(paragraph.split()), maxsplit=1)[0].rstrip(".")


def use_precision(precision: str | None) -> None:
    """--precision: every encoder of this process (index build, queries, training) uses it."""
    from medlink.encoders.precision import force

    force(precision)


def fail(message: str, code: int = 2) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def one_input(paths: list[Path], arguments: Sequence[str], undone: str) -> Path | None:
    """The one ``--input`` file. A repeated option would keep its last file alone, silently; a shell pattern
    ("--input notes/*.txt") gives the option its first file and the arguments the rest: both are refused."""
    if len(paths) > 1:
        fail(f"--input takes one file, not {len(paths)} ({', '.join(map(str, paths))}); {undone}: run once per file, or join them into one")
    for named in files_named(arguments) if paths else ():
        fail(
            f"--input takes one file; {named!r} is another (a shell pattern gives several); {undone}: run once per file, or join them into one"
        )
    return paths[0] if paths else None


def files_named(texts: Sequence[str]) -> list[str]:
    """The arguments that are a file's path ("notes.txt")."""
    return [text for text in texts if text.strip() and "\n" not in text and is_a_file(text)]


def is_a_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):  # a name too long for the file system is no file's
        return False


def open_kb(kb: str):
    """A KB file, or 'default' (built on first use)."""
    from medlink.kb.store import KB

    return KB.open(kb)


_HELD_LOCKS = ExitStack()
atexit.register(_HELD_LOCKS.close)


def hold_writer_lock(output: Path) -> None:
    """Hold the writer's lock on ``output`` from now until the process ends: a second run writing it is refused at
    once, naming this one (``medlink.locks``)."""
    from medlink.locks import output_lock

    _HELD_LOCKS.enter_context(output_lock(Path(output)))
