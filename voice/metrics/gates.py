"""Release gates: thresholds on a run's figures (``--fail-if``) and on its failed calls (``--max-failed``).

Pure: parsing, and evaluation over the summaries :func:`voice.metrics.results.summarize_run` makes.  A
figure is a key of the summary's ``figures`` row (``latency_p90_ms``, ``served_rate``, ``goal_met_rate``...)
or a dotted path into the summary as ``results.json`` holds it (``latency_ms.p99``,
``barge_in.stop_latency_p90_ms``, ``goal.time_p90_ms``, ``by_scenario.taxi.rhythm_mean``): a path is
followed in the summary's JSON form, the names a user sees in the file.  The ``goal`` block exists only
in a reactive caller's run; a gate on it is known before any call (a typo still costs nothing) and, in a
run without it, has no value: it breaks.
Between two runs (``callsim compare``) a figure is ``a.X``, ``b.X`` or ``delta.X`` (B − A).  The CLI turns
a broken gate into its exit code.
"""

from __future__ import annotations

import difflib
import operator
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from voice.errors import ConfigError
from voice.metrics.by_voice import worst_voice
from voice.metrics.goal import goal_summary
from voice.metrics.model.jsonio import JsonObject, JsonValue
from voice.metrics.model.summary import Summary
from voice.metrics.results import BREAKDOWNS, OPTIONAL_BREAKDOWNS, summarize_run

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}
_GATE = re.compile(
    r"\s*([A-Za-z_][\w.-]*)\s*(>=|<=|==|!=|>|<)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"
)
SIDES = ("a", "b", "delta")  # compare: side A, side B, B − A
GROUPED = tuple(name for _, name in (*BREAKDOWNS, *OPTIONAL_BREAKDOWNS))  # by_scenario, ..., by_persona
OPTIONAL_BLOCKS = ("goal", "worst_voice")  # blocks only some runs have: absent, their figures have no value


@dataclass(frozen=True)
class Gate:
    """``figure op threshold``: the gate breaks when this holds (or the figure has no value)."""

    figure: str
    op: str
    threshold: float

    def __str__(self) -> str:
        return f"{self.figure}{self.op}{self.threshold:g}"

    def breaks(self, value: float | None) -> bool:
        return value is None or OPERATORS[self.op](value, self.threshold)


@dataclass(frozen=True)
class Breach:
    """A gate that broke on one target (or comparison), with the value it saw."""

    where: str
    gate: Gate
    value: float | None

    def __str__(self) -> str:
        if self.value is None:
            seen = f"{self.gate.figure} has no value (no call or turn it applies to)"
        else:
            seen = f"{self.gate.figure} = {self.value:.6g}"
        return f"{self.where}: --fail-if {self.gate} broke: {seen}"


def parse_gate(text: str) -> Gate:
    """``latency_p90_ms>1500`` → a :class:`Gate`; anything else is a :class:`ConfigError`."""
    m = _GATE.fullmatch(text)
    if m is None:
        raise ConfigError(
            f"--fail-if {text!r}: expected FIGURE OP NUMBER, e.g. latency_p90_ms>1500 "
            f"(OP one of {' '.join(sorted(OPERATORS, key=len))})"
        )
    return Gate(m[1], m[2], float(m[3]))


# --- figures of a summary ------------------------------------------------------------------------------


def _leaves(d: JsonObject, prefix: str = "") -> Iterator[str]:
    for k, v in d.items():
        if k in GROUPED or k == "figures":
            continue
        if isinstance(v, Mapping):
            yield from _leaves(v, f"{prefix}{k}.")
        elif v is None or isinstance(v, int | float):
            yield f"{prefix}{k}"


def _row(summary: Summary) -> JsonObject:
    return summary.figures.to_json() if summary.figures is not None else {}


def known_figures(summary: Summary | None = None) -> list[str]:
    """Every figure a gate can name, breakdowns as patterns (``by_scenario.<group>.<figure>``)."""
    summary = summary if summary is not None else _every_block()
    flat = list(_row(summary))
    rest = [k for k in _leaves(summary.to_json()) if k not in flat]
    return flat + rest + [f"{name}.<group>.<figure>" for name in GROUPED]


