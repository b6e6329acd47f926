"""Every surface reports the installed package version (issue 14): OpenAPI ``info.version``, MCP
``serverInfo.version`` and ``ameide --version`` agree with the distribution's metadata."""

from __future__ import annotations

from importlib.metadata import version

import anyio
from fastapi.testclient import TestClient
from mcp import Client

from edge.version import package_version
from mcp_adapter.server import MemoryMcp
from server.rest.app import create_app
from tests.conftest import World


def test_every_surface_reports_the_package_version(world: World) -> None:
    installed = version("ameide-memory")
    assert package_version() == installed
    with TestClient(create_app(world.svc, settings=world.app.settings)) as http:
        assert http.get("/openapi.json").json()["info"]["version"] == installed

    async def main() -> str:
        async with Client(MemoryMcp(world.svc, lambda ctx: world.reader).server()) as client:
            return str(client.server_info.version)

    assert anyio.run(main) == installed
