"""A run's provenance as the report and ``callsim compare`` show it, and whether two machines were alike.

Latency is the machine's as much as the assistant's: the built-in assistant runs Whisper and TTS on the
caller's CPUs, so a run on a machine 30 % slower shows a slower assistant with nothing changed.  Each run
records a speed index (:mod:`voice.app.run.speed_index`); ``compare`` warns when two runs' indices differ
by more than :data:`SPEED_TOLERANCE`, and says so when a side has none, so that a difference it finds is
not taken for the assistant's without a look at the machines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from voice.app.run.speed_index import ratio

SPEED_TOLERANCE = 0.20  # more than this apart: the two machines were not alike enough to compare latency
NO_INDEX = "no speed index (--no-speed-index, CALLSIM_SPEED_INDEX=off, or a run made before CallSim had one)"


def speed_seconds(prov: Mapping[str, Any] | None) -> float | None:
    """A run's speed index in seconds, or None if it has none."""
    index = (prov or {}).get("speed_index") or {}
    seconds = index.get("seconds")
    return float(seconds) if isinstance(seconds, int | float) else None


def compare_speed(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> dict[str, Any]:
    """The two sides' speed indices and CPUs, how far apart the indices are, and a warning when more than
    :data:`SPEED_TOLERANCE` or when a side has none (``warning`` None when they are alike, and for two
    targets of one run: one provenance, one machine at one time)."""
    sa, sb = speed_seconds(a), speed_seconds(b)
    cpus = [((p or {}).get("machine") or {}).get("cpu_model") for p in (a, b)]
    out: dict[str, Any] = {"a": sa, "b": sb, "apart": None, "cpu_model": cpus, "warning": None}
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


def provenance_rows(prov: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """The report's settings rows on where the run was made: CallSim, the command, the date, the machine,
    its speed index and the key packages (one row saying there is none for an older run)."""
    if not prov:
        return [("provenance", "not recorded (a run made before CallSim recorded it)")]
    cs, m = prov.get("callsim") or {}, prov.get("machine") or {}
    commit = str(cs.get("commit") or "")[:12] or "not a git checkout"
    index = prov.get("speed_index")
    speed = NO_INDEX
    if index:
        parts = ", ".join(f"{k} {v:.2f} s" for k, v in (index.get("components") or {}).items())
        speed = f"{index['seconds']:.2f} s ({parts}; {index.get('definition', '')})"
    flags = " ".join(m.get("cpu_flags") or []) or "-"
    packages = ", ".join(f"{k} {v}" for k, v in (prov.get("packages") or {}).items() if v)
    return [
        (
            "CallSim",
            f"{cs.get('version') or '?'}, commit {commit}"
            + (" (uncommitted changes)" * bool(cs.get("dirty"))),
        ),
        ("command", " ".join(str(x) for x in prov.get("command") or []) or "-"),
        ("started (UTC)", str(prov.get("date_utc") or "-")),
        ("machine", f"{m.get('cpu_model') or '?'}, {m.get('cpus_usable')} of {m.get('cpus')} CPUs; {flags}"),
        ("speed index", speed),
        ("packages", packages or "-"),
    ]
