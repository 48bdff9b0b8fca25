"""The migration generator: the declarations match what today's migrations make on both SQL
stores (the drift test), and adding a column, a filter and a facet to a test-only area means
editing its declaration and running the generator, whose migrations apply on SQLite and
PostgreSQL and end in the schema declared, which the store then opens and serves."""

from __future__ import annotations

import ast
import datetime as dt
import importlib.util
import pathlib
import secrets
import shutil
import types
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from compliance_core import PageRequest
from compliance_core.areas import AREAS
from compliance_core.kernel.records import Filter, Records
from compliance_core.kernel.registry import Area
from compliance_core.kernel.uow import Store
from compliance_store import postgres, sqlite
from compliance_store.postgres import migrations as postgres_migrations
from compliance_store.schema import Column, Refused, changes, declared_tables, write_migration
from compliance_store.schema import __main__ as command
from compliance_store.schema.diff import AddColumn, NewTable, Recount, Reindex, SearchIndex, SortIndexes
from compliance_store.schema.expected import POSTGRES, SQLITE
from compliance_store.schema.introspect import FoundTable
from compliance_store.schema.scratch import postgres_schema, sqlite_schema
from compliance_store.sqlite import migrations as sqlite_migrations

from . import samples
from .gadgets import WITH_GADGETS


@attrs.frozen(kw_only=True)
class Gadget:
    """The test area's model after its edit: a colour (filtered and counted) and a weight."""

    id: str
    organization_id: str
    kind: str
    order: int = 0
    colour: str | None = None
    weight: float = 1.5
    archived: bool = False
    created_at: dt.datetime


@attrs.frozen(kw_only=True)
class GadgetFilter(Filter):
    kind: str | None = None
    order: int | None = None
    colour: str | None = None
    archived: bool = False


COLOURED = Records(
    "gadgets",
    model=Gadget,
    filters=GadgetFilter,
    kind="gadget",
    prefix="gdg",
    partition="archived",
    facets=("kind", "order", "colour"),
    facet_pairs=(("kind", "order"),),
)
WITH_COLOURED = (*AREAS, Area(name="gadgets", service=lambda context: None, records=(COLOURED,)))
SORTED = attrs.evolve(COLOURED, sortable=("colour", "weight"), indexed=("colour",))
WITH_SORTED = (*AREAS, Area(name="gadgets", service=lambda context: None, records=(SORTED,)))
SORTED_WITHIN = attrs.evolve(SORTED, within="kind")
WITH_SORTED_WITHIN = (*AREAS, Area(name="gadgets", service=lambda context: None, records=(SORTED_WITHIN,)))

SEARCHED = attrs.evolve(COLOURED, searchable=("kind", "colour"))
WITH_SEARCHED = (*AREAS, Area(name="gadgets", service=lambda context: None, records=(SEARCHED,)))

PACKAGES = {SQLITE: sqlite_migrations, POSTGRES: postgres_migrations}


@pytest.fixture(params=[SQLITE, POSTGRES])
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def schema_of(dialect: str, request: pytest.FixtureRequest) -> Callable[[Any], dict[str, FoundTable]]:
    """What the given migration steps make on the dialect's scratch database."""
    if dialect == SQLITE:
        return sqlite_schema
    server = request.getfixturevalue("postgres_server")
    return lambda steps: postgres_schema(server, steps)


