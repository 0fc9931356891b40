"""Aligning one terminology to another (papers 003 and 002): candidates from the target's names for each source
concept's alias set, scoring (lexical fusion, optionally a bi-encoder and a trained cross-encoder aligner), SSSOM out,
and carrying a target's metadata into the source through the mappings (``medlink kb augment``)."""
