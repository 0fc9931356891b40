"""The KB's calibration fitted in a second process while this one builds the index.

Why: the fit (an index over the KB less its held-out synonyms, its pseudo-mentions linked, the model chosen out of
fold) and the index's own build share nothing for a lexical config, and each keeps one core busy; on two cores the
build then takes about as long as the longer of the two. A dense config's fit encodes names the final index reads back
from the encoding cache, a small KB's fit takes less than a process's start, and a very large KB would hold two
linkers in memory at once: those fit first, in this process. The second process is a fresh interpreter
(``python -m medlink.linking.fit_aside``), not a fork: a library caller's threads and ``__main__`` are left alone.
Its inputs and its answer travel as pickles in a private folder; it is killed if this process stops first.
"""

from __future__ import annotations

import ctypes
import logging
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import medlink
from medlink.errors import MedlinkError

ASIDE_FROM = 5_000  # KB concepts from which the fit earns a second process's start (about a second)
ASIDE_AT_MOST = 500_000  # KB concepts above which two linkers at once would double a large KB's peak memory
INPUTS, ANSWER = "inputs.pickle", "answer.pickle"
ENV = "MEDLINK_FIT_ASIDE"  # 0: always fit in the build's own process
PARENT_DEATH_SIGNAL = 1  # prctl's PR_SET_PDEATHSIG


def fits_aside(kb, config) -> bool:
    """Should ``kb``'s calibration for ``config`` be fitted in a second process? Where there are two cores, the config
    has no dense stage, the KB's size is in range and ``MEDLINK_FIT_ASIDE`` is not 0 (a machine short of memory)."""
    if os.environ.get(ENV, "1").strip() == "0":
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores >= 2 and not any(g.type == "dense" for g in config.generators) and ASIDE_FROM <= len(kb) <= ASIDE_AT_MOST


class NoAnswer(MedlinkError):
    """The second process ended without an answer (killed, out of memory, crashed): the fit can be made here instead."""


@dataclass
class FitAside:
    """A fit running in a second process: ``result()`` waits for its ``fit_on_kb`` answer."""

    process: subprocess.Popen
    folder: tempfile.TemporaryDirectory

    @classmethod
    def start(cls, kb, config, memory) -> FitAside:
        folder = tempfile.TemporaryDirectory(prefix="medlink-fit-")
        with open(Path(folder.name) / INPUTS, "wb") as out:
            pickle.dump({"kb": str(kb.path), "config": config.to_dict(), "memory": memory}, out)
        package_parent = str(Path(medlink.__file__).resolve().parents[1])  # the same medlink, installed or not
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")]))}
        logging.getLogger("medlink").info(
            "index: fitting the probabilities on pseudo-mentions held out of the KB, in a second process beside this build"
        )
        command = [sys.executable, "-m", "medlink.linking.fit_aside", folder.name, str(os.getpid())]
        process = subprocess.Popen(command, env=environment, stdin=subprocess.DEVNULL)
        return cls(process, folder)

    def result(self) -> tuple[dict, dict] | None:
        """``fit_on_kb``'s answer; an error the second process met is raised here, with its message."""
        try:
            code = self.process.wait()
            answer_file = Path(self.folder.name) / ANSWER
            if not answer_file.is_file():
                raise NoAnswer(f"the second process fitting the index's probabilities {ended_how(code)} without an answer")
            with open(answer_file, "rb") as answer:
                kind, value = pickle.load(answer)
            if kind == "error":
                raise MedlinkError(value)
            return value
        finally:
            self.stop()

    def stop(self) -> None:
        """End the second process (if it still runs) and remove its folder."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.folder.cleanup()


def ended_how(code: int) -> str:
    """A process's exit status in words: killed by which signal (SIGKILL: most often the out-of-memory killer)."""
    if code >= 0:
        return f"exited with status {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"was killed ({name}{': out of memory?' if -code == signal.SIGKILL else ''})"


def end_with(parent: int, folder: str) -> None:
    """End this process, its folder removed, when the first one ends without stopping it (killed: it cleans up nothing);
    Ctrl-C is the first's to answer. Linux tells a child of its parent's death; elsewhere the fit runs on to its end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def ended(number: int, _frame) -> None:
        shutil.rmtree(folder, ignore_errors=True)
        os._exit(128 + number)

    if sys.platform.startswith("linux"):
        signal.signal(signal.SIGTERM, ended)
        ctypes.CDLL(None, use_errno=True).prctl(PARENT_DEATH_SIGNAL, signal.SIGTERM)
        if os.getppid() != parent:  # it ended before the request was made
            ended(signal.SIGTERM, None)


def main(folder: str, parent: int) -> None:
    """The second process: read the inputs, fit, write the answer (or the error's message) for the first."""
    from medlink.kb.store import KB
    from medlink.linking.calibration_fit import fit_on_kb
    from medlink.linking.config import LinkerConfig
    from medlink.progress import silence_bars

    end_with(parent, folder)
    silence_bars(True)  # one process's bars on the terminal, not two interleaved
    logger = logging.getLogger("medlink")  # its own warnings read like the first's; other libraries' records stay quiet
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("medlink: %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    with open(Path(folder) / INPUTS, "rb") as given:
        inputs = pickle.load(given)
    try:
        with KB.open(inputs["kb"]) as kb:
            answer = ("fitted", fit_on_kb(kb, LinkerConfig.from_dict(inputs["config"]), inputs["memory"]))
    except MedlinkError as error:
        answer = ("error", str(error))
    written = Path(folder) / (ANSWER + ".part")
    with open(written, "wb") as out:
        pickle.dump(answer, out)
    os.replace(written, Path(folder) / ANSWER)  # whole or absent: the first process never reads half an answer


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
