"""Lone surrogates (``"\\ud800"``): refused where they enter, and never a crash where they are
read back.

A lone surrogate is not a character: it cannot be encoded, so text holding one can be neither
stored in PostgreSQL nor printed, nor sent as JSON. Every entry refuses it (the service for
metadata, the CLI for its arguments, the routing loader for rule files, the MCP stdio transport
for its messages); a row stored before that rule still reads, with U+FFFD in its place.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import sqlalchemy as sa
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCResponse
from typer.testing import CliRunner

from ameide_proto.v1 import knowledge_pb2 as kno
from cli.main import app as cli_app
from mcp_adapter.stdio import _EncodableReplies
from service.authz import Caller
from tests.conftest import World
from tests.e2e.grpc_harness import serve
from tests.e2e.mcp_harness import ROOT
from tests.e2e.rest_harness import rest_client

REPLACEMENT = "\ufffd"


class StdioPeer:
    """A real ``python -m mcp_adapter`` child spoken to in raw JSON lines (the SDK client
    cannot even send a lone surrogate: it refuses to encode one)."""

    def __init__(self, world: World, who: Caller) -> None:
        env = {
            **os.environ,
            "AMEIDE_HOME": str(world.app.settings.home),
            "AMEIDE_PRINCIPAL": who.principal_id,
            "PYTHONPATH": str(ROOT),
        }
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mcp_adapter"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=str(ROOT),
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        self.ask(1, "initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "surrogate-test", "version": "1"},
        })  # fmt: skip
        self.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line)

    def send(self, line: str) -> None:
        """One message, exactly as given (``\\ud800`` escapes included)."""
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode("ascii") + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next message from the server (a request that is never answered fails here)."""
        try:
            line = self._lines.get(timeout=60)
        except queue.Empty:
            raise AssertionError(
                f"no answer; server alive: {self.process.poll() is None}"
            ) from None
        return json.loads(line)  # type: ignore[no-any-return]

    def ask(self, ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}))
        return self.answer()

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=30)


@contextmanager
def stdio_peer(world: World, who: Caller) -> Iterator[StdioPeer]:
    peer = StdioPeer(world, who)
    try:
        yield peer
    finally:
        if peer.process.poll() is None:
            peer.process.kill()
            peer.process.wait(timeout=30)
        for pipe in (peer.process.stdin, peer.process.stdout, peer.process.stderr):
            if pipe is not None:
                pipe.close()


def test_an_mcp_stdio_request_holding_a_lone_surrogate_gets_an_error_and_serving_goes_on(
    world: World,
) -> None:
    """Such a request was never answered (the SDK's parser refuses it and drops the line)."""
    element, _ = world.canonical(body="# Zebra crossings\n\nLook both ways.\n")
    with stdio_peer(world, world.curator) as peer:
        search = (
            '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": '
            '"memory.search", "arguments": {"repository": "%s", "query": "zebra\\ud800"}}}'
        )
        peer.send(search % world.repo)
        refused = peer.answer()
        assert refused["id"] == 7
        assert refused["error"]["code"] == -32602  # INVALID_PARAMS
        assert refused["error"]["message"] == (
            "params.arguments.query is not valid Unicode text (it holds a lone surrogate)"
        )
        assert refused["error"]["data"] == {"field": "params.arguments.query"}

        propose = (
            '{"jsonrpc": "2.0", "id": "p-1", "method": "tools/call", "params": {"name": '
            '"memory.propose", "arguments": {"repository": "%s", "summary": "s", '
            '"body": "# x", "metadata": {"tags": ["ok", "t\\udfff"]}}}}'
        )
        peer.send(propose % world.repo)
        assert peer.answer()["error"]["data"] == {"field": "params.arguments.metadata.tags[1]"}

        found = peer.ask(8, "tools/call", {
            "name": "memory.get_element", "arguments": {"element_id": element},
        })  # fmt: skip
        assert found["id"] == 8
        assert found["result"]["structuredContent"]["element"]["element_id"] == element
        assert peer.close() == 0
    assert not world.svc.curation.proposal_list(world.curator, world.repo)


def _poison(world: World, version_id: str) -> None:
    """Store what older code let through: JSON whose escapes decode to lone surrogates."""
    with world.app.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE element_versions SET metadata = :m WHERE version_id = :v"),
            {"m": '{"k": "\\ud800", "tags": ["tag\\udfffx"], "\\udbff": 1}', "v": version_id},
        )


def test_a_stored_lone_surrogate_is_served_as_u_fffd_by_every_surface(world: World) -> None:
    """Reading such a row gave 500 on REST, INTERNAL on gRPC, a traceback from
    ``element show --json`` and a dead ``ameide mcp`` over stdio."""
    element, version = world.canonical()
    _poison(world, version)
    expected = {"k": REPLACEMENT, "tags": [f"tag{REPLACEMENT}x"], REPLACEMENT: 1}

    shown = world.svc.elements.get_element(world.reader, element)
    assert shown["version"]["metadata"] == expected

    with rest_client(world) as rest:
        got = rest.ok("GET", f"/v1/elements/{element}", world.reader)
        assert got["version"]["metadata"] == expected
        rest.ok("GET", f"/v1/elements/{element}/history", world.reader)

    with serve(world) as grpc_client:
        reply = grpc_client.call(
            grpc_client.knowledge.GetElement,
            kno.GetElementRequest(element_id=element),
            world.reader,
        )
        assert reply.version.metadata["k"] == REPLACEMENT
        grpc_client.call(
            grpc_client.knowledge.GetElementHistory,
            kno.GetElementHistoryRequest(element_id=element),
            world.reader,
        )

    home = str(world.app.settings.home)
    runner = CliRunner()
    argv = ["--home", home, "--as", world.reader.principal_id, "element", "show", element]
    as_json = runner.invoke(cli_app, [*argv, "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout)["version"]["metadata"] == expected
    human = runner.invoke(cli_app, argv)
    assert human.exit_code == 0, human.output

    with stdio_peer(world, world.reader) as peer:
        got = peer.ask(2, "tools/call", {
            "name": "memory.get_element", "arguments": {"element_id": element},
        })  # fmt: skip
        assert got["result"]["structuredContent"]["version"]["metadata"] == expected
        assert peer.ask(3, "tools/call", {"name": "memory.health", "arguments": {}})["result"]
        assert peer.close() == 0


def test_a_reply_that_cannot_be_encoded_is_sent_with_u_fffd_instead_of_ending_stdio() -> None:
    """The SDK's stdout writer dies on a reply it cannot encode, and the server with it."""

    async def main() -> str:
        send, receive = anyio.create_memory_object_stream[SessionMessage](1)
        reply = JSONRPCResponse(jsonrpc="2.0", id=1, result={"title": "a\ud800b"})
        async with _EncodableReplies(send) as replies, receive:
            await replies.send(SessionMessage(reply))
            sent = await receive.receive()
        return sent.message.model_dump_json(by_alias=True, exclude_unset=True)

    assert json.loads(anyio.run(main)) == {
        "jsonrpc": "2.0", "id": 1, "result": {"title": f"a{REPLACEMENT}b"},
    }  # fmt: skip
