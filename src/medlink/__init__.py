"""medlink: link medical mentions to concepts in medical terminologies."""

__version__ = "0.1.0"


def annotate(text_or_document, index="default", **options):
    """Find and link the medical mentions in a text: ``medlink.linking.annotator.annotate`` (imported on first use)."""
    from medlink.linking.annotator import annotate as annotate_text

    return annotate_text(text_or_document, index, **options)
