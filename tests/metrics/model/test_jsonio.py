"""The JSON border: typed reads that name what is wrong, values of other types as JSON, the bytes written."""

from typing import TypedDict

import pytest

from voice.errors import RecordingError
from voice.metrics.model.jsonio import (
    RESULTS_SCHEMA,
    Fields,
    as_json,
    as_json_object,
    check_schema,
    json_bytes,
    read_json,
    write_json,
)


class Line(TypedDict):
    protocol: str
    seed: int


def test_fields_read_each_type_as_written_and_name_what_is_wrong():
    f = Fields(
        {"n": 3, "x": 2, "ms": 1.5, "s": "a", "b": False, "o": {"k": 1}, "l": ["a"], "none": None}, "doc"
    )
    assert (f.integer("n"), f.number("x"), f.number("ms"), f.text("s"), f.flag("b")) == (
        3,
        2,
        1.5,
        "a",
        False,
    )
    assert isinstance(f.number("x"), int)  # never converted: written again, it is the same file
    assert f.obj("o").integers() == {"k": 1} and f.texts("l") == ["a"] and f.values("none") == []
    assert f.opt_number("none") is None and f.opt_obj("none") is None and f.obj("absent").doc == {}
    assert f.integer("absent", 7) == 7 and "n" in f and "absent" not in f
    with pytest.raises(ValueError, match=r"doc\.s is not a whole number"):
        f.integer("s")
    with pytest.raises(ValueError, match=r"doc\.b is not a number"):
        f.number("b")  # a bool is not a number
    with pytest.raises(ValueError, match=r"doc\.absent is missing"):
        f.text("absent")
    with pytest.raises(ValueError, match="is a JSON list, not an object"):
        Fields([1], "doc")


def test_values_typed_elsewhere_are_written_as_the_json_they_are():
    line: Line = {"protocol": "pcm", "seed": 1}
    assert as_json_object(line) == {"protocol": "pcm", "seed": 1}
    assert as_json(("a", (1, 2.5), None, True)) == ["a", [1, 2.5], None, True]
    assert as_json({1: object}) == {"1": str(object)}  # as json.dumps(default=str) writes it


def test_files_are_written_pretty_in_utf8_and_read_back(tmp_path):
    assert json_bytes({"a": "快递", "b": [1]}) == '{\n  "a": "快递",\n  "b": [\n    1\n  ]\n}\n'.encode()
    write_json(tmp_path / "x.json", {"a": 1})
    assert read_json(tmp_path / "x.json") == {"a": 1}
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(RecordingError, match="unreadable"):
        read_json(tmp_path / "bad.json")
    with pytest.raises(RecordingError, match="missing"):
        read_json(tmp_path / "none.json")


def test_a_newer_schema_is_refused_and_a_file_without_one_is_version_1():
    check_schema({}, RESULTS_SCHEMA, "f")
    with pytest.raises(RecordingError, match="upgrade CallSim"):
        check_schema({"schema_version": "callsim.results/2"}, RESULTS_SCHEMA, "f")
