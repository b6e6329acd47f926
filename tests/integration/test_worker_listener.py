"""The workers' shared HTTP listener hands out connections with Nagle's algorithm off, as a
socket uvicorn binds itself does: without it, every response on a kept-alive connection waited
~40 ms for the client's delayed ACK (a `--workers 2` server answered one client at 16 req/s
against 52 for `--workers 1`). Checked on a real socket through asyncio, which is what
uvicorn's server runs on; the socket a spawned worker rebuilds keeps the protocol it was made
with (multiprocessing's socket reduction passes family, type and protocol)."""

from __future__ import annotations

import asyncio
import pickle
import socket
from multiprocessing.reduction import ForkingPickler

from server.workers import _listen


async def _accepted_nodelay(listener: socket.socket) -> int:
    loop = asyncio.get_running_loop()
    seen: asyncio.Future[int] = loop.create_future()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(handle, sock=listener)
    async with server:
        host, port = listener.getsockname()[:2]
        _, writer = await asyncio.open_connection(host, port)
        try:
            return await asyncio.wait_for(seen, timeout=30)
        finally:
            writer.close()


def test_connections_accepted_on_the_shared_listener_have_nagle_off() -> None:
    listener = _listen("127.0.0.1", 0)
    assert listener.proto == socket.IPPROTO_TCP
    assert asyncio.run(_accepted_nodelay(listener)) != 0


def test_the_socket_a_spawned_worker_rebuilds_says_tcp_too() -> None:
    listener = _listen("127.0.0.1", 0)
    try:
        rebuilt = pickle.loads(ForkingPickler.dumps(listener))
    finally:
        listener.close()
    try:
        assert rebuilt.proto == socket.IPPROTO_TCP
    finally:
        rebuilt.close()
