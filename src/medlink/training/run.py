"""What every medlink trainer shares: resumable state, AdamW with linear warmup, the optimisation
step, atomic checkpoints, per-epoch records and the final save.

A trainer (bi-encoder, cross-encoder) only says how to build its examples and the loss of one step;
``TrainingRun`` does the rest the same way for both, so an interruption resumes either from the
last checkpoint (model, optimizer, scheduler, position), written atomically.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from medlink.directories import is_staging, output_lock, refuse_foreign, refuse_symlink, staged_directory, write_atomic
from medlink.errors import MedlinkError
from medlink.inventory import claim
from medlink.kb.store import KB
from medlink.progress import bar as progress_bar

CHECKPOINT = "checkpoint"


@dataclass
class TrainReport:
    config: dict
    epochs: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    examples: dict = field(default_factory=dict)
    precision: str | None = None  # what the config's precision resolved to on this machine (fp32 or bf16)


def atomic_checkpoint(model, optimizer, scheduler, state: dict, out: Path) -> None:
    """Model (anything with ``save(dir)``), optimizer, scheduler, torch's random state and position, swapped in whole.

    Why the random state: dropout draws from it, so a run resumed without it takes other dropout masks from the
    checkpoint on and ends with other weights than the same run uninterrupted."""
    import torch

    claim(out / CHECKPOINT, directory=True, create=True)  # first: a kill after the swap cannot leave it unrecorded
    # on failure the previous checkpoint stays the one to resume from
    with staged_directory(out / CHECKPOINT, staging=out / f".{CHECKPOINT}.tmp") as temporary:
        model.save(temporary)
        torch.save(
            {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(), "torch_rng": torch.get_rng_state()},
            temporary / "trainer.pt",
        )
        (temporary / "state.json").write_text(json.dumps(state))


def check_training_numbers(
    learning_rate: float, warmup: float, checkpoint_every: int, *, at_least: dict[str, tuple[int, int]] = None, **positive: float
) -> None:
    """Settings that would make training diverge or do nothing fail before any work (``positive``: must be > 0;
    ``at_least``: name -> (value, minimum), e.g. epochs 1, a contrastive batch 2)."""
    if at_least is None:
        at_least = {}
    for name, (value, minimum) in at_least.items():
        if value < minimum:
            raise MedlinkError(f"{name} (--{name.replace('_', '-')}) must be at least {minimum}, not {value}")
    if not learning_rate > 0:
        raise MedlinkError(f"the learning rate (--lr) must be > 0, not {learning_rate}")
    if not 0 <= warmup < 1:
        raise MedlinkError(f"warmup must be a fraction of the steps in [0, 1), not {warmup}")
    if checkpoint_every < 1:
        raise MedlinkError(f"checkpoint_every must be at least 1, not {checkpoint_every}")
    for name, value in positive.items():
        if not value > 0:
            raise MedlinkError(f"{name} (--{name.replace('_', '-')}) must be > 0, not {value}")


def check_training_output(out: Path, inputs: dict[str, Path | str | None] | None = None) -> None:
    """``out`` must be new, empty (but for a killed run's staging folders), or an earlier training output (a model
    with training.json, a checkpoint, or an aligner medlink wrote) holding nothing medlink did not write there; and none
    of the run's ``inputs`` (option -> model folder it reads): a mistyped ``--out`` must not scatter model files into
    someone's folder, nor overwrite the model being trained from."""
    refuse_symlink(out)
    if out.exists() and not out.is_dir():
        raise MedlinkError(f"--out {out} is a file; give a folder for the model (nothing was written)")
    for option, path in (inputs or {}).items():
        if path is not None and Path(path).exists() and Path(path).resolve() == out.resolve():
            raise MedlinkError(f"--out {out} is the {option} this run reads; write the new model to another folder (nothing was written)")
    from medlink.align.scoring import is_aligner_folder

    earlier_output = (
        (out / "training.json").is_file() or (out / CHECKPOINT).is_dir() or is_aligner_folder(out)
    )  # a calibration-only aligner
    if out.is_dir() and not earlier_output and any(not is_staging(path.name) for path in out.iterdir()):
        raise MedlinkError(
            f"--out {out} is a folder that holds no earlier training output (no training.json or checkpoint/); "
            "it is left as it is: give a new or empty folder (nothing was written)"
        )
    if earlier_output:
        refuse_foreign(out)


