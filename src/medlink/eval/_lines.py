"""Line-by-line reading for dataset files: decoding errors become ``file:line`` errors, not tracebacks.

The KB readers' ``decoded_lines``, under the name the dataset loaders use.
"""

from __future__ import annotations

from medlink.kb.readers._io import decoded_lines as read_lines

__all__ = ["read_lines"]
