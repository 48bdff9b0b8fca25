"""``compliance_core.kernel.pagination`` is the old import path of ``pages`` and ``page_cache``,
kept only for the modules being rewritten elsewhere in issue 17: no other module may start to
import it, so it can go as soon as they stop."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
STILL_ALLOWED = ("compliance_core/areas/risks", "compliance_core/areas/vendors")


def _imports_pagination(path: pathlib.Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "pagination":
            return True
        if isinstance(node, ast.Import) and any(alias.name.endswith(".pagination") for alias in node.names):
            return True
    return False


def test_only_the_modules_being_rewritten_import_the_old_pagination_path() -> None:
    found = [
        str(path.relative_to(ROOT))
        for folder in ("compliance_core", "compliance_store", "compliance_http", "compliance_pdf", "tests", "examples")
        if (ROOT / folder).is_dir()
        for path in sorted((ROOT / folder).rglob("*.py"))
        if _imports_pagination(path)
    ]
    strays = [name for name in found if not name.startswith(STILL_ALLOWED)]
    assert strays == [], f"import compliance_core.kernel.pages or .page_cache instead: {strays}"
