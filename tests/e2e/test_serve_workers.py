"""``ameide serve --workers 2``: real processes on real sockets over a temporary home.

One supervisor serves the whole module (spawning two workers costs seconds on a busy machine):
every surface answers, ``ameide test --target`` passes against it, a SIGKILLed worker is
restarted (logged) while the other keeps serving and ``/readyz`` says 503 until both are ready
again, and — last, since it ends the server — SIGTERM lets an in-flight request finish and the
supervisor exits 0.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import httpx
import pytest
from fastapi.testclient import TestClient
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ameide_proto.v1 import projection_pb2, projection_pb2_grpc
from server.rest.app import create_app
from smoke.content import ADMIN
from smoke.embedded import EmbeddedInstance
from smoke.surface import ServiceSurface
from tests.conftest import World

ROOT = Path(__file__).resolve().parents[2]
AMEIDE = Path(sys.executable).parent / "ameide"
REPO = "workers/eng/platform"
START_SECONDS = 120


@dataclass
class Pool:
    """The running ``ameide serve --workers 2``."""

    proc: subprocess.Popen[str]
    home: Path
    log: Path
    base: str
    grpc: str
    mcp: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def workers(self) -> list[int]:
        """The supervisor's worker processes (its children, less multiprocessing's tracker)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.proc.pid and "spawn_main" in cmdline:
                found.append(int(entry.name))
        return sorted(found)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def _announced(proc: subprocess.Popen[str], log: Path) -> dict[str, object]:
    assert proc.stdout is not None
    lines = [proc.stdout.readline()]  # printed once every worker is ready
    while lines[-1] and lines[-1].rstrip() != "}":
        lines.append(proc.stdout.readline())
    text = "".join(lines)
    assert text.strip(), f"ameide serve announced nothing:\n{log.read_text()}"
    found: dict[str, object] = json.loads(text)
    return found


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pool]:
    root = tmp_path_factory.mktemp("workers")
    instance = EmbeddedInstance.create(root)
    try:
        admin = ServiceSurface.caller(ADMIN)
        token = str(instance.service.tokens.create(admin, ADMIN)["token"])
        instance.service.admin.create_repository(admin, REPO)
        home = instance.settings.home
    finally:
        instance.close()
    log = root / "serve.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            [str(AMEIDE), "--home", str(home), "--json", "serve", "--workers", "2",
             "--port", "0", "--grpc-port", "0", "--grace", "5"],
            stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT, env=_env(),
        )  # fmt: skip
    try:
        endpoints = _announced(proc, log)
        assert endpoints["workers"] == 2
        yield Pool(
            proc,
            home,
            log,
            str(endpoints["rest"]).removesuffix("/v1"),
            str(endpoints["grpc"]),
            str(endpoints["mcp"]),
            token,
        )
    finally:
        assert proc.stdout is not None
        proc.stdout.close()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _read_over_grpc(pool: Pool) -> int:
    tenant, org, repo = REPO.split("/")
    scope = projection_pb2.Scope(tenant_id=tenant, organization_id=org, repository_id=repo)
    with grpc.insecure_channel(pool.grpc) as channel:
        stub = projection_pb2_grpc.ProjectionServiceStub(channel)
        request = projection_pb2.ReadContextRequest(scope=scope, query="workers")
        metadata = (("authorization", f"Bearer {pool.token}"),)
        return len(stub.GetReadContext(request, metadata=metadata, timeout=30).items)


