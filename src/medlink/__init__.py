"""medlink: link medical mentions to concepts in medical terminologies."""

__version__ = "0.1.0"


def annotate(text_or_document, index="default", **options):
    """Find and link the medical mentions in a text: ``medlink.linking.annotator.annotate`` (imported on first use)."""
    from medlink.linking.annotator import annotate as annotate_text

    return annotate_text(text_or_document, index, **options)


def load_index(index="default"):
    """A ``Linker`` for an index folder, or ``default`` / ``default-dense`` (built on first use) as the CLI reads them:
    ``medlink.load_index().link(["heart attack"])``."""
    from medlink.linking.index import resolve_index
    from medlink.linking.linker import Linker

    return Linker.load(resolve_index(index))
