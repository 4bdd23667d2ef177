"""The assistant's failed calls, first in the console summary and the report, each kind with what to do.

A first run often fails every call for one reason: the bot is not listening yet, it does not answer audio,
it closes the socket without a hangup message.  A table cell saying ``connect_failed (FAILED)`` says what
happened but not what to do, so the failed calls are grouped by outcome, each group with what the outcome
means, one call's own words (its ``detail``) and the fix (:data:`FIXES`).  CallSim's own failures have a
banner of their own (:mod:`voice.metrics.simulator`): they are not the assistant's.

Read from the calls of ``results.json``, so the console and the report say the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

from voice.metrics.call_metrics import CallMetrics
from voice.metrics.simulator import SIMULATOR_OUTCOMES, ids_text

# Outcome → (what it means, what to do).  The outcomes are the call core's (docs/results.md, ``outcome``)
# and those of a call that failed outside it (:mod:`voice.app.run.failures`).
FIXES: dict[str, tuple[str, str]] = {
    "connect_failed": (
        "the assistant was not listening (the connection was refused or timed out)",
        "start it and check the --target URL, or pass --wait-for-target 60 if it takes a while to start",
    ),
    "assistant_silent": (
        "the assistant stopped answering: several replies in a row never came",
        "check that it hears the caller's audio (16 kHz 16-bit mono PCM, docs/protocol.md) and starts each "
        "reply within 8 s; its own log says more",
    ),
    "assistant_error": (
        "the assistant sent an error message",
        "read its message (below) and the assistant's own log",
    ),
    "protocol_error": (
        "the assistant broke the line protocol",
        "compare what it sends with docs/protocol.md; the message below names what was wrong",
    ),
    "line_closed": (
        "the assistant closed the connection mid-call, without a hangup message",
        "send a hangup message before closing (docs/protocol.md), or look in its log for a crash",
    ),
    "call_timeout": (
        "the call ran past CallSim's time cap",
        "make the assistant's replies end (and hang up when the call is done): one that never ends keeps "
        "the call going",
    ),
    "no_media": (
        "the call was answered but no audio (RTP) ever came from the far end",
        "check that the bot (or its PBX) sends RTP to the address and port of CallSim's SDP offer; "
        "a NAT or a firewall between them drops it (docs/sip.md)",
    ),
    "busy": (
        "the far end answered busy (SIP 486 or 600)",
        "free a line on the bot's side, or lower --concurrency",
    ),
    "declined": ("the far end declined the call (SIP 603)", "check the bot's or PBX's call routing rules"),
    "not_found": (
        "the far end does not know the number or user called (SIP 404, 410 or 604)",
        "check the user part of the sip: target against the PBX's extensions or the trunk's numbers",
    ),
    "no_answer": (
        "nobody answered: ringing past the answer timeout, or SIP 408/480",
        "check that the bot is registered and set to answer (docs/sip.md)",
    ),
    "auth_refused": (
        "the far end asked for credentials and refused CallSim's (or none were configured)",
        "set CALLSIM_SIP_USER and CALLSIM_SIP_PASSWORD in the environment (docs/sip.md)",
    ),
    "call_rejected": (
        "the far end refused the call with another SIP status (in the detail below)",
        "look the status up in RFC 3261 §21 and the PBX's log",
    ),
    "call_error": (
        "CallSim hit an error in one of the call's steps (named below)",
        "rerun with --retry-failed; if it happens again, report it with the message below",
    ),
}
Targets: TypeAlias = Sequence[tuple[str, Sequence[CallMetrics]]]  # (target, its calls)
UNKNOWN = ("the call failed", "see how it ended in the report's call table, and the call's event log")


@dataclass(frozen=True)
class FailedGroup:
    """The failed calls of one outcome: which (``call (target)`` with several targets), one call's own
    words, what it means and what to do."""

    outcome: str
    calls: list[str]
    example: str
    meaning: str
    fix: str

    def line(self) -> str:
        return f"{self.outcome}: {len(self.calls)} call(s), {self.meaning}: {ids_text(self.calls)}"


def failed_groups(targets: Targets) -> list[FailedGroup]:
    """The assistant's failed calls of every target (``(target, calls)``), grouped by outcome in the order
    first seen; CallSim's own failures are left out (their banner says them)."""
    many = len(targets) > 1
    grouped: dict[str, list[tuple[str, CallMetrics]]] = {}
    for target, calls in targets:
        for c in calls:
            if c.failed and c.outcome not in SIMULATOR_OUTCOMES:
                grouped.setdefault(c.outcome, []).append((target, c))
    out = []
    for outcome, found in grouped.items():
        meaning, fix = FIXES.get(outcome, UNKNOWN)
        ids = [f"{c.call_id} ({t})" if many else c.call_id for t, c in found]
        example = next((c.detail for _, c in found if c.detail), "")
        out.append(FailedGroup(outcome, ids, example, meaning, fix))
    return out


def failed_head(targets: Targets, groups: Sequence[FailedGroup]) -> str:
    """The head line: how many of the calls the assistant is judged on failed."""
    judged = sum(1 for _, calls in targets for c in calls if c.outcome not in SIMULATOR_OUTCOMES)
    n = sum(len(g.calls) for g in groups)
    return f"FAILED CALLS: {n} of {judged} call(s) failed (each kind below, with what to do)"


def failed_lines(targets: Targets) -> list[str]:
    """The section as text lines (the console's): the head, then per outcome its calls, one call's words
    (``e.g.``) and the fix (``what to do``); [] when no call failed."""
    groups = failed_groups(targets)
    if not groups:
        return []
    lines = [failed_head(targets, groups)]
    for g in groups:
        lines.append(f"  {g.line()}")
        if g.example:
            lines.append(f"    e.g. {g.example}")
        lines.append(f"    what to do: {g.fix}")
    return lines
