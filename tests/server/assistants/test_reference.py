"""The reference assistant: its rules on the sample timeline (no sockets), and one real call on localhost."""

import numpy as np
import pytest

from server.assistants.behaviour import REPLY_GAP_MS, ReferenceBehaviour
from server.assistants.reference import (
    Hangup,
    Note,
    OriginEstimator,
    Play,
    ReferenceCore,
    Stop,
    serve_reference,
)
from tests.records import short_delivery
from voice.app.run.driver import run_call
from voice.core.audio import FRAME_SAMPLES, ms_to_samples, samples_to_ns
from voice.core.call import CallCore
from voice.core.caller import CallerTiming
from voice.core.clock import MonotonicClock
from voice.core.events import assistant_log
from voice.dialogues import parse_dialogue
from voice.lines.line import CallStart
from voice.lines.pcm import PcmWebsocketLine
from voice.metrics.measure import measure
from voice.recording import Recording
from voice.speech.caller_plan import plan_call
from voice.speech.tts.memory import MemoryTTS

AUDIBLE = (0, ms_to_samples(3000))


def behaviour(**kw) -> ReferenceBehaviour:
    base = {"reply_ms": 600.0, "stop_ms": 250.0, "takeover_pauses": True, "stop_on_backchannel": True}
    return ReferenceBehaviour(**{**base, **kw})


def sound(n: int) -> np.ndarray:
    """``n`` samples that all sound (|x| well above the threshold), so boundaries are exact."""
    return np.where(np.arange(n) % 2 == 0, 4000, -4000).astype(np.int16)


def stream(*parts: tuple[str, int]) -> np.ndarray:
    """A caller stream: ("s", n) is n sounding samples, ("q", n) n samples of silence."""
    return np.concatenate([sound(n) if kind == "s" else np.zeros(n, np.int16) for kind, n in parts])


def feed(core: ReferenceCore, pcm: np.ndarray) -> list[tuple[int, object]]:
    """Feed ``pcm`` (zero-padded to whole frames); return (samples heard when decided, command) per
    command, notes left out."""
    pcm = np.concatenate([pcm, np.zeros(-len(pcm) % FRAME_SAMPLES, np.int16)])
    out = []
    for k in range(0, len(pcm), FRAME_SAMPLES):
        out += [(core.heard, c) for c in core.feed(pcm[k : k + FRAME_SAMPLES]) if not isinstance(c, Note)]
    return out


# --- clock mapping -----------------------------------------------------------------------------------------


def test_origin_is_the_least_delayed_frame_and_sends_lead_by_the_round_trip():
    t0 = 10**12
    est = OriginEstimator(provisional_ns=t0 + 5_000_000)
    delays_us = [900, 300, 1200, 150, 400]
    for k, d in enumerate(delays_us):
        est.frame(t0 + samples_to_ns((k + 1) * FRAME_SAMPLES) + d * 1000, (k + 1) * FRAME_SAMPLES)
    assert est.origin_ns == t0 + 150_000
    assert est.time_of(16000) == t0 + 150_000 + 1_000_000_000
    est.round_trip(400_000)
    est.round_trip(250_000)
    est.round_trip(600_000)
    assert est.send_at(16000) == t0 + 150_000 + 1_000_000_000 - 250_000


def test_the_first_frame_replaces_the_provisional_origin_even_if_later():
    est = OriginEstimator(provisional_ns=0)
    est.frame(50_000_000, FRAME_SAMPLES)
    assert est.origin_ns == 50_000_000 - 20_000_000


# --- decisions on the sample timeline ----------------------------------------------------------------------


def test_the_greeting_is_heard_at_greeting_ms():
    (play,) = ReferenceCore(behaviour(greeting_ms=300), AUDIBLE).start()
    assert isinstance(play, Play) and play.reply.start == 4800 and play.reply.end == 4800 + AUDIBLE[1]


def test_a_reply_is_heard_exactly_reply_ms_after_the_last_sounding_sample():
    core = ReferenceCore(behaviour(greeting_ms=None, reply_ms=600), AUDIBLE)
    end = 5000 + 12_345  # not on a frame boundary
    got = feed(core, stream(("q", 5000), ("s", 12_345), ("q", 16000)))
    ((decided, play),) = got
    assert isinstance(play, Play) and play.reply.start == end + ms_to_samples(600)
    endpoint = ms_to_samples(200)
    assert end + endpoint <= decided < end + endpoint + FRAME_SAMPLES  # the frame that completed the silence


def test_takeover_answers_into_a_pause_and_without_it_sits_through_the_pause():
    pcm = stream(("q", 3200), ("s", 16000), ("q", ms_to_samples(1000)), ("s", 16000), ("q", 48000))
    head_end, tail_end = 3200 + 16000, 3200 + 32000 + ms_to_samples(1000)
    on = feed(ReferenceCore(behaviour(greeting_ms=None, reply_ms=600), AUDIBLE), pcm)
    assert next(c.reply.start for _, c in on if isinstance(c, Play)) == head_end + ms_to_samples(600)
    off = ReferenceCore(
        behaviour(greeting_ms=None, reply_ms=1300, takeover_pauses=False, endpoint_ms=1200), AUDIBLE
    )
    assert [c.reply.start for _, c in feed(off, pcm) if isinstance(c, Play)] == [
        tail_end + ms_to_samples(1300)
    ]


