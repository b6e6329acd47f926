"""A request body over the limit is 413 ``PAYLOAD_TOO_LARGE`` on every route of ``ameide serve``,
however it is framed (issue 28 item 2).

A declared ``Content-Length`` over the limit was refused with 413, but the same body sent
``Transfer-Encoding: chunked`` (no length) was a 500 with tracebacks on the REST and console
routes, even without a token, and ``/mcp`` answered its SDK's plain-text 413 (or, without a
token, a 401 after buffering the whole body). Every request here goes to a real ``ameide serve``
process over a raw socket, so the body really is chunked, and its stderr must hold no traceback.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from server.rest.app import MAX_BODY_BYTES
from smoke.content import ADMIN
from smoke.embedded import EmbeddedInstance
from smoke.surface import ServiceSurface

ROOT = Path(__file__).resolve().parents[2]
AMEIDE = Path(sys.executable).parent / "ameide"
OVER = 9 * 1024 * 1024  # the 9 MB, over the 8 MiB limit
CHUNK = 64 * 1024
JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
ROUTES = [("/v1/context", JSON), ("/ui/sign-in", FORM), ("/mcp", JSON)]


@dataclass
class Served:
    """The running ``ameide serve`` (one worker) and its stderr."""

    port: int
    log: Path
    token: str

    def mark(self) -> int:
        """Where the server's stderr ends now."""
        return self.log.stat().st_size

    def stderr_since(self, mark: int) -> str:
        with self.log.open("rb") as log:
            log.seek(mark)
            return log.read().decode("utf-8", errors="replace")


