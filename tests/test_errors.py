"""The exception tree drawn in voice.errors' docstring is the class tree, and the only one."""

import inspect
import re

from voice import errors

TREE_LINE = re.compile(r"    [│├└─ ]*(?P<name>[A-Z]\w+)")  # the tree is the only indented text


def drawn_tree() -> dict[str, str | None]:
    """Each class drawn in the docstring → the class it hangs under (None for the root)."""
    parents: dict[str, str | None] = {}
    path: list[str] = []
    for line in (errors.__doc__ or "").splitlines():
        if m := TREE_LINE.match(line):
            depth = (m.start("name") - 4) // 4
            path[depth:] = [m["name"]]
            parents[m["name"]] = path[depth - 1] if depth else None
    return parents


def test_the_docstring_tree_is_the_class_tree():
    drawn = drawn_tree()
    classes = {n: c for n, c in vars(errors).items() if inspect.isclass(c) and issubclass(c, Exception)}
    assert drawn and set(drawn) == set(classes)
    for name, parent in drawn.items():
        assert classes[name].__bases__ == ((classes[parent],) if parent else (Exception,)), name


def test_a_dialogue_error_lists_every_problem_located():
    err = errors.DialogueError(
        [
            errors.DialogueProblem("d.jsonl", 3, "turns[1].text", "empty"),
            errors.DialogueProblem("d.jsonl", 4, "id", "missing"),
        ]
    )
    assert str(err) == "d.jsonl:3: turns[1].text: empty\nd.jsonl:4: id: missing"
    assert len(err.problems) == 2 and isinstance(err, errors.CallSimError)
    assert str(errors.DialogueError([])) == "invalid dialogue data"


def test_a_problem_of_a_whole_file_or_of_no_line_has_no_line_number():
    assert str(errors.DialogueProblem("d.jsonl", 0, errors.FILE, "no dialogues")) == "d.jsonl: no dialogues"
    assert str(errors.DialogueProblem("<memory>", 0, "id", "missing")) == "<memory>: id: missing"  # in code


def test_an_explained_exception_is_never_empty():
    def caused(outer, cause):
        try:
            raise outer from cause
        except Exception as exc:
            return exc

    assert errors.explain(TimeoutError()) == "timed out"
    assert errors.explain(ConnectionResetError()) == "ConnectionResetError"
    assert errors.explain(caused(errors.LineError("cannot connect to u: "), TimeoutError())) == (
        "cannot connect to u: timed out"
    )
    assert errors.explain(caused(errors.LineError("full message"), OSError("x"))) == "full message"
