"""`ameide index status|rebuild` through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()


def _ameide(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), "--as", "user:admin", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_deleted_index_is_rebuilt_by_the_next_status_and_a_rebuild_restores_it(tmp_path: Path):
    home = tmp_path / "home"
    body = tmp_path / "body.md"
    body.write_text("# Testing SOP\n\nphase tests\n", encoding="utf-8")
    _ameide(home, "init", "--admin", "user:admin")
    _ameide(home, "repo", "create", "acme/eng/platform")
    _ameide(home, "element", "create", "--repo", "acme/eng/platform", "--title", "SOP",
            "--body-file", str(body))  # fmt: skip
    assert json.loads(_ameide(home, "index", "status", "--json"))["consistent"] is True
    shutil.rmtree(home / "index")
    healed = json.loads(_ameide(home, "index", "status", "--json"))  # derived: rebuilt from the db
    assert (healed["consistent"], healed["indexed_versions"]) == (True, 1)
    shutil.rmtree(home / "index")
    rebuilt = json.loads(_ameide(home, "index", "rebuild", "--json"))
    assert rebuilt["versions"] == 1
    assert rebuilt["consistent"] is True
