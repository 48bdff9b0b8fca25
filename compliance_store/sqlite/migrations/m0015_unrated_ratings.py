"""0015_unrated_ratings: a vendor's and a risk's ratings, and a risk's scores and levels, may be
null (issue 18: unassessed is not "lowest risk").

A risk or vendor made without ratings was stored as very_unlikely x insignificant, score 1, the
lowest risk; it is now unassessed, each rating null until given. The rows already stored keep the
ratings they hold: which of them were defaults nobody chose cannot be told apart from a deliberate
"very unlikely, insignificant".

SQLite cannot drop a NOT NULL with ALTER TABLE. A copy of the table would drop its count,
revision and block triggers with the old one; SQLite documents a simpler procedure for removing
NOT NULL constraints only (https://www.sqlite.org/lang_altertable.html, "making other kinds of
table schema changes"): rewrite the table's CREATE statement in ``sqlite_schema`` with
``writable_schema`` on and bump ``schema_version``, inside the migration's transaction. The stored
rows, indexes and triggers stay as they are.

Frozen: literal names only.
"""

from __future__ import annotations

from sqlite_utils import Database

__all__ = ["apply"]

_NULLABLE = {
    "risks": (
        ("likelihood", "TEXT"),
        ("impact", "TEXT"),
        ("residual_likelihood", "TEXT"),
        ("residual_impact", "TEXT"),
        ("inherent_score", "INTEGER"),
        ("inherent_level", "TEXT"),
        ("residual_score", "INTEGER"),
        ("residual_level", "TEXT"),
    ),
    "vendors": (
        ("inherent_probability", "TEXT"),
        ("inherent_impact", "TEXT"),
        ("residual_probability", "TEXT"),
        ("residual_impact", "TEXT"),
    ),
}


def apply(db: Database) -> None:
    rewritten = {}
    for table, columns in _NULLABLE.items():
        (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]).fetchone()
        for column, kind in columns:
            declared = f'"{column}" {kind} NOT NULL,'
            if sql.count(declared) != 1:
                raise RuntimeError(f"{table}.{column} is not declared as {declared!r} in {sql!r}")
            sql = sql.replace(declared, f'"{column}" {kind},')
        rewritten[table] = sql
    (version,) = db.execute("PRAGMA schema_version").fetchone()
    db.execute("PRAGMA writable_schema = ON")
    try:
        for table, sql in rewritten.items():
            db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", [sql, table])
        db.execute(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        db.execute("PRAGMA writable_schema = OFF")
