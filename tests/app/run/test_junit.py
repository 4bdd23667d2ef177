"""--junit: a run as JUnit XML (a test case per call and per gate), and the hint for a bot not listening."""

import dataclasses
import xml.etree.ElementTree as ET
from types import SimpleNamespace

from voice.app.run.junit import ci_outputs, junit_xml, never_connected, write_junit
from voice.metrics.model.summary import FigureRow
from voice.metrics.results import summarize_run


def call(call_id, outcome="completed", failed=False, detail="", ms=1500.0):
    return SimpleNamespace(call_id=call_id, outcome=outcome, failed=failed, detail=detail, duration_ms=ms)


def target(name, calls, failed=0, p90=900.0):
    row = FigureRow(len(calls), failed, 0, {"latency_p90_ms": p90})
    summary = dataclasses.replace(summarize_run([], []), calls=len(calls), calls_failed=failed, figures=row)
    return SimpleNamespace(target=name, calls=calls, summary=summary)


def test_every_call_and_gate_is_a_test_case_with_its_reason(tmp_path):
    results = [
        target(
            "ws://bot/pcm",
            [
                call("a"),
                call("b", "line_closed", True, 'the assistant hung up <early> & "rudely"'),
                call("c", "caller_speech_failed", True, "silence for '嗯'"),
            ],
            failed=1,
            p90=1800.0,
        )
    ]
    path = tmp_path / "ci" / "junit.xml"
    write_junit(path, results, "0", ["latency_p90_ms>1500", "latency_p90_ms>2000"])
    root = ET.parse(path).getroot()  # parses back: escaped, whole
    assert root.tag == "testsuites" and root.get("tests") == "6"
    assert (root.get("failures"), root.get("errors")) == ("3", "1")
    [suite] = root.findall("testsuite")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == [
        "a",
        "b",
        "c",
        "--max-failed 0",
        "--fail-if latency_p90_ms>1500",
        "--fail-if latency_p90_ms>2000",
    ]
    assert cases["a"].find("failure") is None and cases["a"].get("time") == "1.500"
    failure = cases["b"].find("failure")
    assert failure is not None and failure.get("type") == "line_closed"
    assert failure.get("message") == 'line_closed: the assistant hung up <early> & "rudely"'
    error = cases["c"].find("error")  # CallSim's own failure: not the assistant's
    assert error is not None and error.get("message") == "caller_speech_failed: silence for '嗯'"
    assert "more than --max-failed 0" in cases["--max-failed 0"].find("failure").get("message")
    broke = cases["--fail-if latency_p90_ms>1500"].find("failure")
    assert broke is not None and "latency_p90_ms = 1800" in broke.get("message")
    held = cases["--fail-if latency_p90_ms>2000"]
    assert held.find("failure") is None and held.find("system-out").text == "latency_p90_ms = 1800.0"
    assert cases["--max-failed 0"].get("classname") == "ws://bot/pcm gates"
    assert not list(path.parent.glob("*.tmp*"))


def test_one_suite_per_target():
    xml = junit_xml([target("builtin", [call("a")]), target("ws://b/pcm", [call("a")])], "5%", [])
    suites = ET.fromstring(xml).findall("testsuite")
    assert [s.get("name") for s in suites] == ["builtin", "ws://b/pcm"]
    assert [s.get("tests") for s in suites] == ["2", "2"] and suites[0][1].get("name") == "--max-failed 5%"


def test_a_target_that_never_connected_gets_the_wait_for_target_hint(tmp_path, capsys):
    dead = target("ws://dead/pcm", [call("a", "connect_failed", True), call("b", "connect_failed", True)], 2)
    alive = target("ws://bot/pcm", [call("a", "connect_failed", True), call("b")], 1)
    assert never_connected([dead, alive]) == ["ws://dead/pcm"]
    args = SimpleNamespace(junit=str(tmp_path / "j.xml"), max_failed="0", fail_if=None, wait_for_target=None)
    ci_outputs([dead, alive], args)
    out, err = capsys.readouterr()
    assert out == f"junit: {tmp_path / 'j.xml'}\n"
    assert "no call reached ws://dead/pcm: is it listening yet?  --wait-for-target 60" in err
    ci_outputs([alive], SimpleNamespace(junit=None, max_failed="0", fail_if=None, wait_for_target=None))
    ci_outputs([dead], SimpleNamespace(junit=None, max_failed="0", fail_if=None, wait_for_target=5.0))
    assert capsys.readouterr() == ("", "")  # it waited already: the hint would be wrong