def _load(path: pathlib.Path, dialect: str) -> types.ModuleType:
    """A generated migration, imported as a module of the store's migrations package (whose
    frozen helpers it calls) without being one of its files."""
    package = PACKAGES[dialect].__name__
    spec = importlib.util.spec_from_file_location(f"{package}.{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_declarations_match_what_the_migrations_make(dialect: str, schema_of: Any) -> None:
    """The drift test: every area's model and Records declaration is what today's migrations
    make, column by column, index by index and facet by facet."""
    assert changes(declared_tables(), schema_of(PACKAGES[dialect].MIGRATIONS), dialect) == []


def test_the_command_on_todays_tree_prints_no_changes(postgres_server: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Only ``--check``: on a tree whose declarations are ahead of its migrations, the command
    without it would write real migration files into the packages."""
    assert command.main(["--check", "--postgres", postgres_server]) == 0
    assert capsys.readouterr().out == "no changes\n"


def test_the_command_writes_each_stores_next_migration_and_lists_it(
    postgres_server: str,
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Run on a tree whose declarations gained an area, the command writes one migration per
    store (into copies of the migrations packages here), each importing only what a frozen
    migration may; ``--check`` then says a migration is missing."""
    directories = {}
    for dialect, package in PACKAGES.items():
        directories[package.__name__.split(".")[1]] = directory = tmp_path / dialect / "migrations"
        directory.mkdir(parents=True)
        shutil.copy(pathlib.Path(package.__file__).parent / "__init__.py", directory / "__init__.py")
    monkeypatch.setattr(command, "declared_tables", lambda: declared_tables(WITH_GADGETS))
    monkeypatch.setattr(command, "_directory", lambda store: directories[store.__name__.split(".")[1]])
    assert command.main(["--check", "--postgres", postgres_server]) == 1
    assert command.main(["gadgets", "--postgres", postgres_server]) == 0
    written = [pathlib.Path(line) for line in capsys.readouterr().out.splitlines()]
    assert [path.parent for path in written] == [directories["sqlite"], directories["postgres"]]
    allowed = {(0, "__future__"), (0, "sqlite_utils"), (0, "typing"), (0, "psycopg"), (1, "helpers")}
    for path in written:
        tree = ast.parse(path.read_text())
        imported = {(node.level, node.module) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {(0, alias.name) for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert imported <= allowed
        assert f"    {path.stem}," in (path.parent / "__init__.py").read_text()


def test_the_command_names_what_it_refuses_and_writes_nothing(
    postgres_server: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    without_webhooks = [table for table in declared_tables() if table.name != "webhooks"]
    monkeypatch.setattr(command, "declared_tables", lambda: without_webhooks)
    assert command.main(["gone", "--postgres", postgres_server]) == 1
    assert "table webhooks is in the database but no area declares it: drop it by hand" in capsys.readouterr().err


def test_adding_a_column_a_filter_and_a_facet_is_generated_and_applies(
    dialect: str, schema_of: Any, tmp_path: pathlib.Path
) -> None:
    package = PACKAGES[dialect]
    directory = tmp_path / dialect
    directory.mkdir()
    shutil.copy(pathlib.Path(package.__file__).parent / "__init__.py", directory / "__init__.py")
    steps = list(package.MIGRATIONS)

    made = changes(declared_tables(WITH_GADGETS), schema_of(steps), dialect)
    assert [type(change) for change in made] == [NewTable]
    first = write_migration(directory, "gadgets", made, dialect)
    steps.append((first.stem[1:], _load(first, dialect).apply))
    assert changes(declared_tables(WITH_GADGETS), schema_of(steps), dialect) == []

    edited = changes(declared_tables(WITH_COLOURED), schema_of(steps), dialect)
    assert edited == [
        AddColumn("gadgets", declared_tables(WITH_COLOURED)[-1].column("colour")),
        AddColumn("gadgets", declared_tables(WITH_COLOURED)[-1].column("weight")),
        Reindex(
            "gadgets",
            ("gadgets_by_kind", "gadgets_by_order"),
            {
                "gadgets_by_kind": ("organization_id", "archived", "kind", "created_at", "id", "order", "colour"),
                "gadgets_by_order": ("organization_id", "archived", "order", "created_at", "id", "kind", "colour"),
                "gadgets_by_colour": ("organization_id", "archived", "colour", "created_at", "id", "kind", "order"),
            },
        ),
        Recount("gadgets", ("kind", "order", "colour"), (("kind", "order"),), "archived", narrow=False),
    ]
    second = write_migration(directory, "gadget_colours", edited, dialect)
    source = second.read_text()
    assert '"gadgets_by_colour"' in source and "recount_blocks_v2(" in source and "import" in source
    assert "compliance_core" not in source  # frozen: literal names, nothing that grows later
    steps.append((second.stem[1:], _load(second, dialect).apply))
    assert changes(declared_tables(WITH_COLOURED), schema_of(steps), dialect) == []

    listed = (directory / "__init__.py").read_text()
    names = [name for name, _ in steps[-2:]]
    assert f'("{names[0]}", m{names[0]}.apply),\n    ("{names[1]}", m{names[1]}.apply),\n)' in listed
    assert f"    m{names[0]},\n    m{names[1]},\n)" in listed
    assert int(names[0][:4]) == int(package.MIGRATIONS[-1][0][:4]) + 1


def test_a_field_declared_indexed_gets_a_sort_index_and_loses_it_undeclared(
    dialect: str, schema_of: Any, tmp_path: pathlib.Path
) -> None:
    """PostgreSQL's index of a text field orders by code point (``COLLATE "C"``), as the sorted
    pages ask, or no page could read it in order."""
    package = PACKAGES[dialect]
    directory = tmp_path / dialect
    directory.mkdir()
    shutil.copy(pathlib.Path(package.__file__).parent / "__init__.py", directory / "__init__.py")
    steps = list(package.MIGRATIONS)
    for areas, name in ((WITH_GADGETS, "gadgets"), (WITH_COLOURED, "gadget_colours")):
        path = write_migration(directory, name, changes(declared_tables(areas), schema_of(steps), dialect), dialect)
        steps.append((path.stem[1:], _load(path, dialect).apply))

    made = changes(declared_tables(WITH_SORTED), schema_of(steps), dialect)
    columns = ("organization_id", "archived", "colour", "id")
    assert made == [SortIndexes("gadgets", (), {"gadgets_sort_colour": columns}, ("colour",))]
    path = write_migration(directory, "gadget_sort", made, dialect)
    collated = '"colour" COLLATE "C"' in path.read_text()
    assert collated == (dialect == POSTGRES)
    steps.append((path.stem[1:], _load(path, dialect).apply))
    assert schema_of(steps)["gadgets"].indexes["gadgets_sort_colour"] == columns
    assert changes(declared_tables(WITH_SORTED), schema_of(steps), dialect) == []

    # ``within``: the filter every list carries comes after the scope, so the index is made again
    scoped = ("organization_id", "archived", "kind", "colour", "id")
    made = changes(declared_tables(WITH_SORTED_WITHIN), schema_of(steps), dialect)
    assert made == [SortIndexes("gadgets", ("gadgets_sort_colour",), {"gadgets_sort_colour": scoped}, ("colour",))]
    path = write_migration(directory, "gadget_sort_within", made, dialect)
    within = [*steps, (path.stem[1:], _load(path, dialect).apply)]
    assert schema_of(within)["gadgets"].indexes["gadgets_sort_colour"] == scoped
    assert changes(declared_tables(WITH_SORTED_WITHIN), schema_of(within), dialect) == []

    assert changes(declared_tables(WITH_COLOURED), schema_of(steps), dialect) == [
        SortIndexes("gadgets", ("gadgets_sort_colour",), {})
    ]


def test_within_names_a_filter_field_other_than_the_partition() -> None:
    for wrong in ("weight", "archived"):
        with pytest.raises(ValueError, match="within"):
            attrs.evolve(SORTED, within=wrong)


def test_a_store_migrated_by_the_generated_migrations_opens_and_serves_the_edited_area(
    dialect: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The start-up check of the store itself agrees: with both generated migrations appended
    to its list, it opens on the edited area and lists by the new filter."""
    package = PACKAGES[dialect]
    directory = tmp_path / dialect
    directory.mkdir()
    shutil.copy(pathlib.Path(package.__file__).parent / "__init__.py", directory / "__init__.py")
    scratch: Callable[[Any], dict[str, FoundTable]]
    if dialect == SQLITE:
        scratch = sqlite_schema
    else:
        server = request.getfixturevalue("postgres_server")
        scratch = lambda steps: postgres_schema(server, steps)  # noqa: E731
    steps = list(package.MIGRATIONS)
    for areas, name in ((WITH_GADGETS, "gadgets"), (WITH_COLOURED, "gadget_colours")):
        path = write_migration(directory, name, changes(declared_tables(areas), scratch(steps), dialect), dialect)
        steps.append((path.stem[1:], _load(path, dialect).apply))
    monkeypatch.setattr(package, "MIGRATIONS", tuple(steps))
    store: Store
    if dialect == SQLITE:
        store = sqlite.SqliteStore(f"sqlite:///{tmp_path / 'generated.db'}", areas=WITH_COLOURED)
    else:
        url = f"{request.getfixturevalue('postgres_server')}?schema=t_{secrets.token_hex(6)}"
        store = postgres.PostgresStore(url, pool_min=0, areas=WITH_COLOURED)
    try:
        with store.session(write=True) as session:
            for n, colour in enumerate(("red", "blue", "red")):
                session[COLOURED].add(
                    Gadget(id=f"gdg_{n}", organization_id="org_a", kind="lamp", colour=colour, created_at=samples.at(n))
                )
        with store.session(write=False) as session:
            items, total = session[COLOURED].list("org_a", GadgetFilter(colour="red"), PageRequest())
        assert total == 2 and [item.id for item in items] == ["gdg_0", "gdg_2"]
        assert all(item.weight == 1.5 for item in items)
    finally:
        store.close()
        if dialect == POSTGRES:
            _drop_schema(url)


def _drop_schema(url: str) -> None:
    import psycopg
    from psycopg import sql

    conninfo, schema = postgres.store.parse_url(url)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema or "")))


def test_a_dropped_column_a_changed_type_and_a_new_column_without_a_value_are_refused() -> None:
    """What loses data or needs a decision about the rows already there is written by hand."""
    gadgets = declared_tables(WITH_GADGETS)[-1]
    there = FoundTable(
        name="gadgets",
        columns={column.name: (column.sql_type(SQLITE), column.nullable) for column in gadgets.columns},
        indexes=dict(gadgets.indexes),
        counting="'kind' 'order' 'kind,order'",
    )
    found = {**sqlite_schema(), "gadgets": there}
    assert changes([*declared_tables(), gadgets], found, SQLITE) == []
    edits = {
        "column gadgets.order is in the database but no field of the model: drop it by hand": tuple(
            column for column in gadgets.columns if column.name != "order"
        ),
        "column gadgets.kind is TEXT NOT NULL in the database but INTEGER NOT NULL in the model": tuple(
            attrs.evolve(column, kind="integer") if column.name == "kind" else column for column in gadgets.columns
        ),
        "column gadgets.size is new and NOT NULL without a default SQL can hold": (
            *gadgets.columns,
            Column("size", "integer", nullable=False),
        ),
    }
    for refusal, columns in edits.items():
        with pytest.raises(Refused, match=refusal):
            changes([*declared_tables(), attrs.evolve(gadgets, columns=columns)], found, SQLITE)


def test_a_table_no_area_declares_any_more_is_refused() -> None:
    found = sqlite_schema(list(sqlite_migrations.MIGRATIONS))
    declared = [table for table in declared_tables() if table.name != "webhooks"]
    with pytest.raises(Refused, match="table webhooks is in the database but no area declares it: drop it by hand"):
        changes(declared, found, SQLITE)


def test_the_start_up_check_names_the_command_for_a_declared_table_or_column_missing(
    dialect: str,
    schema_of: Any,
    tmp_path: pathlib.Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ``Records`` table or a model field without its migration is refused, saying how to
    write the migration."""
    package = PACKAGES[dialect]
    hint = r"\(make migration NAME=\.\.\. writes its migration\)"
    opened: Callable[[Any], Store]
    if dialect == SQLITE:
        path = tmp_path / "check.db"
        opened = lambda areas: sqlite.SqliteStore(f"sqlite:///{path}", areas=areas)  # noqa: E731
    else:
        url = f"{request.getfixturevalue('postgres_server')}?schema=t_{secrets.token_hex(6)}"
        opened = lambda areas: postgres.PostgresStore(url, pool_min=0, areas=areas)  # noqa: E731
    directory = tmp_path / dialect
    directory.mkdir()
    shutil.copy(pathlib.Path(package.__file__).parent / "__init__.py", directory / "__init__.py")
    steps = list(package.MIGRATIONS)
    generated = write_migration(
        directory, "gadgets", changes(declared_tables(WITH_GADGETS), schema_of(steps), dialect), dialect
    )
    try:
        opened(AREAS).close()
        with pytest.raises(RuntimeError, match=f"table gadgets does not exist {hint}"):
            opened(WITH_COLOURED)
        monkeypatch.setattr(package, "MIGRATIONS", (*steps, (generated.stem[1:], _load(generated, dialect).apply)))
        with pytest.raises(
            RuntimeError, match=rf"table gadgets lacks columns \['colour', 'weight'\] of its model {hint}"
        ):
            opened(WITH_COLOURED)
    finally:
        if dialect == POSTGRES:
            _drop_schema(url)


def _opened(dialect: str, tmp_path: pathlib.Path, request: pytest.FixtureRequest, areas: Any) -> Store:
    if dialect == SQLITE:
        return sqlite.SqliteStore(f"sqlite:///{tmp_path / 'searched.db'}", areas=areas)
    return postgres.PostgresStore(request.getfixturevalue("postgres_url"), pool_min=0, areas=areas)


def test_searchable_fields_get_a_search_index_which_follows_the_declaration(
    dialect: str,
    schema_of: Any,
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """Declared searchable, a table gets its search index (the store refuses to open without
    it); a changed list of fields makes it again, none drops it; a new table gets it with it."""
    package = PACKAGES[dialect]
    directory = tmp_path / dialect
    directory.mkdir()
    shutil.copy(pathlib.Path(package.__file__).parent / "__init__.py", directory / "__init__.py")
    released = list(package.MIGRATIONS)
    steps = list(released)
    for areas, name in ((WITH_GADGETS, "gadgets"), (WITH_COLOURED, "gadget_colours")):
        path = write_migration(directory, name, changes(declared_tables(areas), schema_of(steps), dialect), dialect)
        steps.append((path.stem[1:], _load(path, dialect).apply))
    monkeypatch.setattr(package, "MIGRATIONS", tuple(steps))
    with pytest.raises(RuntimeError, match=r"search index gadgets_search does not exist \(make migration"):
        _opened(dialect, tmp_path, request, WITH_SEARCHED)

    made = changes(declared_tables(WITH_SEARCHED), schema_of(steps), dialect)
    assert made == [SearchIndex("gadgets", ("kind", "colour"))]
    path = write_migration(directory, "gadget_search", made, dialect)
    assert 'search_index(db, "gadgets", ("kind", "colour"))' in path.read_text().replace("cur", "db")
    steps.append((path.stem[1:], _load(path, dialect).apply))
    assert schema_of(steps)["gadgets"].search == ("kind", "colour")
    assert changes(declared_tables(WITH_SEARCHED), schema_of(steps), dialect) == []

    monkeypatch.setattr(package, "MIGRATIONS", tuple(steps))
    store = _opened(dialect, tmp_path, request, WITH_SEARCHED)
    try:
        with store.session(write=True) as session:
            for n, (kind, colour) in enumerate((("Lamp", "red"), ("chair", "Lampblack"), ("desk", None))):
                session[SEARCHED].add(
                    Gadget(id=f"gdg_{n}", organization_id="org_a", kind=kind, colour=colour, created_at=samples.at(n))
                )
        with store.session(write=False) as session:
            items, total = session[SEARCHED].list("org_a", GadgetFilter(), PageRequest(q="LAMP"))
        assert total == 2 and [item.id for item in items] == ["gdg_0", "gdg_1"]
    finally:
        store.close()

    narrower = (
        *AREAS,
        Area(name="gadgets", service=lambda context: None, records=(attrs.evolve(SEARCHED, searchable=("colour",)),)),
    )
    assert changes(declared_tables(narrower), schema_of(steps), dialect) == [SearchIndex("gadgets", ("colour",))]
    made = changes(declared_tables(WITH_COLOURED), schema_of(steps), dialect)
    assert made == [SearchIndex("gadgets", ())]
    path = write_migration(directory, "gadget_no_search", made, dialect)
    assert "drop_search_index(" in path.read_text()
    steps.append((path.stem[1:], _load(path, dialect).apply))
    assert schema_of(steps)["gadgets"].search is None
    assert changes(declared_tables(WITH_COLOURED), schema_of(steps), dialect) == []

    new = (*AREAS, Area(name="gadgets", service=lambda context: None, records=(SEARCHED,)))
    made = changes(declared_tables(new), schema_of(released), dialect)
    assert [type(change) for change in made] == [NewTable, SearchIndex]


def test_a_searchable_field_that_is_no_text_is_refused() -> None:
    numbered = (
        *AREAS,
        Area(name="gadgets", service=lambda context: None, records=(attrs.evolve(COLOURED, searchable=("order",)),)),
    )
    with pytest.raises(Refused, match=r"fields \['order'\] of gadgets are searchable but not text"):
        changes(declared_tables(numbered), sqlite_schema(), SQLITE)
