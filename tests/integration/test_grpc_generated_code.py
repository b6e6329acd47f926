"""The committed generated gRPC code is what ``scripts/gen_proto.py`` produces from ``proto/``.

Regenerates into a temporary directory and compares byte for byte: a ``.proto`` edited without
regenerating (or a generated file edited by hand) fails here with the file's diff.
"""

from __future__ import annotations

import difflib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gen_proto.py"


def _gen_proto() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_proto", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_regenerating_the_grpc_code_changes_nothing(tmp_path: Path) -> None:
    gen = _gen_proto()
    fresh = {p.name: p for p in gen.generate(tmp_path)}
    committed = {p.name: p for p in gen.generated_files(ROOT)}
    assert sorted(fresh) == sorted(committed), "run: python scripts/gen_proto.py"
    for name, path in sorted(fresh.items()):
        new, old = path.read_text(encoding="utf-8"), committed[name].read_text(encoding="utf-8")
        if new != old:
            diff = difflib.unified_diff(
                old.splitlines(), new.splitlines(), f"committed/{name}", f"regenerated/{name}"
            )
            head = "\n".join(list(diff)[:40])
            raise AssertionError(f"{name} is stale; run: python scripts/gen_proto.py\n{head}")


def test_every_proto_file_generates_its_three_modules(tmp_path: Path) -> None:
    gen = _gen_proto()
    stems = {Path(p).stem for p in gen.proto_files()}
    assert stems == {"common", "knowledge", "governance", "projection"}
    expected = {f"{s}{suffix}" for s in stems for suffix in gen.GENERATED_SUFFIXES}
    assert {p.name for p in gen.generated_files(ROOT)} == expected


def test_the_check_command_reports_fresh_code() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "fresh" in done.stdout


def test_the_check_command_names_a_stale_file(tmp_path: Path) -> None:
    gen = _gen_proto()
    gen.generate(tmp_path)
    stale = tmp_path / "ameide_proto" / "v1" / "knowledge_pb2.py"
    stale.write_text(stale.read_text(encoding="utf-8") + "# edited by hand\n", encoding="utf-8")
    assert gen.stale_files(tmp_path) == ["changed: ameide_proto/v1/knowledge_pb2.py"]
