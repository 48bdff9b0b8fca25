"""The PostgreSQL store: the scale-out store, one database shared by many processes and machines.

    from compliance_core import Platform
    platform = Platform.open("postgresql://app:secret@db.internal:5432/compliance?schema=compliance")

Built on psycopg 3 with a bounded ``psycopg_pool.ConnectionPool`` (options ``pool_min``,
``pool_max``, ``pool_timeout``; ``schema`` -- also ``?schema=`` in the URL -- sets the
``search_path`` and is created if missing). Schema changes are frozen, ordered migrations
(``migrations/``) applied at start-up under an advisory lock; ``tables.TABLES`` says which
repository serves each table (every area's ``Records`` declarations included), and the store
refuses to open a schema that lacks a table, column, index or trigger they need. Every list
filter is pushed down into SQL and backed by an index. Rate-limit buckets, idempotency records,
key usage and the outbox are rows in the database, so every process shares them.

How transactions work -- one writer at a time under a transaction-scoped advisory lock, reads in
REPEATABLE READ snapshots -- and why is in ``store``'s docstring.
"""

from .store import PostgresStore, mask_url, open_store, parse_url

__all__ = ["PostgresStore", "open_store", "parse_url", "mask_url"]
