"""Multi-node propagation (issue 31 §3): two ``ameide serve`` processes on one PostgreSQL
database, each with its own home and keyword index kept from the outbox.

Run: ``.venv/bin/python -m bench.bench_nodes`` (``--writes 60 --readers 4``). It creates a fresh
database on ``--server`` (default the local PostgreSQL), initialises it through the CLI, starts
node 1 and node 2 (``serve --no-auth`` on loopback, ``AMEIDE_SEMANTIC=off``), keeps ``--readers``
threads reading through node 2 (``POST /v1/context``, random questions) and, meanwhile, creates
elements through node 1, one every ``--interval`` seconds, each with a word of its own. After
each write returns, a poller reads that word through node 2 until the element is in the answer:
write → readable on the other node, p50 / p95 / max, with the background reads' latency beside.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa

from bench.tables import columns

ROOT = Path(__file__).resolve().parents[1]
AMEIDE = Path(sys.executable).parent / "ameide"
REPO = "nodes/eng/platform"
WORDS = ("deploy", "rollback", "canary", "runbook", "latency", "quorum", "replica", "lease")


def _env(url: str, node: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(AMEIDE_DATABASE_URL=url, AMEIDE_SEMANTIC="off", AMEIDE_NODE_ID=node)
    return env


def _ameide(home: Path, url: str, node: str, *args: str) -> None:
    command = [str(AMEIDE), "--home", str(home), "--as", "user:admin", *args]
    subprocess.run(command, env=_env(url, node), check=True, capture_output=True, cwd=ROOT)


def _serve(home: Path, url: str, node: str, log: Path) -> tuple[subprocess.Popen[str], str]:
    command = [str(AMEIDE), "--home", str(home), "--as", "user:admin", "--json", "serve",
               "--no-auth", "--port", "0", "--grpc-port", "0", "--grace", "2"]  # fmt: skip
    with log.open("w") as stderr:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                cwd=ROOT, env=_env(url, node))  # fmt: skip
    assert proc.stdout is not None
    lines = [proc.stdout.readline()]
    while lines[-1] and lines[-1].rstrip() != "}":
        lines.append(proc.stdout.readline())
    announced = json.loads("".join(lines) or "{}")
    if "rest" not in announced:
        raise RuntimeError(f"{node} did not start: {announced} {log.read_text()[-2000:]}")
    return proc, str(announced["rest"])


def _read(client: httpx.Client, base: str, query: str) -> list[str]:
    tenant, org, repo = REPO.split("/")
    body = {"scope": {"tenant_id": tenant, "organization_id": org, "repository_id": repo},
            "query": query, "selector": {"kind": "head"}}  # fmt: skip
    answer = client.post(f"{base}/context", json=body, timeout=60)
    answer.raise_for_status()
    return [str(item["element_id"]) for item in answer.json()["items"]]


def measure(url: str, writes: int, readers: int, interval: float, root: Path) -> dict[str, Any]:
    """Start both nodes, write through node 1 under a read load on node 2, return the figures."""
    homes = [root / "node-1", root / "node-2"]
    _ameide(homes[0], url, "node-1", "init", "--admin", "user:admin")  # as node 1: its home
    _ameide(homes[0], url, "node-1", "repo", "create", REPO)
    nodes = [_serve(home, url, f"node-{n}", root / f"node-{n}.log") for n, home in
             enumerate(homes, 1)]  # fmt: skip
    stop = threading.Event()
    background: list[float] = []

    def load() -> None:
        with httpx.Client() as client:
            while not stop.is_set():
                started = time.perf_counter()
                _read(client, nodes[1][1], " ".join(random.sample(WORDS, 3)))
                background.append(time.perf_counter() - started)

    threads = [threading.Thread(target=load, daemon=True) for _ in range(readers)]
    lags: list[float] = []
    polls: list[int] = []  # reads of node 2 until the write was in the answer
    try:
        for thread in threads:
            thread.start()
        with httpx.Client() as client:
            tenant, org, repo = REPO.split("/")
            create = f"{nodes[0][1]}/repositories/{tenant}/{org}/{repo}/elements"
            for n in range(writes):
                word = f"marker{secrets.token_hex(4)}"
                text = f"# Note {n}\n\n{' '.join(random.sample(WORDS, 4))} {word}\n"
                made = client.post(create, json={"title": f"Note {n}", "body": text}, timeout=60)
                made.raise_for_status()
                written = time.perf_counter()
                element_id = made.json()["element"]["element_id"]
                polls.append(1)
                while element_id not in _read(client, nodes[1][1], word):
                    polls[-1] += 1
                    time.sleep(0.005)
                lags.append(time.perf_counter() - written)
                time.sleep(interval)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        for proc, _ in nodes:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    return {
        "writes": writes,
        "readers": readers,
        "propagation": _ms(lags),
        "reads_until_visible": f"{statistics.median(polls):.0f} / {max(polls)} (p50 / max)",
        "background_reads": len(background),
        "background_read": _ms(background),
        "load_average": round(os.getloadavg()[0], 1),
    }


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (f"{statistics.median(ordered) * 1000:.1f} / {p95 * 1000:.1f} / "
            f"{ordered[-1] * 1000:.1f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", default="postgresql+psycopg://postgres@127.0.0.1:5432")
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--readers", type=int, default=4)
    parser.add_argument("--interval", type=float, default=0.2)
    args = parser.parse_args()
    name = f"ameide_nodes_{secrets.token_hex(4)}"
    admin = sa.create_engine(f"{args.server}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    try:
        with tempfile.TemporaryDirectory() as directory:
            found = measure(f"{args.server}/{name}", args.writes, args.readers, args.interval,
                            Path(directory))  # fmt: skip
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()
    print(json.dumps(found))
    print()
    rows = [[key.replace("_", " "), str(value)] for key, value in found.items()]
    print(columns(["measure (p50 / p95 / max)", "two serve nodes on one PostgreSQL"], rows))


if __name__ == "__main__":
    main()
