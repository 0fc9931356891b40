"""What ``medlink serve`` was started with: the index, where to listen, the API key and the request limits.

Why a module: with several workers, uvicorn starts each one by importing the app factory afresh, so the settings
travel to them through one environment variable, written and read here.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from medlink.errors import MedlinkError

ENV = "MEDLINK_SERVE_SETTINGS"  # the settings as JSON, for each worker uvicorn starts
SUPERVISOR_ENV = "MEDLINK_SERVE_SUPERVISOR"  # the pid of the process that supervises several workers
MIN_KEY_CHARS = 16


@dataclass(frozen=True)
class Limits:
    """The most one request may ask for; more is answered 413 (too large) or 422 (a parameter out of range)."""

    max_body_bytes: int = 2_000_000
    max_mentions: int = 1000
    max_documents: int = 100
    max_text_chars: int = 200_000
    max_mention_chars: int = 1000
    max_candidates: int = 50

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not isinstance(value, int) or value < 1:
                raise MedlinkError(f"the limit {name} must be a whole number of at least 1, not {value!r}")


@dataclass(frozen=True)
class ServeSettings:
    """The service's configuration; nothing in it comes from a request."""

    index: str = "default"
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    api_key_file: str | None = None  # read by each worker: the key itself never travels in the environment
    limits: Limits = field(default_factory=Limits)
    page: bool = True  # serve the web page at /

    def to_env(self) -> str:
        return json.dumps({**asdict(self), "limits": asdict(self.limits)})

    @classmethod
    def from_env(cls) -> ServeSettings:
        """The settings the starting process left in ``MEDLINK_SERVE_SETTINGS`` (defaults when it left none)."""
        raw = os.environ.get(ENV)
        if not raw:
            return cls()
        values = json.loads(raw)
        return cls(**{**values, "limits": Limits(**values.get("limits", {}))})


def read_api_key(path: Path) -> str:
    """The key in ``path`` (its first line, spaces trimmed): refused when the file is missing, empty or the key short."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise MedlinkError(f"--api-key-file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise MedlinkError(f"--api-key-file {path}: cannot be read ({type(error).__name__})") from error
    key = lines[0].strip() if lines else ""
    if len(key) < MIN_KEY_CHARS:
        raise MedlinkError(
            f"--api-key-file {path}: the key on its first line must have at least {MIN_KEY_CHARS} characters "
            "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return key
