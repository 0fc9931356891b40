"""The span selector, in one place: a model that chooses between a tagger's and the dictionary's spans
(``annotate --combine learned``). ``model``: the selector and the finder that uses it; ``fitting``: fitting it on
annotated documents (``medlink train selector``); ``wiring``: which selector file a run uses, and whether it suits."""