@dataclass
class Answer:
    """The first response on the connection, and what the server sent after it."""

    status: int
    headers: dict[str, str]
    body: bytes
    rest: bytes

    def error(self) -> dict[str, object]:
        assert self.headers.get("content-type") == JSON, (self.headers, self.body[:200])
        document = json.loads(self.body)
        assert set(document) == {"error"}
        error: dict[str, object] = document["error"]
        assert set(error) == {"code", "message", "details"}
        return error


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("body-limit")
    instance = EmbeddedInstance.create(root)
    try:
        token = str(instance.service.tokens.create(ServiceSurface.caller(ADMIN), ADMIN)["token"])
        home = instance.settings.home
    finally:
        instance.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    log = root / "serve.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [str(AMEIDE), "--home", str(home), "--json", "serve", "--workers", "1",
             "--port", "0", "--grpc-port", "0", "--grace", "2"],
            stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT, env=env,
        )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline()]  # printed once every surface listens
        while lines[-1] and lines[-1].rstrip() != "}":
            lines.append(proc.stdout.readline())
        assert "".join(lines).strip(), f"ameide serve announced nothing:\n{log.read_text()}"
        rest = str(json.loads("".join(lines))["rest"])
        yield Served(int(rest.rsplit(":", 1)[1].split("/")[0]), log, token)
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _chunked(size: int) -> Iterator[bytes]:
    piece = b"x" * CHUNK
    for _ in range(size // CHUNK):
        yield b"%x\r\n" % CHUNK + piece + b"\r\n"
    yield b"0\r\n\r\n"


def _plain(size: int) -> Iterator[bytes]:
    piece = b"x" * CHUNK
    for _ in range(size // CHUNK):
        yield piece


def _send(
    port: int, path: str, headers: dict[str, str], body: Iterable[bytes], *, read_on: bool = False
) -> Answer:
    """POST ``path`` over a raw socket, writing ``body`` while the answer is read (the server
    may answer before the body ends); return the first response and, with ``read_on``, all
    that followed it until the server closed the connection."""
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items()) + "\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:

        def write() -> None:
            try:
                sock.sendall(head.encode())
                for piece in body:
                    sock.sendall(piece)
            except OSError:
                pass  # the server answered and closed: the answer is what counts

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        data = b""
        while b"\r\n\r\n" not in data:
            more = sock.recv(65536)
            assert more, f"the connection closed without an answer: {data!r}"
            data += more
        head_bytes, _, data = data.partition(b"\r\n\r\n")
        status_line, *lines = head_bytes.decode("latin-1").split("\r\n")
        fields = dict(line.split(": ", 1) for line in lines)
        answer_headers = {name.lower(): value for name, value in fields.items()}
        length = int(answer_headers["content-length"])
        while len(data) < length:
            more = sock.recv(65536)
            assert more, "the connection closed inside the answer"
            data += more
        rest = data[length:]
        if read_on:  # until the server closes the connection
            try:
                while more := sock.recv(65536):
                    rest += more
            except ConnectionResetError:
                pass
        writer.join(timeout=30)
    return Answer(int(status_line.split()[1]), answer_headers, data[:length], rest)


def _no_traceback(served: Served, mark: int) -> None:
    """Nothing the server wrote to stderr since ``mark`` is a traceback."""
    time.sleep(0.3)  # the server logs before or just after it answers
    log = served.stderr_since(mark)
    assert "Traceback" not in log, log[-4000:]
    assert "Exception in ASGI application" not in log, log[-4000:]


@pytest.mark.parametrize("authenticated", [False, True], ids=["anonymous", "with-token"])
@pytest.mark.parametrize(("path", "content_type"), ROUTES, ids=[p for p, _ in ROUTES])
def test_a_chunked_body_over_the_limit_is_413_on_every_route(
    served: Served, path: str, content_type: str, authenticated: bool
) -> None:
    headers = {"Content-Type": content_type, "Transfer-Encoding": "chunked"}
    if path == "/mcp":
        headers["Accept"] = "application/json, text/event-stream"
    if authenticated:
        headers["Authorization"] = f"Bearer {served.token}"
    mark = served.mark()
    answer = _send(served.port, path, headers, _chunked(OVER))
    assert answer.status == 413, answer
    error = answer.error()
    assert error["code"] == "PAYLOAD_TOO_LARGE"
    assert error["message"] == f"the request body is larger than {MAX_BODY_BYTES} bytes"
    _no_traceback(served, mark)


@pytest.mark.parametrize(("path", "content_type"), ROUTES, ids=[p for p, _ in ROUTES])
def test_a_declared_length_over_the_limit_gets_the_same_answer(
    served: Served, path: str, content_type: str
) -> None:
    headers = {"Content-Type": content_type, "Content-Length": str(OVER)}
    mark = served.mark()
    answer = _send(served.port, path, headers, _plain(OVER))
    assert answer.status == 413, answer
    assert answer.error()["code"] == "PAYLOAD_TOO_LARGE"
    _no_traceback(served, mark)


def test_mcp_takes_a_body_within_the_limit_that_its_sdk_alone_would_refuse(
    served: Served,
) -> None:
    """The MCP SDK's own cap (4 MiB, plain text) no longer undercuts the listener's limit."""
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"pad": ""}}}
    body = json.dumps(ping).replace('"pad": ""', '"pad": "' + "x" * (5 * 1024 * 1024) + '"')
    headers = {
        "Content-Type": JSON,
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {served.token}",
        "Transfer-Encoding": "chunked",
    }
    raw = body.encode()
    framed = [b"%x\r\n" % len(raw) + raw + b"\r\n", b"0\r\n\r\n"]
    mark = served.mark()
    answer = _send(served.port, "/mcp", headers, framed)
    assert answer.status == 200, answer
    assert json.loads(answer.body) == {"jsonrpc": "2.0", "id": 1, "result": {}}
    _no_traceback(served, mark)


@pytest.mark.parametrize("path", ["/v1/context", "/mcp"])
def test_a_small_declared_length_cannot_carry_more(served: Served, path: str) -> None:
    """A lying ``Content-Length`` frames the body: the route sees only the declared bytes, and
    the rest is not a request, so the server closes the connection after refusing it."""
    headers = {"Content-Type": JSON, "Content-Length": "10"}
    mark = served.mark()
    answer = _send(served.port, path, headers, _plain(OVER), read_on=True)
    assert answer.status in (400, 401), answer  # a 10-byte body is no valid request
    assert answer.error()["code"] in ("INVALID_ARGUMENT", "UNAUTHENTICATED")
    assert answer.rest.startswith(b"HTTP/1.1 400 Bad Request"), answer.rest[:200]
    assert b"connection: close" in answer.rest.lower()
    _no_traceback(served, mark)


def test_a_small_length_beside_chunked_framing_is_counted_as_chunked(served: Served) -> None:
    """``Content-Length`` next to ``Transfer-Encoding: chunked`` is ignored for framing (the
    chunks are the body), so the small length must not let a large body past the gate."""
    headers = {"Content-Type": JSON, "Content-Length": "10", "Transfer-Encoding": "chunked"}
    mark = served.mark()
    answer = _send(served.port, "/v1/context", headers, _chunked(OVER))
    assert answer.status == 413, answer
    assert answer.error()["code"] == "PAYLOAD_TOO_LARGE"
    _no_traceback(served, mark)
