"""A run's provenance as the report and ``callsim compare`` show it, and whether two machines were alike.

Latency is the machine's as much as the assistant's: the built-in assistant runs Whisper and TTS on the
caller's CPUs, so a run on a machine 30 % slower shows a slower assistant with nothing changed.  Each run
records a speed index (:mod:`voice.app.run.speed_index`); ``compare`` warns when two runs' indices differ
by more than :data:`SPEED_TOLERANCE`, and says so when a side has none, so that a difference it finds is
not taken for the assistant's without a look at the machines.
"""

from __future__ import annotations

from typing import TypedDict

from voice.app.run.speed_index import ratio
from voice.metrics.model.provenance_record import Provenance

SPEED_TOLERANCE = 0.20  # more than this apart: the two machines were not alike enough to compare latency
NO_INDEX = "no speed index (--no-speed-index, CALLSIM_SPEED_INDEX=off, or a run made before CallSim had one)"


class SpeedComparison(TypedDict):
    """``speed_index`` of the comparison ``callsim compare`` writes: each side's index in seconds, how far
    apart they are (a share of the faster), each side's CPU, and the warning (None: alike)."""

    a: float | None
    b: float | None
    apart: float | None
    cpu_model: list[str | None]
    warning: str | None


def speed_seconds(prov: Provenance | None) -> float | None:
    """A run's speed index in seconds, or None if it has none."""
    index = prov.speed_index if prov else None
    return None if index is None else float(index.seconds)


def compare_speed(a: Provenance | None, b: Provenance | None) -> SpeedComparison:
    """The two sides' speed indices and CPUs, how far apart the indices are, and a warning when more than
    :data:`SPEED_TOLERANCE` or when a side has none (``warning`` None when they are alike, and for two
    targets of one run: one provenance, one machine at one time)."""
    sa, sb = speed_seconds(a), speed_seconds(b)
    cpus = [p.machine.cpu_model if p else None for p in (a, b)]
    out: SpeedComparison = {"a": sa, "b": sb, "apart": None, "cpu_model": cpus, "warning": None}
    if a is not None and a == b:
        out["apart"] = 0.0 if sa is not None else None
        return out
    if sa is None or sb is None:
        missing = " and ".join(side for side, s in (("A", sa), ("B", sb)) if s is None)
        out["warning"] = (
            f"{missing} {'has' if ' and ' not in missing else 'have'} {NO_INDEX}: "
            "whether the two machines were about as fast cannot be told"
        )
        return out
    apart = ratio(sa, sb)
    out["apart"] = round(apart, 4)
    if apart > SPEED_TOLERANCE:
        slower = "B" if sb > sa else "A"
        out["warning"] = (
            f"the machines' speed indices differ by {100 * apart:.0f} % (A {sa:.2f} s, B {sb:.2f} s; "
            f"over {100 * SPEED_TOLERANCE:.0f} %): {slower}'s machine was slower, so latency differences may "
            "be the machine's rather than the assistant's"
        )
    return out


def provenance_rows(prov: Provenance | None) -> list[tuple[str, str]]:
    """The report's settings rows on where the run was made: CallSim, the command, the date, the machine,
    its speed index and the key packages (one row saying there is none for an older run)."""
    if prov is None:
        return [("provenance", "not recorded (a run made before CallSim recorded it)")]
    cs, m, index = prov.callsim, prov.machine, prov.speed_index
    commit = (cs.commit or "")[:12] or "not a git checkout"
    speed = NO_INDEX
    if index is not None:
        parts = ", ".join(f"{k} {v:.2f} s" for k, v in index.components.items())
        speed = f"{index.seconds:.2f} s ({parts}; {index.definition})"
    flags = " ".join(m.cpu_flags) or "-"
    packages = ", ".join(f"{k} {v}" for k, v in prov.packages.items() if v)
    return [
        ("CallSim", f"{cs.version or '?'}, commit {commit}" + (" (uncommitted changes)" * bool(cs.dirty))),
        ("command", " ".join(prov.command) or "-"),
        ("started (UTC)", prov.date_utc or "-"),
        ("machine", f"{m.cpu_model or '?'}, {m.cpus_usable} of {m.cpus} CPUs; {flags}"),
        ("speed index", speed),
        ("packages", packages or "-"),
    ]
