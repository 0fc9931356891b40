"""AskAPatient fold-0 validation for candidate models: how a fine-tuning recipe is chosen (never on test).

    python benchmarks/aap_dev.py NAME=MODEL_DIR [NAME=MODEL_DIR ...]   (MODEL_DIR 'default' = packaged MiniLM)

For each model: dense over the ontology names + memory (fold-0 train mentions), alone and fused with
the tuned TF-IDF at weights (dense, TF-IDF) = (1, 0.25) and (1, 0.5); Acc@1 on fold-0 validation.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import model_spec  # noqa: E402
from dense_linking import CONFIGS, Run, aap_kb, aap_split, hybrid_config  # noqa: E402

from medlink.eval import load_dataset  # noqa: E402
from medlink.eval.metrics import equivalent_ids_from_kb  # noqa: E402
from medlink.linking.linker import Linker  # noqa: E402
from medlink.linking.memory import memory_from_datasets  # noqa: E402

WEIGHTS = ((1.0, 0.0), (1.0, 0.25), (1.0, 0.5))


def main() -> None:
    kb = aap_kb(Path(tempfile.gettempdir()) / "medlink-bench")
    equivalent = equivalent_ids_from_kb(kb)
    validation = load_dataset(aap_split(0, "validation"))
    for spec in sys.argv[1:]:
        name, model = model_spec(spec)
        config = hybrid_config(model, CONFIGS / "askapatient_lexical.json")
        run = Run(Linker.build(kb, config, memory_from_datasets(kb, [aap_split(0, "train")])), validation, equivalent)
        print(name, " | ".join(f"{w}: {run.evaluate(run.hybrid(w))['acc@1']:.4f}" for w in WEIGHTS), flush=True)


if __name__ == "__main__":
    main()
