"""The registry-driven suites (``generic_suite``) whose answers depend on the store, on the
SQLite store."""

from __future__ import annotations

from generic_suite import (  # noqa: F401 (the suites, collected here on this store)
    test_an_id_of_any_shape_is_one_that_never_existed,
    test_another_organizations_ids_look_like_ids_that_never_existed,
    test_each_role_gets_403_exactly_when_the_action_denies_it,
    test_generated_bodies_never_fail_the_server_or_half_write,
    world_on,
)

worlds, world = world_on("sqlite")
