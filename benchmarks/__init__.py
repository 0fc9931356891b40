"""Benchmark suites (lexical, dense, rerank, scale, peers), installers and the report generator; see benchmarks/README.md."""
