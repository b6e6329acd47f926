"""The REST app over a test ``World`` with a bearer token per principal, driven in-process.

Used by ``tests/e2e/test_rest_*.py``: ``rest_client(world)`` builds the app with
``create_app`` and a FastAPI ``TestClient``; ``Rest.ok`` / ``Rest.fail`` call it as a chosen
principal (``None``: no token). ``running(app)`` serves any ASGI app with uvicorn on a free
loopback port in a thread, for clients that need a real socket (schemathesis, MCP over HTTP).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx2
import uvicorn
from fastapi.testclient import TestClient

from server.rest.app import create_app
from service.authz import Caller
from tests.conftest import World

Who = Caller | str | None


@dataclass
class Rest:
    """A TestClient plus one token per principal of the world."""

    world: World
    client: TestClient
    tokens: dict[str, str]

    @property
    def repo_path(self) -> str:
        """``/v1/repositories/TENANT/ORG/REPO``."""
        return f"/v1/repositories/{self.world.repo}"

    def headers(self, who: Who, **extra: str) -> dict[str, str]:
        """Authorization for ``who`` (a Caller, a principal id, or None for no token)."""
        principal = who.principal_id if isinstance(who, Caller) else who
        out = dict(extra)
        if principal is not None:
            out["Authorization"] = f"Bearer {self.tokens[principal]}"
        return out

    def call(self, method: str, path: str, who: Who, **kwargs: Any) -> httpx2.Response:
        """One request as ``who``."""
        headers = {**self.headers(who), **kwargs.pop("headers", {})}
        return self.client.request(method, path, headers=headers, **kwargs)

    def ok(self, method: str, path: str, who: Who, **kwargs: Any) -> Any:
        """A request that must succeed; its JSON."""
        response = self.call(method, path, who, **kwargs)
        assert response.status_code < 300, f"{method} {path}: {response.text}"
        return response.json()

    def fail(self, method: str, path: str, who: Who, status: int, **kwargs: Any) -> dict[str, Any]:
        """A request that must fail with ``status``; its ``error`` object."""
        response = self.call(method, path, who, **kwargs)
        assert response.status_code == status, f"{method} {path}: {response.text}"
        body = response.json()
        assert set(body) == {"error"}
        assert set(body["error"]) == {"code", "message", "details"}
        assert "\n" not in body["error"]["message"]
        error: dict[str, Any] = body["error"]
        return error


def tokens_for(world: World) -> dict[str, str]:
    """A bearer token for every principal of the world (minted by the admin)."""
    principals = [
        world.admin, world.curator, world.agent, world.publisher,
        world.reader, world.auditor, world.stranger,
    ]  # fmt: skip
    return {
        c.principal_id: world.svc.tokens.create(world.admin, c.principal_id)["token"]
        for c in principals
    }


@contextmanager
def rest_client(world: World, *, require_auth: bool = True, **options: Any) -> Iterator[Rest]:
    """The app over the world's service, in-process (``options`` go to ``create_app``)."""
    app = create_app(world.svc, settings=world.app.settings, require_auth=require_auth, **options)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Rest(world, client, tokens_for(world))


@contextmanager
def running(app: Any, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` on ``host``, port 0, in a thread; yield its base URL; stop it gracefully."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped while starting"
        assert time.monotonic() < deadline, "uvicorn did not start in time"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
