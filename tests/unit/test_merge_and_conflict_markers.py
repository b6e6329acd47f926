"""Three-way merge of proposal bodies, conflict markers and pin diffs (pure domain)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from domain.merge import diff_pins, three_way_merge, unified_diff
from domain.model import conflict_hunks, has_conflict_markers

BASE = "# SOP\n\nstep one\nstep two\nstep three\nstep four\nstep five\n"


def test_edits_that_do_not_overlap_merge_cleanly_and_keep_both_changes():
    current = BASE.replace("step one", "step ONE (curator)")
    proposed = BASE.replace("step five", "step FIVE (agent)")
    merged = three_way_merge(BASE, current, proposed)
    assert not merged.has_conflicts
    assert "step ONE (curator)" in merged.body
    assert "step FIVE (agent)" in merged.body
    assert not has_conflict_markers(merged.body)


def test_overlapping_edits_produce_standard_conflict_markers_with_both_sides():
    current = BASE.replace("step three", "step three, curator version")
    proposed = BASE.replace("step three", "step three, agent version")
    merged = three_way_merge(BASE, current, proposed)
    assert merged.has_conflicts
    lines = merged.body.split("\n")
    start = lines.index("<<<<<<< current head")
    middle = lines.index("=======")
    end = lines.index(">>>>>>> proposal")
    assert start < middle < end
    assert lines[start + 1 : middle] == ["step three, curator version"]
    assert lines[middle + 1 : end] == ["step three, agent version"]
    assert has_conflict_markers(merged.body)


def test_a_body_without_a_trailing_newline_merges_without_gaining_one():
    merged = three_way_merge("a\nb", "a\nb", "a\nc")
    assert merged.body == "a\nc"
    assert not merged.has_conflicts


def test_a_complete_conflict_block_is_recognised():
    assert has_conflict_markers("x\n<<<<<<< ours\ny\n=======\nz\n>>>>>>> theirs\n")
    assert has_conflict_markers("<<<<<<<\na\n=======\nb\n>>>>>>>")
    assert has_conflict_markers("<<<<<<< a\nx\n||||||| base\ny\n=======\nz\n>>>>>>> b")


def test_conflict_hunks_are_the_line_ranges_of_each_block():
    body = "x\n<<<<<<< ours\ny\n=======\nz\n>>>>>>> theirs\nok\n<<<<<<<\na\n=======\n>>>>>>>\n"
    assert conflict_hunks(body) == [(2, 6), (8, 11)]
    assert conflict_hunks("Testing SOP\n=======\n") == []
    assert conflict_hunks(">>>>>>> b\n=======\n<<<<<<< a\n") == []


def test_conflict_markers_count_only_at_the_start_of_a_line_and_in_order():
    assert not has_conflict_markers("use the `<<<<<<< ` marker inline\nok")
    assert not has_conflict_markers(">>>>>>> b\n=======\n<<<<<<< a\n")
    assert not has_conflict_markers("<<<<<<<< eight is not a marker\n=======\n>>>>>>> b")


def test_a_markdown_setext_heading_underline_is_not_a_conflict_marker():
    assert not has_conflict_markers("Testing SOP\n=======\n\nRun phase 0, then 1.\n")


lines_st = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "# h", ""]), max_size=8)
text_st = lines_st.map(lambda ls: "\n".join(ls) + "\n")


@settings(max_examples=200, deadline=None)
@given(base=text_st, current=text_st)
def test_a_proposal_that_changes_nothing_merges_to_the_current_head(base: str, current: str):
    merged = three_way_merge(base, current, base)
    assert not merged.has_conflicts
    assert merged.body == current


@settings(max_examples=200, deadline=None)
@given(base=text_st, proposed=text_st)
def test_when_the_head_did_not_move_the_merge_is_the_proposal(base: str, proposed: str):
    merged = three_way_merge(base, base, proposed)
    assert not merged.has_conflicts
    assert merged.body == proposed


@settings(max_examples=200, deadline=None)
@given(base=text_st, current=text_st, proposed=text_st)
def test_conflict_flag_and_conflict_markers_always_agree(base: str, current: str, proposed: str):
    merged = three_way_merge(base, current, proposed)
    assert merged.has_conflicts == has_conflict_markers(merged.body)


def test_unified_diff_is_empty_for_equal_bodies_and_names_both_sides_otherwise():
    assert unified_diff("same\n", "same\n", "a", "b") == ""
    diff = unified_diff("one\n", "two", "ver_1", "proposal")
    assert diff.startswith("--- ver_1\n+++ proposal\n")
    assert "-one\n" in diff
    assert "+two\n" in diff


def test_pin_diff_lists_added_changed_and_removed_elements_in_id_order():
    old = {"el_b": "v1", "el_a": "v1", "el_c": "v1"}
    new = {"el_a": "v2", "el_c": "v1", "el_d": "v1"}
    d = diff_pins(old, new)
    assert [(c.element_id, c.old_version_id, c.new_version_id) for c in d.added] == [
        ("el_d", None, "v1")
    ]
    assert [(c.element_id, c.old_version_id, c.new_version_id) for c in d.changed] == [
        ("el_a", "v1", "v2")
    ]
    assert [(c.element_id, c.old_version_id, c.new_version_id) for c in d.removed] == [
        ("el_b", "v1", None)
    ]


pins_st = st.dictionaries(
    st.sampled_from([f"el_{i}" for i in range(6)]), st.sampled_from(["v1", "v2", "v3"])
)


@given(old=pins_st, new=pins_st)
def test_applying_a_pin_diff_to_the_old_pins_gives_the_new_pins(
    old: dict[str, str], new: dict[str, str]
):
    d = diff_pins(old, new)
    result = dict(old)
    for c in d.removed:
        del result[c.element_id]
    for c in d.added + d.changed:
        assert c.new_version_id is not None
        result[c.element_id] = c.new_version_id
    assert result == new
