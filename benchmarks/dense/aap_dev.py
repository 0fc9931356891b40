"""AskAPatient fold-0 validation for candidate models: how a fine-tuning recipe is chosen (never on test).

    python benchmarks/dense/aap_dev.py NAME=MODEL_DIR [NAME=MODEL_DIR ...]   (MODEL_DIR 'default' = packaged MiniLM)
    python benchmarks/dense/aap_dev.py --bi-encoder MODEL_DIR --cross-encoders NAME=CE_DIR [NAME=CE_DIR ...]
    python benchmarks/dense/aap_dev.py --fuse NAME=MODEL_DIR NAME=MODEL_DIR [...]

For each bi-encoder: dense over the ontology names + memory (fold-0 train mentions), alone and fused with
the tuned TF-IDF at weights (dense, TF-IDF) = (1, 0.25) and (1, 0.5); Acc@1 on fold-0 validation, and
for dense alone the seen / unseen mention split (is the mention's text among the fold-0 training mentions?).
With ``--cross-encoders``: each cross-encoder reranks that bi-encoder's candidates (fused at (1, 0) and
(1, 0.25)); printed is the best Acc@1 over rerank_linking.py's (top, weight) grid, and the (top, weight) giving it.
With ``--fuse``: the bi-encoders fused, over dense_ensemble.py's weight grid (first model 1; the others and
TF-IDF vary), Acc@1 per setting: does a second model add anything?
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for benchmarks.* imports
from benchmarks._common.harness import model_spec  # noqa: E402
from benchmarks.dense.dense_ensemble import ensemble_config, evaluate, weight_grid  # noqa: E402
from benchmarks.dense.dense_linking import CONFIGS, Run, aap_kb, aap_split, hybrid_config, score_rankings  # noqa: E402
from benchmarks.rerank.rerank_linking import TOPS, WEIGHTS, Reranked  # noqa: E402

from medlink.eval import evaluate_rankings, load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402
from medlink.rerank.cross_encoder import CrossEncoderReranker  # noqa: E402

WEIGHTS_DENSE_TFIDF = ((1.0, 0.0), (1.0, 0.25), (1.0, 0.5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", help="NAME=DIR: bi-encoders, or cross-encoders with --cross-encoders")
    parser.add_argument("--bi-encoder", default=None, help="the bi-encoder whose candidates the cross-encoders rerank")
    parser.add_argument("--cross-encoders", action="store_true")
    parser.add_argument("--fuse", action="store_true", help="fuse the bi-encoders (two or more) and print every weight setting")
    args = parser.parse_args()
    kb = aap_kb(Path(tempfile.gettempdir()) / "medlink-bench")
    equivalent = equivalent_ids_from_kb(kb)
    validation = load_dataset(aap_split(0, "validation"))
    memory = memory_from_datasets(kb, [aap_split(0, "train")])
    train = load_dataset(aap_split(0, "train"))
    if args.fuse:
        models = dict(model_spec(spec) for spec in args.models)
        if len(models) < 2:
            parser.error("--fuse needs two or more NAME=DIR bi-encoders")
        linker = Linker.build(kb, ensemble_config(models, CONFIGS / "askapatient_lexical.json"), memory)
        for weights in weight_grid(list(models)):
            print(weights, f"{evaluate(linker, validation, equivalent, weights)['acc@1']:.4f}", flush=True)
        return
    if not args.cross_encoders:
        for spec in args.models:
            name, model = model_spec(spec)
            run = Run(Linker.build(kb, hybrid_config(model, CONFIGS / "askapatient_lexical.json"), memory), validation, equivalent)
            print(name, " | ".join(f"{w}: {run.evaluate(run.hybrid(w))['acc@1']:.4f}" for w in WEIGHTS_DENSE_TFIDF), flush=True)
            split = evaluate_rankings(run.tuner.rankings(run.dense_only), validation, equivalent_ids=equivalent, train=train, records=False).subpopulations
            print("  dense alone:", " | ".join(f"{group}: n {split[group]['n']}, Acc@1 {split[group]['acc@1']:.4f}"
                                               for group in ("seen mention", "unseen mention")), flush=True)
        return
    if not args.bi_encoder:
        parser.error("--cross-encoders needs --bi-encoder")
    linker = Linker.build(kb, hybrid_config(model_spec(f"bi={args.bi_encoder}")[1], CONFIGS / "askapatient_lexical.json"), memory)
    for spec in args.models:
        name, model = model_spec(spec)
        reranker = CrossEncoderReranker.build({"model": model})
        cells = []
        for dense, tfidf in WEIGHTS_DENSE_TFIDF[:2]:
            run = Reranked(linker, reranker, validation, {"dense": dense, "tfidf": tfidf})
            best = max(((score_rankings(run.ranked(t, w), validation, equivalent)["acc@1"], t, w) for t in TOPS for w in WEIGHTS),
                       key=lambda r: (r[0], -r[1], -r[2]))
            cells.append(f"{(dense, tfidf)}: {best[0]:.4f} (top {best[1]}, weight {best[2]})")
        print(name, " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
