"""Mention finders: what turns running text into spans to link (a dictionary over the KB's names, a trained tagger)."""

from medlink.text.finders.base import OVERLAP_POLICIES, MentionFinder, resolve_overlaps

__all__ = ["MentionFinder", "OVERLAP_POLICIES", "resolve_overlaps"]
