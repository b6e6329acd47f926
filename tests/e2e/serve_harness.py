"""``ameide serve``'s server in a thread on loopback, for tests that need a real listener."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from server.serve import AmeideServer, Endpoints, ServeConfig
from tests.conftest import World


@contextmanager
def serving(world: World, **options: Any) -> Iterator[tuple[AmeideServer, Endpoints]]:
    """Serve ``world`` on free loopback ports with ``ServeConfig(**options)``; without
    authentication, requests act as the world's admin. Stops and joins on exit."""
    config = ServeConfig(
        **{"host": "127.0.0.1", "http_port": 0, "grpc_port": 0, "grace_seconds": 1, **options}
    )
    settings = world.app.settings
    if not config.require_auth:
        settings = settings.model_copy(update={"principal": world.admin.principal_id})
    server = AmeideServer(world.svc, settings, config)
    ready = threading.Event()
    found: list[Endpoints] = []

    def on_ready(endpoints: Endpoints) -> None:
        found.append(endpoints)
        ready.set()

    thread = threading.Thread(target=server.run, args=(on_ready,), daemon=True)
    thread.start()
    assert ready.wait(20), "the server did not start"
    try:
        yield server, found[0]
    finally:
        server.stop()
        thread.join(timeout=20)
    assert not thread.is_alive()