def test_any_speech_during_a_reply_stops_it_at_onset_plus_stop_ms_with_stop_on_backchannel():
    core = ReferenceCore(behaviour(greeting_ms=100, stop_ms=120), AUDIBLE)
    core.start()
    onset = 4000 + 777
    got = feed(core, stream(("q", onset), ("s", 3000), ("q", 16000)))
    stops = [c for _, c in got if isinstance(c, Stop)]
    assert stops == [Stop(onset + ms_to_samples(120))]
    assert core.replies[0].end == onset + ms_to_samples(120)
    assert not any(isinstance(c, Play) for _, c in got)  # a backchannel-length burst is not a turn


def test_without_stop_on_backchannel_short_speech_is_ignored_and_long_speech_is_confirmed_first():
    b = behaviour(greeting_ms=100, stop_ms=500, stop_on_backchannel=False)
    core = ReferenceCore(b, AUDIBLE)
    core.start()
    assert feed(core, stream(("q", 8000), ("s", ms_to_samples(250)), ("q", 16000))) == []  # 28160 fed
    assert core.replies[0].end == ms_to_samples(100) + AUDIBLE[1]
    onset = 28160 + 111
    got = feed(core, stream(("q", 111), ("s", ms_to_samples(1500)), ("q", 8000)))
    (decided, stop) = next((d, c) for d, c in got if isinstance(c, Stop))
    assert stop == Stop(onset + ms_to_samples(500))
    assert (
        onset + ms_to_samples(b.confirm_ms) < decided <= onset + ms_to_samples(b.confirm_ms) + FRAME_SAMPLES
    )
    assert decided < stop.at


def test_a_turn_ending_while_still_talking_is_answered_a_gap_after_the_reply_ends():
    core = ReferenceCore(behaviour(greeting_ms=100, stop_ms=None, reply_ms=250), AUDIBLE)
    core.start()
    got = feed(core, stream(("q", 8000), ("s", 16000), ("q", 64000)))
    (play,) = [c for _, c in got if isinstance(c, Play)]
    assert play.reply.start == ms_to_samples(100) + AUDIBLE[1] + ms_to_samples(REPLY_GAP_MS)


def test_a_reply_not_yet_heard_is_held_when_the_caller_goes_on():
    core = ReferenceCore(behaviour(greeting_ms=None, reply_ms=900), AUDIBLE)
    pcm = stream(("q", 3200), ("s", 16000), ("q", ms_to_samples(400)), ("s", 8000), ("q", 32000))
    got = feed(core, pcm)
    first_end = 3200 + 16000
    plays = [c for _, c in got if isinstance(c, Play)]
    assert [c for _, c in got if isinstance(c, Stop)] == [Stop(first_end + ms_to_samples(900))]
    assert plays[0].reply.end == plays[0].reply.start  # never heard
    assert plays[1].reply.start == first_end + ms_to_samples(400) + 8000 + ms_to_samples(900)


def test_after_answering_hangup_after_turns_turns_it_hangs_up_at_the_next_turns_end():
    core = ReferenceCore(behaviour(greeting_ms=None, hangup_after_turns=1), AUDIBLE)
    quiet = ("q", ms_to_samples(4000))
    got = feed(core, stream(("s", 16000), quiet, ("s", 16000), quiet, ("s", 16000), quiet))
    assert [type(c) for _, c in got] == [Play, Hangup]  # one reply, then the hangup, then nothing
    assert got[1][0] == 16000 + 64000 + 16000 + ms_to_samples(200)  # decided at the endpoint


# --- a real call -------------------------------------------------------------------------------------------


async def test_a_real_call_on_localhost_is_heard_on_time():
    dialogue = parse_dialogue(short_delivery("ref"))
    plan = plan_call(dialogue, MemoryTTS(), CallerTiming(seed=1))
    b = ReferenceBehaviour(450, None, True, False, greeting_ms=200, reply_len_ms=800)
    server, url = await serve_reference()
    async with server:
        start = CallStart("ref", {**dialogue.assistant_view(), "reference": b.to_json()})
        trace = await run_call(CallCore(plan), PcmWebsocketLine(url), MonotonicClock(), start)
    assert trace.outcome.reason == "completed"
    m = measure(Recording("ref", trace.caller, trace.heard, trace.events, {"expects_greeting": True}))
    assert m.first_word_ms == pytest.approx(200, abs=10)
    (turn,) = m.turns
    assert turn.latency_ms == pytest.approx(450, abs=10)
    logs = [dict(log) for e in trace.events if (log := assistant_log(e)) is not None]
    assert next(x["heard_at"] for x in logs if x["ref"] == "reply") == 3200
