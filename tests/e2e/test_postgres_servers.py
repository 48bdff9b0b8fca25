"""Two `compliance serve` instances on one PostgreSQL database, as two machines behind a load
balancer would run: separate processes on separate ports, sharing nothing but the database. A
key's rate limit, an Idempotency-Key, a revocation and the first-run bootstrap hold across both.

Needs a PostgreSQL server (skipped, saying why, when there is none, unless
``COMPLIANCE_REQUIRE_POSTGRES=1``).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import attrs
import httpx
import psycopg
import pytest

from compliance_core import Platform
from compliance_core.areas.organizations import Plan
from compliance_store.postgres import parse_url
from e2e_support import ServerProcess, start_server

pytestmark = pytest.mark.slow


@attrs.frozen
class Pair:
    url: str
    """The store URL both serve."""
    servers: tuple[ServerProcess, ServerProcess]
    platform: Platform
    """The test's own view of the database (to create organizations)."""

    def base(self, n: int) -> str:
        return self.servers[n % 2].url


@pytest.fixture(scope="module")
def pair(new_postgres_schema: Callable[[], str]) -> Iterator[Pair]:
    """Two instances (2 and 1 worker processes) started at the same moment on a new, empty
    schema; stopped when the module ends."""
    url = new_postgres_schema()
    with ThreadPoolExecutor(2) as starting:
        servers = tuple(starting.map(lambda workers: start_server(url, workers=workers), (2, 1)))
    platform = Platform.open(url)
    try:
        yield Pair(url, (servers[0], servers[1]), platform)
    finally:
        platform.close()
        for server in servers:
            server.stop()


def test_two_servers_starting_together_on_a_new_database_bootstrap_once(pair: Pair) -> None:
    banners = [server.startup for server in pair.servers if "First run" in server.startup]
    assert len(banners) == 1, [server.startup for server in pair.servers]
    key = re.search(r"^\s+API key\s+(comp_[0-9a-f]{64})$", banners[0], re.M).group(1)
    for server in pair.servers:  # the one key works on both
        answer = httpx.get(f"{server.url}/v1/organization", headers={"X-API-Key": key})
        assert answer.status_code == 200 and answer.json()["name"] == "Default organization"
    with pair.platform.uow.read() as session:
        from compliance_core.areas.organizations import ORGANIZATIONS

        assert session[ORGANIZATIONS].count() == 1


def test_a_keys_rate_limit_holds_across_both_instances(pair: Pair) -> None:
    boot = pair.platform.bootstrap("Free Org", Plan.FREE)  # 30 requests/minute, burst 60
    headers = {"X-API-Key": boot.owner_key.secret, "Connection": "close"}

    def call(n: int) -> tuple[int, int]:
        return n % 2, client.get(f"{pair.base(n)}/v1/vendors", headers=headers).status_code

    started = time.monotonic()
    # one client (building one per request costs more than the request), a new connection each
    # time (Connection: close) so an instance's worker processes share the work too
    with httpx.Client() as client, ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(call, range(110)))  # alternately at one instance and the other
    elapsed = time.monotonic() - started

    allowed = [server for server, status in answers if status == 200]
    limited = [server for server, status in answers if status == 429]
    assert len(allowed) + len(limited) == len(answers)
    # One bucket in the database: 60 at once, then one more per 2 s, whichever instance answers.
    # (A bucket per instance would have let up to 120 through.)
    assert 60 <= len(allowed) <= 60 + int(elapsed / 2) + 1
    assert set(allowed) == {0, 1} and set(limited) == {0, 1}


def test_an_idempotency_key_sent_to_both_at_once_creates_one_record(pair: Pair) -> None:
    boot = pair.platform.bootstrap("Retrying Org")
    headers = {"X-API-Key": boot.owner_key.secret, "Idempotency-Key": "create-once-across-machines"}
    body = {"name": "Created once", "criticality": "critical"}
    start = threading.Barrier(8)

    def post(n: int) -> httpx.Response:
        start.wait()
        return client.post(f"{pair.base(n)}/v1/vendors", json=body, headers=headers)

    with httpx.Client(timeout=30) as client, ThreadPoolExecutor(8) as pool:
        responses = list(pool.map(post, range(8)))

    assert {r.status_code for r in responses} == {201}, [r.text for r in responses]
    assert len({r.json()["id"] for r in responses}) == 1
    listed = httpx.get(f"{pair.base(1)}/v1/vendors", headers={"X-API-Key": boot.owner_key.secret}).json()
    assert listed["count"] == 1 and listed["data"][0]["name"] == "Created once"
    server, schema = parse_url(pair.url)
    with psycopg.connect(server) as conn:
        [(records,)] = conn.execute(
            f'SELECT count(*) FROM "{schema}".idempotency WHERE organization_id = %s AND key = %s',
            (boot.organization.id, "create-once-across-machines"),
        ).fetchall()
    assert records == 1


def test_a_key_revoked_on_one_instance_is_refused_by_the_other_at_once(pair: Pair) -> None:
    boot = pair.platform.bootstrap("Revoking Org")
    owner = {"X-API-Key": boot.owner_key.secret}
    a, b = (server.url for server in pair.servers)
    created = httpx.post(f"{a}/v1/api-keys", json={"name": "CI", "role": "admin"}, headers=owner)
    assert created.status_code == 201
    key = {"X-API-Key": created.json()["key"]}
    vendor = httpx.post(f"{b}/v1/vendors", json={"name": "Seen everywhere"}, headers=key)
    assert vendor.status_code == 201
    assert httpx.get(f"{a}/v1/vendors/{vendor.json()['id']}", headers=key).status_code == 200  # read on the other

    revoked = httpx.post(f"{a}/v1/api-keys/{created.json()['id']}/revoke", headers=owner)
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
    for base in (b, a):
        refused = httpx.get(f"{base}/v1/vendors", headers=key)
        assert refused.status_code == 401 and refused.json()["error"]["details"]["reason"] == "revoked"
