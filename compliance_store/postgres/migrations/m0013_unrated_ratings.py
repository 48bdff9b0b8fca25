"""0013_unrated_ratings: a vendor's and a risk's ratings, and a risk's scores and levels, may be
null (issue 18: unassessed is not "lowest risk").

A risk or vendor made without ratings was stored as very_unlikely x insignificant, score 1, the
lowest risk; it is now unassessed, each rating null until given. The rows already stored keep the
ratings they hold: which of them were defaults nobody chose cannot be told apart from a deliberate
"very unlikely, insignificant".

Frozen: literal names only.
"""

from __future__ import annotations

from typing import Any

import psycopg

__all__ = ["apply"]


def apply(cur: psycopg.Cursor[Any]) -> None:
    cur.execute(
        'ALTER TABLE "risks" ALTER COLUMN "likelihood" DROP NOT NULL, ALTER COLUMN "impact" DROP NOT NULL, '
        'ALTER COLUMN "residual_likelihood" DROP NOT NULL, ALTER COLUMN "residual_impact" DROP NOT NULL, '
        'ALTER COLUMN "inherent_score" DROP NOT NULL, ALTER COLUMN "inherent_level" DROP NOT NULL, '
        'ALTER COLUMN "residual_score" DROP NOT NULL, ALTER COLUMN "residual_level" DROP NOT NULL'
    )
    cur.execute(
        'ALTER TABLE "vendors" ALTER COLUMN "inherent_probability" DROP NOT NULL, '
        'ALTER COLUMN "inherent_impact" DROP NOT NULL, ALTER COLUMN "residual_probability" DROP NOT NULL, '
        'ALTER COLUMN "residual_impact" DROP NOT NULL'
    )