def _every_block() -> Summary:
    """An empty run's summary with the blocks only some runs have: what any run's gates may name."""
    return replace(summarize_run([], []), goal=goal_summary([]), worst_voice=worst_voice({}))


def _unknown(figure: str, known: Sequence[str], extra: str = "") -> ConfigError:
    near = difflib.get_close_matches(figure, known, n=3)
    hint = f" (did you mean {' or '.join(near)}?)" if near else ""
    return ConfigError(
        f"--fail-if: unknown figure {figure!r}{hint}{extra}; known figures: {', '.join(known)}"
    )


def check_figure(figure: str) -> None:
    """Refuse, before any call is made, a figure no summary has (a typo must not cost a whole run)."""
    parts = figure.split(".")
    if parts[0] in GROUPED:
        row = _row(summarize_run([], []))
        if len(parts) == 3 and parts[2] in row:
            return
        raise ConfigError(
            f"--fail-if: {figure!r}: a breakdown's figure is {parts[0]}.<group>.<figure>, the figure one of "
            + ", ".join(row)
        )
    known = known_figures()
    if figure not in known:
        raise _unknown(figure, known)


def summary_value(summary: Summary, figure: str) -> float | None:
    """The figure's value in ``summary`` (None: it has no value); a :class:`ConfigError` if it is absent."""
    row, doc = _row(summary), summary.to_json()
    node: JsonValue
    if figure in row:
        node = row[figure]
    elif figure.split(".")[0] in OPTIONAL_BLOCKS and figure.split(".")[0] not in doc:
        check_figure(figure)  # a typo is still an error, not "no value"
        return None
    else:
        node = doc
        for i, part in enumerate(figure.split(".")):
            if not isinstance(node, Mapping) or part not in node:
                at = ".".join(figure.split(".")[:i]) or "the summary"
                have = ", ".join(node) if isinstance(node, Mapping) and i else ""
                raise _unknown(
                    figure, known_figures(summary), f": {at} has no {part!r}" + (f" ({have})" if have else "")
                )
            node = node[part]
    if node is None:
        return None
    if isinstance(node, bool) or not isinstance(node, int | float):
        raise ConfigError(f"--fail-if: {figure} is not a number: name one of its parts")
    return float(node)


def check_run(gates: Sequence[Gate], summaries: Mapping[str, Summary]) -> list[Breach]:
    """Every gate on every target's summary (target → summary): the ones that broke."""
    return [
        Breach(where, g, value)
        for where, summary in summaries.items()
        for g in gates
        if g.breaks(value := summary_value(summary, g.figure))
    ]


# --- between two runs ----------------------------------------------------------------------------------


def check_compare_figure(figure: str) -> None:
    """``a.X``, ``b.X`` or ``delta.X`` with X a figure (checked before anything is read)."""
    side, _, rest = figure.partition(".")
    if side not in SIDES or not rest:
        raise ConfigError(
            f"--fail-if {figure!r}: compare gates name a.FIGURE, b.FIGURE or delta.FIGURE (B − A), "
            "e.g. delta.latency_p50_ms>100"
        )
    check_figure(rest)


def compare_value(figure: str, a: Summary, b: Summary) -> float | None:
    """``a.X`` / ``b.X``: that side's figure; ``delta.X``: B − A (None if either has no value)."""
    check_compare_figure(figure)
    side, _, rest = figure.partition(".")
    if side != "delta":
        return summary_value(a if side == "a" else b, rest)
    va, vb = summary_value(a, rest), summary_value(b, rest)
    return None if va is None or vb is None else vb - va


def check_compare(gates: Sequence[Gate], where: str, a: Summary, b: Summary) -> list[Breach]:
    """Every gate on a comparison of two summaries: the ones that broke."""
    return [Breach(where, g, value) for g in gates if g.breaks(value := compare_value(g.figure, a, b))]


