"""What a SIP call's dialog reports (:mod:`voice.lines.sip_dialog`), and the outcomes the phone network's
refusals become in results.json.

A refusal is the far end's answer (the bot, its PBX or its carrier), so each is charged to the bot: busy
(486, 600), declined (603), not found (404, 410, 604), no answer (408, 480, or ringing past the answer
timeout), auth refused (a second 401/407, or one with no credentials configured), and any other final
status as ``call_rejected`` with the status in the call's detail.
"""

from __future__ import annotations

from dataclasses import dataclass

# A refusal's status → the outcome results.json names (charged to the far end: the bot or its network).
OUTCOMES = {486: "busy", 600: "busy", 603: "declined", 404: "not_found", 604: "not_found", 410: "not_found",
            408: "no_answer", 480: "no_answer", 487: "no_answer"}  # fmt: skip
AUTH_REFUSED = "auth_refused"
CALL_REJECTED = "call_rejected"  # any other final answer but 2xx


@dataclass(frozen=True)
class Ringing:
    status: int
    reason: str


@dataclass(frozen=True)
class EarlyMedia:
    sdp: str


@dataclass(frozen=True)
class Answered:
    sdp: str  # the 2xx's SDP (the early one if the 2xx repeats none)


@dataclass(frozen=True)
class Refused:
    status: int
    reason: str
    outcome: str


@dataclass(frozen=True)
class RemoteBye:
    reason: str


@dataclass(frozen=True)
class MediaChanged:
    sdp: str  # the far end's new offer, already answered


@dataclass(frozen=True)
class Ended:
    """Our BYE or CANCEL was answered (or its time ran out): nothing more will be sent."""

    why: str


DialogEvent = Ringing | EarlyMedia | Answered | Refused | RemoteBye | MediaChanged | Ended