def test_every_surface_answers_from_the_pool(pool: Pool) -> None:
    assert len(pool.workers()) == 2
    ready = httpx.get(f"{pool.base}/readyz", timeout=30)
    assert ready.status_code == 200, ready.text
    assert ready.json()["workers"] == {"ready": 2, "total": 2}
    for _ in range(6):  # a new connection each time: whichever worker accepts it answers
        listed = httpx.get(f"{pool.base}/v1/repositories", headers=pool.headers, timeout=30)
        assert listed.status_code == 200, listed.text
    assert _read_over_grpc(pool) == 0  # an empty repository, read through gRPC
    with grpc.insecure_channel(pool.grpc) as channel:
        check = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert check.status == health_pb2.HealthCheckResponse.SERVING
    mcp = httpx.post(
        pool.mcp,
        headers={**pool.headers, "Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        timeout=30,
    )
    assert mcp.status_code == 200, mcp.text
    assert "memory.get_context" in {tool["name"] for tool in mcp.json()["result"]["tools"]}


def test_ameide_test_passes_against_the_pool(pool: Pool, tmp_path: Path) -> None:
    run = subprocess.run(
        [str(AMEIDE), "--home", str(tmp_path / "client"), "test", "--phase", "2",
         "--target", pool.base, "--grpc-target", pool.grpc, "--json"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**_env(), "AMEIDE_TOKEN": pool.token},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr or run.stdout
    report = json.loads(run.stdout)
    assert report["ok"] is True
    steps = {s["name"]: s["status"] for s in report["steps"]}
    assert steps["phase2.server"] == "ok"
    assert steps["phase2.read-new"] == "ok"


def test_a_killed_worker_is_restarted_logged_and_the_other_keeps_serving(pool: Pool) -> None:
    before = pool.workers()
    assert len(before) == 2
    os.kill(before[0], signal.SIGKILL)

    not_ready, served = 0, 0
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        ready = httpx.get(f"{pool.base}/readyz", timeout=30)
        listed = httpx.get(f"{pool.base}/v1/repositories", headers=pool.headers, timeout=30)
        served += listed.status_code == 200
        if ready.status_code == 503:
            not_ready += 1
            assert ready.json()["workers"]["ready"] < 2
        elif not_ready and ready.status_code == 200:
            break
        time.sleep(0.05)
    assert not_ready, "/readyz never said 503 while a worker was missing"
    assert ready.status_code == 200, ready.text
    assert ready.json()["workers"] == {"ready": 2, "total": 2}
    assert served >= not_ready  # the surviving worker answered throughout
    after = pool.workers()
    assert len(after) == 2
    assert before[0] not in after
    log = pool.stderr()
    assert f"(pid {before[0]}) exited with signal SIGKILL; restarting it" in log
    assert "worker 1 restarted (pid" in log or "worker 2 restarted (pid" in log
    assert _read_over_grpc(pool) == 0  # an empty repository, read through gRPC


def test_sigterm_lets_an_in_flight_request_finish_and_exits_0(pool: Pool) -> None:
    """Last in the module: it stops the pool."""
    tenant, org, repo = REPO.split("/")
    scope = {"tenant_id": tenant, "organization_id": org, "repository_id": repo}
    body = json.dumps({"scope": scope, "query": "workers"}).encode()
    host, port = pool.base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as conn:
        head = (
            f"POST /v1/context HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Authorization: Bearer {pool.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        conn.sendall(head + body[:5])  # the request has begun: a worker is handling it
        time.sleep(1.0)
        pool.proc.send_signal(signal.SIGTERM)
        time.sleep(1.0)  # both workers are draining now
        conn.sendall(body[5:])
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 "), answer[:200]
    assert status_line == b"HTTP/1.1 200 OK", answer[:300]
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["items"] == []
    assert pool.proc.wait(timeout=60) == 0
    log = pool.stderr()
    assert log.count("stopped: HTTP and gRPC drained") == 2
    assert "stopped: 2 workers drained" in log
    assert "Traceback" not in log
    assert pool.workers() == []


def test_readyz_is_503_while_a_worker_is_not_ready(world: World) -> None:
    rest = create_app(world.svc, settings=world.app.settings, workers=lambda: (1, 2))
    with TestClient(rest) as client:
        ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["status"] == "not_ready"
    assert ready.json()["workers"] == {"ready": 1, "total": 2}


def test_the_supervisor_refuses_an_open_bind_without_authentication(tmp_path: Path) -> None:
    instance = EmbeddedInstance.create(tmp_path)
    instance.close()
    run = subprocess.run(
        [str(AMEIDE), "--home", str(instance.settings.home), "--as", ADMIN, "serve",
         "--workers", "2", "--host", "0.0.0.0", "--no-auth"],
        capture_output=True, text=True, timeout=120, check=False, cwd=ROOT, env=_env(),
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    assert "refusing to serve on 0.0.0.0 without authentication" in run.stderr
    assert run.stderr.count("\n") == 1  # before any worker starts
