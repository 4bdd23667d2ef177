"""WebRTC signalling as pipecat's development runner takes it: an SDP offer by HTTP POST, ICE by PATCH.

pipecat's runner (``pipecat.runner.run``, SmallWebRTC) answers ``POST /api/offer`` with a JSON body
``{sdp, type, pc_id, request_data}`` by ``{sdp, type, pc_id}``, and takes trickled ICE candidates by
``PATCH /api/offer`` with ``{pc_id, candidates: [{candidate, sdp_mid, sdp_mline_index}]}``, as pipecat's
JavaScript client sends them.  CallSim does the same: the offer goes without its candidates (so the bot's
trickle route is what carries them, as from a browser), and they follow by PATCH once the answer names the
``pc_id``.

The pure part (splitting an SDP's candidates out, checking an answer has audio, reading the answer's JSON)
is separate from the HTTP exchange, and everything the bot gets wrong is a :class:`~voice.errors.LineError`
whose message says what, with the URL's credentials redacted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

import aiohttp

from voice.core.event_json import JsonObject
from voice.errors import LineError
from voice.lines.redact import redact_text

MAX_ANSWER_BYTES = 256 * 1024  # an SDP answer is a few KiB; more is not an answer
_SHOWN = 200


class CandidateJson(TypedDict):
    """One candidate in the PATCH body."""

    candidate: str
    sdp_mid: str
    sdp_mline_index: int


class OfferBody(TypedDict):
    """The POST body: the SDP offer, and the ``request_data`` pipecat's runner hands the bot."""

    sdp: str
    type: str
    pc_id: None
    restart_pc: bool
    request_data: JsonObject


class TrickleBody(TypedDict):
    """The PATCH body: the candidates the offer left out, for the connection the answer named."""

    pc_id: str
    candidates: list[CandidateJson]


@dataclass(frozen=True)
class Candidate:
    """One ICE candidate as the PATCH body carries it (``candidate`` without its ``a=`` prefix)."""

    candidate: str
    sdp_mid: str
    sdp_mline_index: int

    def to_json(self) -> CandidateJson:
        return {"candidate": self.candidate, "sdp_mid": self.sdp_mid, "sdp_mline_index": self.sdp_mline_index}


@dataclass(frozen=True)
class Answer:
    sdp: str
    type: str
    pc_id: str | None


def split_candidates(sdp: str) -> tuple[str, list[Candidate]]:
    """The SDP without its ``a=candidate`` / ``a=end-of-candidates`` lines, and those candidates."""
    kept: list[str] = []
    found: list[Candidate] = []
    mline, mid = -1, ""
    for line in sdp.splitlines():
        if line.startswith("m="):
            mline, mid = mline + 1, str(mline + 1)
        elif line.startswith("a=mid:"):
            mid = line[len("a=mid:") :]
        if line.startswith("a=candidate:"):
            found.append(Candidate(line[2:], mid, max(mline, 0)))
            continue
        if line == "a=end-of-candidates":
            continue
        kept.append(line)
    return "\r\n".join(kept) + "\r\n", found


def audio_port(sdp: str) -> int | None:
    """The port of the first ``m=audio`` section (0: rejected), or ``None`` if there is none."""
    for line in sdp.splitlines():
        if line.startswith("m=audio "):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return None


def parse_answer(status: int, body: bytes, url: str) -> Answer:
    """The bot's reply to the offer → its answer; :class:`LineError` naming what is wrong with it."""
    shown = body[:_SHOWN].decode("utf-8", "replace")
    if status >= 400:
        raise LineError(redact_text(f"the bot refused the WebRTC offer: HTTP {status} from {url}: {shown!r}"))
    try:
        obj: Any = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise LineError(redact_text(f"the WebRTC answer from {url} is not JSON ({exc}): {shown!r}")) from exc
    if not isinstance(obj, dict) or not isinstance(obj.get("sdp"), str) or obj.get("type") != "answer":
        raise LineError(
            redact_text(f"the reply from {url} is not an SDP answer ({{sdp, type: answer}}): {shown!r}")
        )
    port = audio_port(obj["sdp"])
    if port is None:
        raise LineError(redact_text(f"the bot's SDP answer from {url} has no audio (no m=audio section)"))
    if port == 0:
        raise LineError(redact_text(f"the bot's SDP answer from {url} rejects the audio (m=audio port 0)"))
    pc_id = obj.get("pc_id")
    return Answer(obj["sdp"], "answer", pc_id if isinstance(pc_id, str) else None)


class Signalling:
    """One call's HTTP exchange with the bot's offer route; every request bounded by ``timeout_s``."""

    def __init__(
        self, url: str, *, headers: Mapping[str, str] | None = None, timeout_s: float = 10.0
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)

    async def offer(self, sdp: str, request_data: JsonObject) -> Answer:
        """POST the offer; the bot's answer, or :class:`LineError` (unreachable, HTTP error, no audio)."""
        body: OfferBody = {
            "sdp": sdp,
            "type": "offer",
            "pc_id": None,
            "restart_pc": False,
            "request_data": dict(request_data),
        }
        status, data = await self._request("POST", body)
        return parse_answer(status, data, self.url)

    async def trickle(self, pc_id: str, candidates: list[Candidate]) -> None:
        """PATCH the candidates the offer left out; :class:`LineError` if the bot refuses them."""
        if not candidates:
            return
        body: TrickleBody = {"pc_id": pc_id, "candidates": [c.to_json() for c in candidates]}
        status, data = await self._request("PATCH", body)
        if status >= 400:
            shown = data[:_SHOWN].decode("utf-8", "replace")
            raise LineError(
                redact_text(f"the bot refused the ICE candidates: HTTP {status} from {self.url}: {shown!r}")
            )

    async def _request(self, method: str, body: OfferBody | TrickleBody) -> tuple[int, bytes]:
        try:
            async with (
                aiohttp.ClientSession(timeout=self.timeout) as session,
                session.request(method, self.url, json=body, headers=self.headers) as response,
            ):
                data = await response.content.read(MAX_ANSWER_BYTES + 1)
                if len(data) > MAX_ANSWER_BYTES:
                    raise LineError(
                        redact_text(f"the reply from {self.url} is over {MAX_ANSWER_BYTES} bytes")
                    )
                return response.status, data
        except TimeoutError as exc:
            raise LineError(
                redact_text(f"{method} {self.url}: no reply within {self.timeout.total:g} s")
            ) from exc
        except (aiohttp.ClientError, OSError, ValueError) as exc:
            raise LineError(redact_text(f"cannot reach {self.url}: {exc}")) from exc
