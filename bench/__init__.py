"""Benchmarks (not tests): HTTP throughput of the full stack against a bare Falcon app serving the
same bytes, and the in-process list call against a plain sqlite3 query. ``python -m bench``."""
