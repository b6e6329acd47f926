"""``projection.lru.Lru``: the one least-recently-used store of the read side and tantivy."""

from __future__ import annotations

from projection.lru import Lru


def test_entries_beyond_the_size_go_least_recently_used_first() -> None:
    kept = Lru(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.peek("a") == 1  # "a" is now the most recent
    kept.put("c", 3)
    assert (kept.peek("a"), kept.peek("b"), kept.peek("c")) == (1, None, 3)


def test_sizes_count_and_the_newest_entry_stays_even_when_larger_than_all() -> None:
    kept = Lru(10)
    kept.put("small", "s", size=4)
    kept.put("other", "o", size=4)
    kept.put("small", "s2", size=5)  # replacing counts the new size only
    assert kept.peek("other") == "o"
    kept.put("huge", "h", size=50)
    assert (kept.peek("small"), kept.peek("other"), kept.peek("huge")) == (None, None, "h")


def test_get_makes_a_missing_value_once() -> None:
    kept, made = Lru(4), []
    for _ in range(3):
        assert kept.get("k", lambda: made.append(1) or "v") == "v"
    assert made == [1]
