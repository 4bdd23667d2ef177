"""``--junit FILE``: a run as JUnit XML, the one test-report format every CI reads (GitHub, GitLab, Jenkins).

One ``<testsuite>`` per target; in it a test case per call (an assistant's failed call is a ``<failure>``
with its outcome and detail, a call CallSim itself failed on an ``<error>``: the assistant was never judged
on it) and one per gate (``--max-failed``, each ``--fail-if``), so a CI's test tab shows which calls and
which thresholds broke without anyone opening the log.  Written atomically: a CI never uploads half a file.

Also the hint for the commonest first-run failure: every call of a target failed to connect (the bot was
not listening yet), where ``--wait-for-target`` is the fix.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from voice.app.run.failures import CONNECT_FAILED
from voice.files import atomic_write_bytes
from voice.metrics.gates import check_failed, check_run, parse_failed_limit, parse_gate, summary_value
from voice.metrics.simulator import is_simulator_failure

if TYPE_CHECKING:
    from voice.app.run.dataset import TargetResult


def junit_xml(results: Sequence[TargetResult], max_failed: str, gates: Sequence[str]) -> bytes:
    """The JUnit XML document of a run's targets, judged as ``callsim bench`` judges them."""
    limit, parsed = parse_failed_limit(max_failed), [parse_gate(g) for g in gates]
    root = ET.Element("testsuites", name="callsim")
    for r in results:
        suite = ET.SubElement(root, "testsuite", name=r.target)
        for call in r.calls:
            case = _case(suite, r.target, call.call_id, call.duration_ms / 1000)
            if is_simulator_failure(call) or call.failed:
                kind = "error" if is_simulator_failure(call) else "failure"
                said = f"{call.outcome}: {call.detail}" if call.detail else call.outcome
                ET.SubElement(case, kind, type=call.outcome, message=said).text = said
        gate_class = f"{r.target} gates"
        case = _case(suite, gate_class, f"--max-failed {limit}", 0.0)
        for line in check_failed(limit, {r.target: r.summary}):
            ET.SubElement(case, "failure", type="max-failed", message=line).text = line
        for gate in parsed:
            case = _case(suite, gate_class, f"--fail-if {gate}", 0.0)
            for breach in check_run([gate], {r.target: r.summary}):
                ET.SubElement(case, "failure", type="fail-if", message=str(breach)).text = str(breach)
            seen = summary_value(r.summary, gate.figure)
            ET.SubElement(case, "system-out").text = f"{gate.figure} = {seen}"
        _count(suite)
    _count(root)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(path: Path, results: Sequence[TargetResult], max_failed: str, gates: Sequence[str]) -> None:
    """Write :func:`junit_xml` to ``path`` atomically (its folder is made if missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, junit_xml(results, max_failed, gates))


def never_connected(results: Sequence[TargetResult]) -> list[str]:
    """The targets whose every call failed to connect: nothing listened, rather than a bad assistant."""
    return [r.target for r in results if r.calls and all(c.outcome == CONNECT_FAILED for c in r.calls)]


def ci_outputs(results: Sequence[TargetResult], args: Any) -> None:
    """After a run: the ``--junit`` file, and the hint for a target that never accepted a connection."""
    if getattr(args, "junit", None):
        write_junit(Path(args.junit), results, args.max_failed, args.fail_if or [])
        print(f"junit: {args.junit}")
    silent = never_connected(results)
    if silent and args.wait_for_target is None:
        print(
            f"callsim: hint: no call reached {', '.join(silent)}: is it listening yet?  --wait-for-target 60"
            " waits up to a minute for it to accept a connection before the first call",
            file=sys.stderr,
        )


def _case(suite: ET.Element, classname: str, name: str, seconds: float) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{seconds:.3f}")


def _count(element: ET.Element) -> None:
    """The totals JUnit readers show (tests, failures, errors, time) on a suite or on the whole."""
    cases = list(element.iter("testcase"))
    element.set("tests", str(len(cases)))
    element.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    element.set("errors", str(sum(c.find("error") is not None for c in cases)))
    element.set("time", f"{sum(float(c.get('time', 0)) for c in cases):.3f}")
