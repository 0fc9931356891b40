"""What every medlink trainer shares: resumable state, AdamW with linear warmup, the optimisation
step, atomic checkpoints, per-epoch records and the final save.

A trainer (bi-encoder, cross-encoder) only says how to build its examples and the loss of one step;
``TrainingRun`` does the rest the same way for both, so an interruption resumes either from the
last checkpoint (model, optimizer, scheduler, position), written atomically.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from medlink.directories import replace_directory
from medlink.kb.store import KB

CHECKPOINT = "checkpoint"


@dataclass
class TrainReport:
    config: dict
    epochs: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    examples: dict = field(default_factory=dict)


def atomic_checkpoint(model, optimizer, scheduler, state: dict, out: Path) -> None:
    """Model (anything with ``save(dir)``), optimizer, scheduler and position, swapped in whole."""
    import torch

    temporary = out / f".{CHECKPOINT}.tmp"
    shutil.rmtree(temporary, ignore_errors=True)
    model.save(temporary)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, temporary / "trainer.pt")
    (temporary / "state.json").write_text(json.dumps(state))
    replace_directory(temporary, out / CHECKPOINT)


class TrainingRun:
    """One training run into ``out``: where it starts (fresh or the checkpoint) and how it steps."""

    def __init__(self, out: Path, resume: bool, seed: int, progress: bool = True):
        import torch

        self.out = Path(out)
        self.out.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(seed)
        self.checkpoint = self.out / CHECKPOINT
        self.resuming = resume and (self.checkpoint / "state.json").is_file()
        self.state = json.loads((self.checkpoint / "state.json").read_text()) if self.resuming else {"epoch": 0, "step": 0, "history": []}
        self.progress = progress
        self.model = self.optimizer = self.scheduler = self.report = None
        self.started = 0.0

    def model_folder(self, base: str | Path | None) -> str | Path | None:
        """The folder to load the model from: the checkpoint when resuming, else ``base``."""
        return self.checkpoint if self.resuming else base

    def prepare(self, model, learning_rate: float, warmup: float, total_steps: int, config: dict, examples: dict) -> None:
        """AdamW with linear warmup over ``model.model``'s parameters, restored from the checkpoint when resuming."""
        import torch
        from transformers import get_linear_schedule_with_warmup

        self.model = model
        self.optimizer = torch.optim.AdamW(model.model.parameters(), lr=learning_rate)
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, int(warmup * total_steps), total_steps)
        if self.resuming:
            saved = torch.load(self.checkpoint / "trainer.pt", weights_only=False)
            self.optimizer.load_state_dict(saved["optimizer"])
            self.scheduler.load_state_dict(saved["scheduler"])
        self.report = TrainReport(config, list(self.state["history"]), examples=examples)
        self.started = time.perf_counter()

    def epochs(self, total: int) -> range:
        return range(self.state["epoch"], total)

    def train_epoch(self, epoch: int, total_epochs: int, steps: int, step_loss: Callable[[int], "torch.Tensor"],  # noqa: F821
                    checkpoint_every: int) -> list[float]:
        """Run steps ``0..steps-1`` of an epoch (after the checkpointed ones when resuming); their losses."""
        import torch
        from tqdm import tqdm

        first_step = self.state["step"] if epoch == self.state["epoch"] else 0
        self.model.model.train()
        losses = []
        bar = tqdm(total=steps, initial=first_step, desc=f"epoch {epoch + 1}/{total_epochs}", disable=not self.progress)
        for step in range(first_step, steps):
            loss = step_loss(step)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.model.parameters(), 1.0)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad()
            losses.append(loss.item())
            bar.update(1)
            bar.set_postfix(loss=f"{np.mean(losses[-20:]):.4f}")
            if (step + 1) % checkpoint_every == 0:
                atomic_checkpoint(self.model, self.optimizer, self.scheduler, {"epoch": epoch, "step": step + 1, "history": self.report.epochs}, self.out)
        bar.close()
        self.model.model.eval()
        return losses

    def end_epoch(self, epoch: int, losses: list[float], dev_accuracy: float | None) -> dict:
        """Record the epoch, print it, and checkpoint its end."""
        record = {"epoch": epoch + 1, "loss": float(np.mean(losses)) if losses else None, "steps": len(losses),
                  "dev_acc@1": dev_accuracy, "seconds": time.perf_counter() - self.started}
        self.report.epochs.append(record)
        if self.progress:
            print(json.dumps(record), flush=True)
        atomic_checkpoint(self.model, self.optimizer, self.scheduler, {"epoch": epoch + 1, "step": 0, "history": self.report.epochs}, self.out)
        return record

    def finish(self, kb: KB, base_model: str | Path | None, **extra) -> TrainReport:
        """Save the model and ``training.json`` in ``out``; the checkpoint is no longer needed."""
        self.report.seconds = time.perf_counter() - self.started
        self.model.save(self.out)
        (self.out / "training.json").write_text(json.dumps({**asdict(self.report), "kb": {"path": str(kb.path), "checksum": kb.checksum},
                                                            "base_model": str(base_model) if base_model else "default", **extra}, indent=2))
        shutil.rmtree(self.checkpoint, ignore_errors=True)
        return self.report