class TrainingRun:
    """One training run into ``out``: where it starts (fresh or the checkpoint) and how it steps."""

    def __init__(self, out: Path, resume: bool, seed: int, progress: bool = True, divergence_hint: str = "a lower --lr"):
        """``divergence_hint``: what to change when the loss becomes NaN (each trainer knows its own options)."""
        import torch

        self.out = Path(out)
        check_training_output(self.out)  # created by the first checkpoint: a run that fails to start leaves no empty folder
        self._lock = (
            ExitStack()
        )  # one run per --out at a time: a second is refused at once (released by finish, or when the run is dropped)
        self._lock.enter_context(output_lock(self.out))
        torch.manual_seed(seed)  # a new head's initial weights, drawn when the model loads
        self.seed = seed
        self.checkpoint = self.out / CHECKPOINT
        self.resuming = resume and (self.checkpoint / "state.json").is_file()
        if resume and not self.resuming and (self.out / "training.json").is_file():
            self._lock.close()
            raise MedlinkError(
                f"--resume: {self.out} holds a finished model (training.json), nothing to resume; train again "
                "without --resume (it replaces the model) or into a new --out"
            )
        if resume and not self.resuming:
            print(f"--resume: no checkpoint in {self.out}, training from the start", file=sys.stderr, flush=True)
        self.state = json.loads((self.checkpoint / "state.json").read_text()) if self.resuming else {"epoch": 0, "step": 0, "history": []}
        self.progress = progress
        self.model = self.optimizer = self.scheduler = self.report = None
        self.started = 0.0
        self.divergence_hint = divergence_hint
        self.fingerprint: dict = {}  # the settings and data sizes a checkpoint may only be resumed with
        self.first_step = 0
        self.epoch_data: dict = {}  # what an epoch drew at its start from the model as it was then (kept with mid-epoch checkpoints)

    def model_folder(self, base: str | Path | None) -> str | Path | None:
        """The folder to load the model from: the checkpoint when resuming, else ``base``."""
        return self.checkpoint if self.resuming else base

    def prepare(self, model, learning_rate: float, warmup: float, total_steps: int, config: dict, examples: dict) -> None:
        """AdamW with linear warmup over ``model.model``'s parameters, restored from the checkpoint when resuming."""
        import torch
        from transformers import get_linear_schedule_with_warmup

        self.fingerprint = json.loads(json.dumps({"config": config, "examples": examples}))
        if self.resuming:
            self._check_resumable()
        self.model = model
        self.optimizer = torch.optim.AdamW(model.model.parameters(), lr=learning_rate)
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, int(warmup * total_steps), total_steps)
        if self.resuming:
            try:  # weights_only: tensors and numbers only, so a crafted checkpoint cannot run code
                saved = torch.load(self.checkpoint / "trainer.pt", weights_only=True)
            except Exception as error:  # noqa: BLE001 - torch raises UnpicklingError, RuntimeError or EOFError for a bad file
                raise MedlinkError(
                    f"{self.checkpoint / 'trainer.pt'}: not a checkpoint medlink wrote ({type(error).__name__}); "
                    "train anew without --resume"
                ) from error
            self.optimizer.load_state_dict(saved["optimizer"])
            self.scheduler.load_state_dict(saved["scheduler"])
            if "torch_rng" in saved:  # a checkpoint without it resumes with the seed's state
                torch.set_rng_state(saved["torch_rng"])
        else:  # dropout's draws start from the seed whatever loading the model drew (transformers draws more on a process's first load)
            torch.manual_seed(self.seed)
        self.report = TrainReport(config, list(self.state["history"]), examples=examples, precision=model.precision)
        self.started = time.perf_counter()

    def _check_resumable(self) -> None:
        """A checkpoint continues only the run that wrote it: other settings or data would silently mix two runs."""
        saved = self.state.get("fingerprint")
        if saved is None:
            return  # a checkpoint without a fingerprint
        differences = [
            f"{section}.{key}: checkpoint {saved[section].get(key)!r}, now {self.fingerprint[section].get(key)!r}"
            for section in ("config", "examples")
            for key in sorted(set(saved[section]) | set(self.fingerprint[section]))
            if saved[section].get(key) != self.fingerprint[section].get(key)
        ]
        if differences:
            raise MedlinkError(
                f"{self.checkpoint}: cannot resume with other settings or data ({'; '.join(differences)}); "
                "resume with the first run's options, or train into a new --out without --resume"
            )

    def _save_checkpoint(self, epoch: int, step: int) -> None:
        state = {"epoch": epoch, "step": step, "history": self.report.epochs, "fingerprint": self.fingerprint}
        atomic_checkpoint(self.model, self.optimizer, self.scheduler, state | ({"epoch_data": self.epoch_data} if step else {}), self.out)

    def resumed_epoch_data(self, epoch: int) -> dict | None:
        """What ``epoch`` drew at its start, when this run resumes it mid-way (the model it drew from is gone), else None."""
        if self.resuming and epoch == self.state["epoch"] and self.state["step"] and "epoch_data" in self.state:
            return self.state["epoch_data"]
        return None

    def epochs(self, total: int) -> range:
        return range(self.state["epoch"], total)

    def train_epoch(
        self,
        epoch: int,
        total_epochs: int,
        steps: int,
        step_loss: Callable[[int], torch.Tensor],  # noqa: F821
        checkpoint_every: int,
    ) -> list[float]:
        """Run steps ``0..steps-1`` of an epoch (after the checkpointed ones when resuming); their losses."""
        import torch

        first_step = self.state["step"] if epoch == self.state["epoch"] else 0
        self.first_step = first_step
        self.model.model.train()
        losses = []
        bar = progress_bar(self.progress, total=steps, initial=first_step, desc=f"epoch {epoch + 1}/{total_epochs}")
        for step in range(first_step, steps):
            loss = step_loss(step)
            if not torch.isfinite(loss):
                bar.close()
                raise MedlinkError(
                    f"training diverged: the loss is {loss.item()} at epoch {epoch + 1}, step {step + 1}; train again "
                    f"with {self.divergence_hint}, into a new --out or without --resume"
                )
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.model.parameters(), 1.0)
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad()
            losses.append(loss.item())
            bar.update(1)
            bar.set_postfix(loss=f"{np.mean(losses[-20:]):.4f}")
            if (step + 1) % checkpoint_every == 0:
                self._save_checkpoint(epoch, step + 1)
        bar.close()
        self.model.model.eval()
        return losses

    def end_epoch(self, epoch: int, losses: list[float], dev_accuracy: float | None) -> dict:
        """Record the epoch, print it, and checkpoint its end."""
        record = {
            "epoch": epoch + 1,
            "loss": float(np.mean(losses)) if losses else None,
            "steps": self.first_step + len(losses),
            "dev_acc@1": dev_accuracy,
            "seconds": time.perf_counter() - self.started,
        }
        if self.first_step:  # resumed mid-epoch: the loss and seconds cover the steps after the checkpoint only
            record["resumed_at_step"] = self.first_step
        self.report.epochs.append(record)
        if self.progress:
            print(json.dumps(record), flush=True)
        self._save_checkpoint(epoch + 1, 0)
        return record

    def finish(self, kb: KB, base_model: str | Path | None, **extra) -> TrainReport:
        """Save the model and ``training.json`` in ``out``; the checkpoint is no longer needed.

        The model is written aside first and moved in, and ``training.json`` comes last: an interruption while
        saving leaves the earlier files (and the checkpoint to resume from), and a folder without training.json
        is never mistaken for a finished model."""
        self.report.seconds = time.perf_counter() - self.started
        with staged_directory(self.out, staging=self.out / ".model.tmp", merge=True) as staged:
            self.model.save(staged)
            (self.out / "training.json").unlink(missing_ok=True)  # saved: from here until it is written again, the folder is unfinished
        write_atomic(
            self.out / "training.json",
            json.dumps(
                {
                    **asdict(self.report),
                    "kb": {"path": str(kb.path), "checksum": kb.checksum},
                    "base_model": str(base_model) if base_model else "default",
                    **extra,
                },
                indent=2,
            ),
        )
        self._drop_checkpoint()
        self._lock.close()
        return self.report

    def _drop_checkpoint(self) -> None:
        """The checkpoint moved aside whole, then deleted: an interrupt while deleting leaves a staging folder, not a
        checkpoint/ that ``--resume`` would take for a run to continue."""
        doomed = self.out / f".{CHECKPOINT}.done.tmp"
        shutil.rmtree(doomed, ignore_errors=True)
        if self.checkpoint.is_dir():
            self.checkpoint.rename(doomed)
        shutil.rmtree(doomed, ignore_errors=True)
