"""An index directory shared by mistake between two nodes is refused (issue 31 §3): two real
``ameide serve`` processes, the second naming the first's index directory (``AMEIDE_INDEX_DIR``)
as another node (``AMEIDE_NODE_ID``), or for another database, fails at start, saying why."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from smoke.embedded import EmbeddedInstance

ROOT = Path(__file__).resolve().parents[2]
AMEIDE = Path(sys.executable).parent / "ameide"


def _env(node: str, index_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(AMEIDE_NODE_ID=node, AMEIDE_INDEX_DIR=str(index_dir), AMEIDE_SEMANTIC="off")
    return env


def _serve(home: Path) -> list[str]:
    return [str(AMEIDE), "--home", str(home), "--json", "serve", "--port", "0",
            "--grpc-port", "0", "--grace", "1"]  # fmt: skip


def _home(root: Path) -> Path:
    instance = EmbeddedInstance.create(root)
    home = instance.settings.home
    instance.close()
    return home


def test_a_second_node_or_database_on_a_live_nodes_index_directory_is_refused(
    tmp_path: Path,
) -> None:
    home, other_home = _home(tmp_path / "a"), _home(tmp_path / "b")
    shared = tmp_path / "shared-index"
    log = tmp_path / "node-a.log"
    with log.open("w") as stderr:
        first = subprocess.Popen(
            _serve(home), stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT,
            env=_env("node-a", shared),
        )  # fmt: skip
    try:
        assert first.stdout is not None
        announced = first.stdout.readline()
        assert announced.strip(), f"node-a did not start:\n{log.read_text()}"
        owner = json.loads((shared / "owner.json").read_text())
        assert owner["node"] == "node-a"

        second = subprocess.run(
            _serve(home), capture_output=True, text=True, cwd=ROOT, timeout=180,
            env=_env("node-b", shared),
        )  # fmt: skip
        assert second.returncode != 0
        said = second.stdout + second.stderr
        assert "kept by another node, node-a" in said, said

        third = subprocess.run(
            _serve(other_home), capture_output=True, text=True, cwd=ROOT, timeout=180,
            env=_env("node-a", shared),
        )  # fmt: skip
        assert third.returncode != 0
        said = third.stdout + third.stderr
        assert "is the index of another database" in said, said
        assert first.poll() is None, "the first node kept serving"
    finally:
        assert first.stdout is not None
        first.stdout.close()
        first.send_signal(signal.SIGTERM)
        try:
            first.wait(timeout=60)
        except subprocess.TimeoutExpired:
            first.kill()
            first.wait()
