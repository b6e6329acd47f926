"""The surface benchmark runs end to end in its quickest mode: it seeds a home, starts
``ameide serve --workers 1`` then ``--workers 2`` as child processes, reads through every surface
at two concurrencies, stops the servers and prints one table row per surface, worker count and
concurrency with no error, then the worker-scaling checks."""

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
    # The harness is what is tested here: embedding the seeded sample before timing (and the
    # servers' model) would only add a minute of CPU on a busy test machine.
    env["AMEIDE_SEMANTIC"] = "off"
    done = subprocess.run(
        [sys.executable, "-m", "bench.bench_surface", "--quick", "--requests", "6",
         "--clients", "1", "8", "--workers", "1", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("surface "))
    columns = lines[header].split()
    assert columns[:4] == ["surface", "workers", "clients", "requests"]
    end = next(i for i in range(header + 2, len(lines)) if not lines[i].strip())
    rows = [line.split() for line in lines[header + 2 : end]]
    expected = [("in-process", "-", clients, "6") for clients in ("1", "8")]
    expected += [
        (surface, workers, clients, "6")
        for workers in ("1", "2")
        for surface in SURFACES[1:]
        for clients in ("1", "8")
    ]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == expected
    for row in rows:
        assert row[-1] == "0", f"errors in {row}"
        assert float(row[-2]) > 0, f"no items in {row}"  # items per request
        assert float(row[4].replace(",", "")) > 0, f"no throughput in {row}"
    checks = "\n".join(lines[end:])
    assert "REST x8 clients: --workers 2 " in checks
    assert "REST --workers 2: p95 x8 clients " in checks
