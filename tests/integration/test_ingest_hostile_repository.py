"""A hostile repository through the whole ingest run: every bad file is skipped with its reason,
the run completes, and nothing outside the source repository is ever opened."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from edge.results import as_json
from runtime import App
from service.authz import Caller
from tests.conftest import make_world
from tests.integration.ingest.conftest import GitRepo

FIFTY_MB = 50 * 1024 * 1024

_opened: list[str] | None = None


def _record_opens(event: str, args: tuple[object, ...]) -> None:
    if _opened is not None and event == "open" and isinstance(args[0], str | bytes | Path):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_record_opens)


@contextmanager
def python_file_opens() -> Iterator[list[str]]:
    """Every file Python opens inside the block (audit hooks cannot be removed, so it idles)."""
    global _opened
    _opened = []
    try:
        yield _opened
    finally:
        _opened = None


def test_a_hostile_repository_is_ingested_around_its_bad_files(sqlite_app: App, tmp_path):
    world = make_world(sqlite_app)
    ingestor = Caller("service:ingest")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    git = GitRepo(tmp_path / "hostile")
    outside = tmp_path / "outside-secret.md"
    outside.write_text("# TOP SECRET, outside the repository\n")
    git.write("backlog/ok.md", "# Fine\n\nA normal file.\n")
    os.symlink("/etc/passwd", git.root / "backlog" / "passwd.md")
    os.symlink(outside, git.root / "backlog" / "escape.md")
    with (git.root / "backlog" / "huge.md").open("wb") as big:
        big.write(b"# huge\n")
        big.truncate(FIFTY_MB)  # a sparse file: quick to write, 50 MB to git
    git.write("backlog/image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    git.write("backlog/latin1.md", "# Café crème\n".encode("latin-1"))
    git.write("backlog/broken-front-matter.md", "---\ntitle: [unclosed\n---\n# Body\n")
    git.write("backlog/never-closed.md", "---\ntitle: x\n# Body without a closing line\n")
    git.write("backlog/bell\x07.md", "# bell\n")
    git.commit("hostile")

    with python_file_opens() as opened:
        report = world.svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo)

    codes = {s["path"]: s["code"] for s in report["skipped"]}
    assert codes == {
        "backlog/bell\x07.md": "unsafe_path",
        "backlog/broken-front-matter.md": "front_matter",
        "backlog/escape.md": "symlink",
        "backlog/huge.md": "too_large",
        "backlog/image.md": "binary",
        "backlog/latin1.md": "undecodable",
        "backlog/never-closed.md": "front_matter",
        "backlog/passwd.md": "symlink",
    }
    assert all(s["reason"] for s in report["skipped"])
    assert report["counts"]["new"] == 1
    assert report["counts"]["skipped"] == 8
    assert opened, "the audit hook saw no file opens at all"
    assert not any(p.startswith(("/etc/passwd", str(outside))) for p in opened)
    assert not any(p.startswith(str(git.root / "backlog")) for p in opened)  # no working tree
    events = [e["event_type"] for e in world.svc.history.history(world.auditor, world.repo)]
    assert events.count("element.created") == 1
    assert events[-1] == "ingest.run"


def test_a_hand_made_tree_with_escaping_paths_is_skipped_not_followed(sqlite_app: App, tmp_path):
    world = make_world(sqlite_app)
    ingestor = Caller("service:ingest")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    git = GitRepo(tmp_path / "hostile-tree")
    git.commit_tree({"ok.md": "# ok\n", "../escape.md": "# up\n", "a/../../b.md": "# x\n"}, "evil")
    report = world.svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo)
    assert {s["path"]: s["code"] for s in report["skipped"]} == {
        "../escape.md": "unsafe_path",
        "a/../../b.md": "unsafe_path",
    }
    assert report["counts"]["new"] == 1


def test_a_path_that_is_not_utf8_is_reported_with_its_bytes_escaped(sqlite_app: App, tmp_path):
    """Git names are bytes: ``caf\\xe9.md`` was reported (and stored in the run report) as a
    lone surrogate, which the report's JSON could not encode; it is shown escaped instead."""
    world = make_world(sqlite_app)
    ingestor = Caller("service:ingest")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    git = GitRepo(tmp_path / "latin1-names")
    git.write("ok.md", "# ok\n")
    with open(os.fsencode(git.root) + b"/caf\xe9.md", "wb") as named:
        named.write(b"# Cafe\n")
    git.commit("a name in Latin-1")

    report = world.svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo)

    assert [(s["path"], s["code"]) for s in report["skipped"]] == [("caf\\xe9.md", "unsafe_path")]
    json.dumps(as_json(report), ensure_ascii=False).encode(
        "utf-8"
    )  # a lone surrogate would raise here
    # the stored totals are shown to a caller cleared for restricted (the global admin)
    stored = world.svc.ingest.ingest_status(world.admin, world.repo)["sources"][0]["last_report"]
    assert stored["skipped"] == report["skipped"]
