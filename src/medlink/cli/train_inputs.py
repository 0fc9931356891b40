"""What the ``medlink train`` commands read besides their flags: a --config file of settings, and annotated mentions
(each dataset's unusable ones counted on stderr)."""

from __future__ import annotations

from pathlib import Path

import typer

from medlink.cli.common import fail
from medlink.errors import MedlinkError


def settings_from(ctx: typer.Context, cls, config_file: Path | None, flags: dict):
    """``cls``'s settings: the --config file's values, and each flag the command line gave (flags win; a flag left at
    its default does not override the file). ``flags``: field -> (CLI parameter name, value)."""
    from typer._click.core import ParameterSource

    from medlink.params import read_settings_file

    settings = read_settings_file(config_file, cls) if config_file else {}
    for field, (parameter, value) in flags.items():
        if field not in settings or ctx.get_parameter_source(parameter) == ParameterSource.COMMANDLINE:
            settings[field] = value
    try:
        return cls(**settings)
    except MedlinkError as error:  # a value out of range: say where it came from
        raise MedlinkError(f"{config_file}: {error}" if config_file else str(error)) from None


CONFIG_HELP = (
    "A JSON file of training settings (keys as in training.json's 'config'; a training.json itself works); "
    "flags given on the command line win over it."
)


def training_mentions(store, datasets: list[str], option: str, required: bool = False) -> list[tuple[str, str]]:
    """Annotated (mention, concept) pairs of ``datasets``; says on stderr how many were left out and why.
    ``required``: given datasets without one usable mention are an error."""
    from medlink.training.examples import counted_supervised_mentions

    if not datasets:
        return []
    mentions, skipped = counted_supervised_mentions(store, datasets)
    if skipped:
        reasons = ", ".join(f"{count} {reason}" for reason, count in skipped.items())
        typer.echo(f"{option}: {len(mentions)} mentions used, {sum(skipped.values())} left out ({reasons})", err=True)
    if not mentions and required:
        fail(f"{option}: no mention has its gold concept in the KB")
    return mentions


DOCUMENTS = "pubtator"  # the dataset format whose mentions come with their text (what --context reads)


def cross_mentions(store, datasets: list[str], option: str, context: int, required: bool = False) -> list:
    """A cross-encoder's (mention, concept) pairs of ``datasets``, each distinct pair once: PubTator annotations through
    ``pubtator_mentions`` (with ``context``: each in its text, a ``Mention``), other formats as ``_training_mentions``."""
    from collections import Counter

    from medlink.training.cross_trainer import pubtator_mentions

    documents = [spec for spec in datasets if spec.startswith(f"{DOCUMENTS}:")]
    mentions: list = training_mentions(store, [spec for spec in datasets if spec not in documents], option)
    skipped: Counter = Counter()
    for spec in documents:
        found, left_out = pubtator_mentions(store, spec.partition(":")[2], context)
        mentions += found if context else [(mention.text, concept) for mention, concept in found]
        skipped += left_out
    if skipped:
        reasons = ", ".join(f"{count} {reason}" for reason, count in skipped.items())
        typer.echo(f"{option} ({DOCUMENTS}): {sum(skipped.values())} annotations left out ({reasons})", err=True)
    if datasets and not mentions and required:
        fail(f"{option}: no mention has its gold concept in the KB")
    return list(dict.fromkeys(mentions))
