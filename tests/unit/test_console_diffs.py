"""The console reads the conflict blocks a three-way merge leaves in a body (issue 30 §4) with
the service's markers: each complete block, its two sides paired line by line."""

from __future__ import annotations

from console.diffs import SideRow, conflict_hunks
from domain.merge import three_way_merge
from domain.model import has_conflict_markers


def test_the_blocks_of_a_three_way_merge_are_read_with_the_bodys_line_numbers() -> None:
    base = "a\nb\nc\nd\ne\n"
    merged = three_way_merge(base, "a\nB1\nc\nd\nE1\n", "a\nB2\nB3\nc\nd\nE2\n")
    assert merged.has_conflicts
    hunks = conflict_hunks(merged.body)
    assert [(h.first, h.last, h.left_label, h.right_label) for h in hunks] == [
        (2, 7, "current head", "proposal"),
        (10, 14, "current head", "proposal"),
    ]
    assert hunks[0].rows == [
        SideRow("replace", 3, "B1", 5, "B2"),
        SideRow("insert", None, "", 6, "B3"),
    ]
    assert hunks[1].rows == [SideRow("replace", 11, "E1", 13, "E2")]


def test_a_diff3_base_section_is_left_out_and_an_unfinished_block_is_no_block() -> None:
    body = "<<<<<<< ours\nx\n||||||| base\nold\n=======\ny\nz\n>>>>>>> theirs\n<<<<<<< open\nq\n"
    (hunk,) = conflict_hunks(body)
    assert (hunk.left_label, hunk.right_label) == ("ours", "theirs")
    assert hunk.rows == [SideRow("replace", 2, "x", 6, "y"), SideRow("insert", None, "", 7, "z")]


def test_a_heading_underline_is_no_conflict_and_a_new_start_restarts_the_block() -> None:
    assert conflict_hunks("Title\n=======\n\ntext\n>>>>>>> quoted\n") == []
    body = "<<<<<<<\nlost\n<<<<<<<\nl\n=======\nr\n>>>>>>>\n"
    (hunk,) = conflict_hunks(body)
    assert has_conflict_markers(body)
    assert (hunk.first, hunk.left_label, hunk.right_label) == (3, "current head", "proposal")
    assert hunk.rows == [SideRow("replace", 4, "l", 6, "r")]
