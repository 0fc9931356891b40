"""``medlink serve``: the HTTP service (FastAPI + uvicorn) and its web page; ``pip install 'medlink[serve]'``.

One module per job: ``app`` (the factory and ``run``), ``routes`` and ``gilda`` (the endpoints), ``models`` (request and
response bodies), ``documents`` (what /annotate reads and writes), ``engine`` (the loaded index, swapped on reload),
``limits`` and ``auth`` (what a request may send, and the API key), ``errors`` (4xx messages, the JSON response),
``page`` (the web page and /docs, from ``static/``), ``settings`` and ``state``.
"""
