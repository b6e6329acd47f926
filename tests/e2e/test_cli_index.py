"""`ameide index status|rebuild` through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app

runner = CliRunner()


def _ameide(home: Path, *args: str) -> str:
    result = runner.invoke(app, ["--home", str(home), "--as", "user:admin", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def _home_with_one_element(tmp_path: Path, title: str, text: str) -> Path:
    """An initialised home with one repository holding one canonical element."""
    home = tmp_path / "home"
    body = tmp_path / "body.md"
    body.write_text(text, encoding="utf-8")
    _ameide(home, "init", "--admin", "user:admin")
    _ameide(home, "repo", "create", "acme/eng/platform")
    _ameide(home, "element", "create", "--repo", "acme/eng/platform", "--title", title,
            "--body-file", str(body))  # fmt: skip
    return home


def test_a_deleted_index_is_rebuilt_by_the_next_status_and_a_rebuild_restores_it(tmp_path: Path):
    home = _home_with_one_element(tmp_path, "SOP", "# Testing SOP\n\nphase tests\n")
    assert json.loads(_ameide(home, "index", "status", "--json"))["consistent"] is True
    shutil.rmtree(home / "index")
    healed = json.loads(_ameide(home, "index", "status", "--json"))  # derived: rebuilt from the db
    assert (healed["consistent"], healed["indexed_versions"]) == (True, 1)
    shutil.rmtree(home / "index")
    rebuilt = json.loads(_ameide(home, "index", "rebuild", "--json"))
    assert rebuilt["versions"] == 1
    assert rebuilt["consistent"] is True


def test_status_names_the_engine_and_switching_engines_rebuilds_from_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AMEIDE_INDEX_ENGINE", raising=False)
    home = _home_with_one_element(tmp_path, "SOP", "# Testing SOP\n\nphase tests\n")
    first = json.loads(_ameide(home, "index", "status", "--json"))
    assert (first["engine"], first["consistent"]) == ("tantivy", True)  # the default
    assert "index (tantivy) consistent" in _ameide(home, "index", "status")

    (home / "config.json").write_text(json.dumps({"index": {"engine": "whoosh"}}))
    switched = json.loads(_ameide(home, "index", "status", "--json"))  # built from the database
    assert (switched["engine"], switched["consistent"], switched["indexed_versions"]) == (
        "whoosh", True, 1,
    )  # fmt: skip
    assert json.loads((home / "index" / "state.json").read_text())["engine"] == "whoosh"
    read = json.loads(_ameide(home, "context", "phase tests", "--repo", "acme/eng/platform",
                              "--selector", "head", "--json"))  # fmt: skip
    assert [item["title"] for item in read["items"]] == ["SOP"]

    monkeypatch.setenv("AMEIDE_INDEX_ENGINE", "tantivy")  # the environment wins over the file
    assert json.loads(_ameide(home, "index", "status", "--json"))["engine"] == "tantivy"
    monkeypatch.setenv("AMEIDE_INDEX_ENGINE", "lucene")
    refused = runner.invoke(app, ["--home", str(home), "--as", "user:admin", "index", "status"])
    assert refused.exit_code != 0
    assert "AMEIDE_INDEX_ENGINE" in refused.output


def test_index_embed_builds_the_vectors_and_status_reports_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With AMEIDE_SEMANTIC unset, as a user runs it: semantic recall is on by default."""
    from tests.semantic_extra import require_semantic

    require_semantic()
    monkeypatch.delenv("AMEIDE_SEMANTIC", raising=False)
    home = _home_with_one_element(
        tmp_path, "Deploying", "# Deploying\n\nShip the service to the cluster.\n"
    )
    waiting = " ".join(_ameide(home, "index", "status").split())  # as read, whatever the wrapping
    assert "embeddings (all-MiniLM-L6-v2): 0 of 1 versions embedded" in waiting
    assert "does not embed in the background" in waiting
    assert "ameide index embed" in waiting
    built = json.loads(_ameide(home, "index", "embed", "--json"))
    assert (built["model"], built["pending"], built["indexed_versions"]) == (
        "all-MiniLM-L6-v2",
        0,
        1,
    )
    assert (home / "index-vectors" / "vectors.sqlite").is_file()
    status = json.loads(_ameide(home, "index", "status", "--json"))
    assert status["semantic"]["indexed_versions"] == 1
    done = _ameide(home, "index", "status")
    assert "embeddings (all-MiniLM-L6-v2): 1 of 1 versions embedded (1 of 1 texts)" in done
    assert "ameide index embed" not in done


def test_index_embed_without_semantic_recall_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AMEIDE_SEMANTIC", "off")
    home = tmp_path / "home"
    _ameide(home, "init", "--admin", "user:admin")
    result = runner.invoke(app, ["--home", str(home), "--as", "user:admin", "index", "embed"])
    assert result.exit_code != 0
    assert "AMEIDE_SEMANTIC" in result.output
    assert "semantic recall is off" in _ameide(home, "index", "status")
