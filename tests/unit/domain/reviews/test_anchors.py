"""A thread follows its lines through edits of the file, and is outdated when they are gone."""

from __future__ import annotations

from kandev.domain.reviews.anchors import anchor_at, follow

FILE = [
    "def total(items):",
    "    result = 0",
    "    for item in items:",
    "        result += item.price",
    "    return result",
    "",
    "def empty():",
    "    return []",
]


def test_the_anchor_keeps_the_lines_and_their_surroundings():
    anchor = anchor_at(FILE, 4, 5)
    assert anchor.lines == ["        result += item.price", "    return result"]
    assert anchor.before == FILE[0:3] and anchor.after == FILE[5:8]
    assert anchor.text == "        result += item.price\n    return result"


def test_unchanged_lines_stay_where_they_are():
    assert follow(anchor_at(FILE, 4, 4), 4, FILE) == (4, 4)


def test_lines_inserted_above_move_the_thread_down():
    changed = ["import decimal", "", *FILE]
    assert follow(anchor_at(FILE, 4, 5), 4, changed) == (6, 7)


def test_lines_deleted_above_move_the_thread_up():
    changed = FILE[1:]
    assert follow(anchor_at(FILE, 4, 4), 4, changed) == (3, 3)


def test_an_edited_line_is_gone():
    changed = [line.replace("item.price", "item.cost") for line in FILE]
    assert follow(anchor_at(FILE, 4, 4), 4, changed) is None


def test_a_deleted_line_is_gone():
    changed = FILE[:3] + FILE[4:]
    assert follow(anchor_at(FILE, 4, 4), 4, changed) is None


def test_among_copies_the_one_with_its_old_surroundings_is_chosen():
    changed = ["def other():", "    return result", "", *FILE]
    assert follow(anchor_at(FILE, 5, 5), 5, changed) == (8, 8)


def test_a_copy_with_none_of_its_surroundings_left_is_not_guessed():
    changed = ["x = 1", "    return result", "y = 2", "z = 3", "    return result", "w = 4"]
    assert follow(anchor_at(FILE, 5, 5), 5, changed) is None


def test_a_single_remaining_copy_is_followed_even_when_its_surroundings_changed():
    changed = ["completely", "different", "        result += item.price", "code"]
    assert follow(anchor_at(FILE, 4, 4), 4, changed) == (3, 3)
