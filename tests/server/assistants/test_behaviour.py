"""The reference assistant's spec: JSON round trip, the causality limits, and the reply audio."""

import dataclasses
from typing import get_type_hints

import numpy as np
import pytest

from server.assistants.behaviour import (
    CONFIRM_MARGIN_MS,
    DECISION_MARGIN_MS,
    BehaviourSpec,
    ReferenceBehaviour,
    reply_voice,
)
from voice.core.audio import active_bounds
from voice.speech.vad import speech_segments


def behaviour(**kw) -> ReferenceBehaviour:
    base = {"reply_ms": 600.0, "stop_ms": 250.0, "takeover_pauses": True, "stop_on_backchannel": True}
    return ReferenceBehaviour(**{**base, **kw})


def test_the_json_is_every_field_in_order_as_its_typed_spec_names_them():
    b = behaviour(endpoint_ms=300.0)
    assert list(b.to_json().items()) == list(dataclasses.asdict(b).items())
    assert list(get_type_hints(BehaviourSpec)) == [f.name for f in dataclasses.fields(ReferenceBehaviour)]


def test_behaviour_round_trips_through_json_and_rejects_unknown_keys():
    b = behaviour(stop_ms=None, greeting_ms=None, hangup_after_turns=2)
    assert ReferenceBehaviour.from_json(b.to_json()) == b
    with pytest.raises(ValueError, match="unknown behaviour keys: stop"):
        ReferenceBehaviour.from_json({**b.to_json(), "stop": 1})


@pytest.mark.parametrize(
    ("kw", "why"),
    [
        ({"reply_ms": 200.0 + DECISION_MARGIN_MS - 1}, "reply_ms"),  # takeover: 200 ms endpoint
        ({"takeover_pauses": False, "reply_ms": 2000.0}, "reply_ms"),  # default 2500 ms endpoint
        ({"stop_on_backchannel": False, "stop_ms": 350.0 + CONFIRM_MARGIN_MS - 1}, "stop_ms"),
        ({"stop_ms": DECISION_MARGIN_MS - 1}, "stop_ms"),
        ({"greeting_ms": 0.0}, "greeting_ms"),
        ({"hangup_after_turns": -1}, "hangup_after_turns"),
    ],
)
def test_behaviours_that_cannot_be_played_on_time_are_refused(kw, why):
    with pytest.raises(ValueError, match=why):
        behaviour(**kw)


def test_the_reply_voice_sounds_throughout_and_is_heard_to_stop_where_it_is_cut():
    voice = reply_voice(3000)
    assert active_bounds(voice) == (0, len(voice))
    assert speech_segments(voice) == [(0, len(voice))]
    pad = np.zeros(8000, np.int16)
    for cut in (1601, 8000, 19_999):
        heard = np.concatenate([pad, voice[:cut], pad])
        assert speech_segments(heard) == [(8000, 8000 + cut)]
