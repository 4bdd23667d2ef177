"""Interop: CallSim's line for each protocol pipecat serializes, against a bot made of pipecat's own pieces.

For Telnyx, Plivo, Exotel, Vonage, Genesys AudioHook and pipecat's protobuf protocol: a real pipecat
pipeline behind pipecat's own serializer for it (:mod:`tests.server.carrier_bots`), one short call each
with CallSim's real caller, call core, driver and line.  The bot answers (its latency measured); the
caller barges in on the first answer, pipecat interrupts the bot, and the carrier's "stop playing" reaches
CallSim as a ``clear`` (Telnyx/Exotel ``clear``, Plivo ``clearAudio``, Vonage ``{"action": "clear"}``,
Genesys' ``barge_in`` event, pipecat's ``interruption`` frame), the stop latency measured on what the
caller heard; the marks the bot asks for come back once played; CallSim's hang-up reaches the bot.
Twilio's own test (``test_twilio_interop.py``) runs on the same bots.  Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.server.carrier_bots import CARRIERS, DISCONNECTED, call_bot, mark_answers
from voice.core import events as ev
from voice.metrics.measure import measure

pytestmark = pytest.mark.e2e

ACKS = {"plivo": "clearedAudio", "vonage": "websocket:cleared"}  # a clear these carriers acknowledge


@pytest.mark.parametrize("carrier", ["telnyx", "plivo", "exotel", "vonage", "genesys", "pipecat"])
async def test_callsim_measures_a_pipecat_bot_behind_each_carrier(carrier: str) -> None:
    call = await call_bot(carrier)
    rec, trace = call.rec, call.trace
    metrics = measure(rec)
    clears = [e for e in rec.events if isinstance(e, ev.ControlReceived) and e.event == "clear"]
    played = [e.name for e in rec.events if isinstance(e, ev.MarkPlayed)]
    barge = metrics.turns[1].barge_in
    print(
        f"\n{carrier}: outcome {metrics.outcome}; latencies {[t.latency_ms for t in metrics.turns]} ms; "
        f"barge-in stop latency {barge.stop_latency_ms if barge else None} ms; {len(clears)} clear(s); "
        f"marks played {played}"
    )
    assert not trace.outcome.failed, trace.outcome
    assert metrics.turns[0].latency_ms is not None and metrics.turns[1].latency_ms is not None  # it answered
    # the barge-in reached the bot, whose "stop playing" reached CallSim within a second of the onset
    assert clears, f"pipecat's {carrier} serializer never said stop"
    onset = next(e.at for e in rec.events if isinstance(e, ev.BargedIn))
    assert any(0 < e.t - int(onset) < 16000 for e in clears)
    assert barge is not None and barge.active and barge.success
    assert barge.stop_latency_ms is not None and 100 < barge.stop_latency_ms < 1500
    # marks: each the core played was answered in the carrier's words, in order, and reached the bot
    bot_marks = mark_answers(carrier, call.sent) if CARRIERS[carrier].mark is not None else []
    if CARRIERS[carrier].mark is not None:  # (Vonage's marks are named by their payload in the log)
        assert [
            m.removeprefix('notify {"name": "').removesuffix('"}') for m in played if "answer-" in m
        ] == bot_marks
        assert bot_marks
    if carrier in ACKS:
        assert [e for e in call.sent if e.get("event") == ACKS[carrier]], "the clear was never acknowledged"
    # the hang-up: the carrier's message (where it has one), then the websocket's close
    assert call.sent[-1] == DISCONNECTED
    kind = CARRIERS[carrier].hangup
    if kind is not None:
        assert call.sent[-2].get("event", call.sent[-2].get("type")) == kind
    assert np.abs(rec.assistant).max() > 2000
