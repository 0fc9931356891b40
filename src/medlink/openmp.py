"""One call at a time into the libraries that parallelise each call themselves with OpenMP (torch, FAISS).

Why: every thread that calls them gets its own team of OpenMP threads, and idle team members spin. A service answering
16 requests at once ran 16 teams on 2 cores, and its dense /link fell from about 16 answers a second (one client) to
0.4. Serialised, one team works at a time while the other requests' Python work (parsing, features, JSON) goes on.
"""

from __future__ import annotations

import threading

CALLS = threading.Lock()  # process-wide: torch's and FAISS's thread pools are too
