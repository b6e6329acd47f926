"""The surface benchmark runs end to end in its quickest mode: it seeds a home, starts
``ameide serve`` as a child process, reads through every surface at two concurrencies, stops the
server and prints one table row per surface and concurrency with no error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SURFACES = ("in-process", "REST", "gRPC", "MCP/HTTP")


@pytest.mark.slow
def test_the_quick_surface_benchmark_reads_through_every_surface() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_surface", "--quick", "--requests", "6",
         "--clients", "1", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("surface "))
    columns = lines[header].split()
    assert columns[:3] == ["surface", "clients", "requests"]
    rows = [line.split() for line in lines[header + 2 :] if line.strip()]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (surface, clients, "6") for surface in SURFACES for clients in ("1", "2")
    ]
    for row in rows:
        assert row[-1] == "0", f"errors in {row}"
        assert float(row[-2]) > 0, f"no items in {row}"  # items per request
        assert float(row[3].replace(",", "")) > 0, f"no throughput in {row}"
