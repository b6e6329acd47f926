"""A lone surrogate never reaches the store, and one stored before that rule still reads: on
both dialects (PostgreSQL's ``json`` type keeps a ``\\ud800`` escape as SQLite does)."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from domain.errors import InvalidArgument
from tests.conftest import World


def test_every_write_path_refuses_metadata_holding_a_lone_surrogate(any_world: World) -> None:
    w = any_world
    element, version = w.canonical()
    with pytest.raises(InvalidArgument, match=r"metadata\.k is not valid Unicode"):
        w.svc.elements.create_element(
            w.curator, w.repo, title="T", body="# b", metadata={"k": "\ud800"}
        )
    with pytest.raises(InvalidArgument, match=r"metadata\.tags\[0\] is not valid Unicode"):
        w.svc.curation.propose(
            w.agent, w.repo, summary="s", body="# b2", element_id=element,
            target_version_id=version, metadata={"tags": ["\udfff"]},
        )  # fmt: skip
    assert w.svc.elements.get_element(w.reader, element)["version"]["version_id"] == version


def test_a_lone_surrogate_stored_before_the_rule_reads_back_as_u_fffd(any_world: World) -> None:
    w = any_world
    element, version = w.canonical()
    with w.app.engine.begin() as conn:
        conn.execute(
            sa.text("UPDATE element_versions SET metadata = :m WHERE version_id = :v"),
            {"m": '{"k": "a\\ud800b", "pair": "\\ud83d\\ude00"}', "v": version},
        )
    shown = w.svc.elements.get_element(w.reader, element)
    assert shown["version"]["metadata"] == {"k": "a\ufffdb", "pair": "\U0001f600"}
    w.svc.elements.element_history(w.reader, element)
