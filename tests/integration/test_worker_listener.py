"""The workers' shared HTTP listener hands out connections with Nagle's algorithm off, as a
socket uvicorn binds itself does: without it, every response on a kept-alive connection waited
~40 ms for the client's delayed ACK (a `--workers 2` server answered one client at 16 req/s
against 52 for `--workers 1`). Checked on a real socket through asyncio, which is what
uvicorn's server runs on; the socket a spawned worker rebuilds keeps the protocol it was made
with (multiprocessing's socket reduction passes family, type and protocol). And a worker takes
one connection per wake-up, leaving it for a while to a worker with fewer open connections."""

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


def test_a_worker_takes_one_connection_per_wakeup_and_leaves_one_to_a_less_loaded_worker() -> None:
    import time

    from server import workers

    shared = _listen("127.0.0.1", 0)
    address = shared.getsockname()
    counts = [0, 0]  # what the supervisor's shared array holds
    first = workers.OneAcceptPerWakeup(0, counts, fileno=shared.dup().detach())
    second = workers.OneAcceptPerWakeup(1, counts, fileno=shared.detach())
    first.setblocking(False)  # as asyncio has it
    second.setblocking(False)
    clients = [socket.create_connection(address) for _ in range(5)]
    time.sleep(0.1)  # all four pending in the kernel's queue

    conn, _ = first.accept()
    assert counts == [1, 0]
    try:
        first.accept()
        raise AssertionError("a second connection in the same wake-up")
    except BlockingIOError:
        pass  # asyncio ends its accept loop here
    started = time.monotonic()
    try:
        first.accept()  # next wake-up: the other worker holds fewer connections
        raise AssertionError("took a connection from a less loaded worker")
    except BlockingIOError:
        pass
    other, _ = second.accept()
    assert counts == [1, 1]
    second._hold = False  # the next wake-up of the second worker
    third, _ = second.accept()
    assert counts == [1, 2]
    fourth, _ = first.accept()  # now the least loaded again
    assert counts == [2, 2]

    third.close()
    assert counts == [2, 1]  # a closed connection counts itself out
    third.close()
    assert counts == [2, 1]  # once
    first._hold = False
    first._deferring = None
    passes = 0
    while True:  # the first holds more, so it leaves it for DEFER_SECONDS, then takes it
        try:
            last, _ = first.accept()
            break
        except BlockingIOError:
            passes += 1
            assert time.monotonic() - started < 5
    assert passes >= 2  # it waited a while for the other worker first
    assert counts == [3, 1]
    for sock in [conn, other, fourth, last, first, second, *clients]:
        sock.close()
    assert counts == [0, 0]