# --- failed calls ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FailedLimit:
    """``--max-failed``: at most ``count`` failed calls, or at most ``share`` (0-1) of the calls."""

    count: int | None = 0
    share: float | None = None

    def __str__(self) -> str:
        return f"{100 * self.share:g}%" if self.share is not None else str(self.count)

    def allows(self, failed: int, calls: int) -> bool:
        if self.share is not None:
            return failed <= self.share * calls + 1e-9
        return failed <= (self.count or 0)


def parse_failed_limit(text: str) -> FailedLimit:
    """``3`` (calls) or ``5%`` (of the calls); a :class:`ConfigError` otherwise."""
    t = text.strip()
    try:
        if t.endswith("%"):
            share = float(t[:-1]) / 100
            if 0 <= share <= 1:
                return FailedLimit(None, share)
        elif int(t) >= 0:
            return FailedLimit(int(t))
    except ValueError:
        pass
    raise ConfigError(f"--max-failed {text!r}: expected a number of calls (e.g. 0, 3) or a share (e.g. 5%)")


def check_failed(limit: FailedLimit, summaries: Mapping[str, Summary]) -> list[str]:
    """The targets with more failed calls than ``limit`` allows, each said in a line."""
    out = []
    for where, s in summaries.items():
        failed, calls = s.calls_failed, s.calls
        if not limit.allows(failed, calls):
            share = f" ({100 * failed / calls:.0f}%)" if calls else ""
            out.append(f"{where}: {failed} of {calls} call(s) failed{share}, more than --max-failed {limit}")
    return out


# --- the verdict -----------------------------------------------------------------------------------------


def check_options(max_failed: str | None, gates: Sequence[str], *, compare: bool = False) -> list[Gate]:
    """Parse ``--max-failed`` and ``--fail-if`` and check every figure, before any call is made or read."""
    if max_failed is not None:
        parse_failed_limit(max_failed)
    parsed = [parse_gate(g) for g in gates]
    for g in parsed:
        (check_compare_figure if compare else check_figure)(g.figure)
    return parsed


def check_simulator(summaries: Mapping[str, Summary]) -> list[str]:
    """The targets with calls CallSim failed on (left out of their figures), each said in a line: such a
    run's verdict on the assistant is incomplete, so it never passes silently."""
    out = []
    for where, s in summaries.items():
        if n := s.failures.count:
            out.append(f"{where}: CallSim failed on {n} call(s), not the assistant: redo them (see above)")
    return out


@dataclass(frozen=True)
class Verdict:
    """What broke: targets over ``--max-failed`` (one line each), ``--fail-if`` gates, and targets with
    calls CallSim itself failed on (``simulator``)."""

    gates: list[Gate]
    failed: list[str]
    broken: list[Breach]
    simulator: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.broken

    def lines(self) -> list[str]:
        """What to print: each failure and each broken gate, or the gates that held."""
        out = [f"FAILED CALLS: {line}" for line in self.failed]
        out += [f"GATE BROKEN: {b}" for b in self.broken]
        out += [f"CALLSIM FAILED: {line}" for line in self.simulator]
        if self.ok and self.gates:
            out.append(f"{len(self.gates)} gate(s) held: {', '.join(str(g) for g in self.gates)}")
        return out


def judge_run(summaries: Mapping[str, Summary], max_failed: str, gates: Sequence[str]) -> Verdict:
    """A run's verdict: every target's summary (target → summary) against the limit and the gates."""
    parsed = check_options(max_failed, gates)
    failed = check_failed(parse_failed_limit(max_failed), summaries)
    return Verdict(parsed, failed, check_run(parsed, summaries), check_simulator(summaries))


def judge_compare(names: tuple[str, str], a: Summary, b: Summary, gates: Sequence[str]) -> Verdict:
    """A comparison's verdict: the gates on ``a.X``, ``b.X`` and ``delta.X`` (B − A)."""
    parsed = check_options(None, gates, compare=True)
    return Verdict(parsed, [], check_compare(parsed, f"B − A ({names[1]} − {names[0]})", a, b))
