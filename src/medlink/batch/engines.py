"""Which engine runs a ``medlink annotate`` job: this process, worker processes on this machine (``--workers N``), or
Ray when it is installed and asked for."""

from __future__ import annotations

from medlink.batch.job import AnnotateJob
from medlink.errors import MedlinkError

ENGINES = ("local", "ray")
RAY_MISSING = (
    "--engine ray needs Ray: pip install 'medlink[ray]' (or 'ray[data]'); without it, --engine local (the default) runs in one process"
)


def resumable(job: AnnotateJob) -> bool:
    """Did a run with workers (processes or Ray) leave a record of how far it got in writing ``--out``? A run in one
    process then continues it, through one worker process, rather than start over beside it."""
    from medlink.batch.resume import progress_path

    return job.out is not None and progress_path(job.out).exists()


def run(job: AnnotateJob, engine: str = "local", address: str | None = None, workers: int | None = None) -> int:
    """Run ``job`` on ``engine``; the exit status (0, or 1 when records failed and the output holds the others)."""
    if engine not in ENGINES:
        raise MedlinkError(f"unknown engine {engine!r}; known: {', '.join(ENGINES)}")
    if workers is not None and workers < 1:
        raise MedlinkError(f"--workers must be 1 or more, not {workers}")
    if engine == "local":
        if address is not None:
            raise MedlinkError("--address is Ray's: add --engine ray")
        if (workers or 1) > 1 or resumable(job):
            from medlink.batch.processes import run_processes

            return run_processes(job, workers or 1)
        from medlink.batch.local import run_local

        return run_local(job)
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        raise MedlinkError(RAY_MISSING) from None
    from medlink.batch.ray_engine import run_ray

    return run_ray(job, address, workers)
