"""``callsim data validate`` over several files: each checked, the exit code the worst; ``stats`` pools."""

import json

from tests.records import good
from voice.app.cli import main
from voice.speech.data_cli import EXIT_OK, EXIT_PROBLEMS, EXIT_UNREAD


def write(path, *objects):
    path.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objects), encoding="utf-8")
    return str(path)


def test_every_file_is_checked_and_the_exit_code_is_the_worst(tmp_path, capsys):
    ok = write(tmp_path / "ok.jsonl", good("a"))
    typo = good("b")
    typo["scenrio"] = typo.pop("scenario")
    bad = write(tmp_path / "bad.jsonl", typo)
    assert main(["data", "validate", ok, write(tmp_path / "ok2.jsonl", good("c"))]) == EXIT_OK
    assert capsys.readouterr().out.splitlines() == [f"{ok}: OK", f"{tmp_path / 'ok2.jsonl'}: OK"]
    assert main(["data", "validate", bad, ok]) == EXIT_PROBLEMS
    out, err = capsys.readouterr()
    assert f"{bad}:1: scenrio: unknown key, did you mean 'scenario'?" in out and f"{ok}: OK" in out
    assert f"{bad}: 2 problem(s)" in err  # the misspelled key, and scenario missing
    missing = str(tmp_path / "nope.jsonl")
    assert main(["data", "validate", missing, bad, ok]) == EXIT_UNREAD  # the worst: a file not read
    out, err = capsys.readouterr()
    assert f"callsim: error: {missing}: cannot read: No such file" in err  # no line number: the file's
    assert f"{bad}:1: scenrio" in out and f"{ok}: OK" in out  # the others are still checked


def test_stats_pool_the_dialogues_of_every_file(tmp_path, capsys):
    a, b = write(tmp_path / "a.jsonl", good("a")), write(tmp_path / "b.jsonl", good("b"), good("c"))
    for paths, dialogues in (([a], 1), ([a, b], 3)):
        assert main(["data", "stats", *paths]) == EXIT_OK
        caller_turns = next(x for x in capsys.readouterr().out.splitlines() if "caller turns" in x)
        assert caller_turns.split() == ["caller", "turns", str(4 * dialogues)]  # each of good() has 4


def test_annotations_go_with_one_dialogue_file(tmp_path, capsys):
    from voice.app.cli import main

    for name in ("a.jsonl", "b.jsonl", "ann.jsonl"):
        (tmp_path / name).write_text("", encoding="utf-8")
    argv = ["data", "validate", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]
    assert main([*argv, "--annotations", str(tmp_path / "ann.jsonl")]) == 2
    assert "--annotations goes with one dialogue file" in capsys.readouterr().err
