"""What differs between callers is an object the one call core is given, called where callers differ."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.fakes import plan, reference, run_core, tone, turn
from voice.core import events as ev
from voice.core.audio import Pcm, ms_to_samples
from voice.core.call import CallCore
from voice.core.caller import PlannedTurn
from voice.core.caller_behaviour import CallState, CallView, ScriptedBehaviour


class Spy:
    """The script, with a note of every call the core makes to it (``turn``: the planned turn's index)."""

    def __init__(self) -> None:
        self.script = ScriptedBehaviour()
        self.calls: list[tuple[str, int | None]] = []

    def during_reply(self, call: CallView, e: int, turn: PlannedTurn | None) -> bool:
        self.calls.append(("during_reply", turn and turn.index))
        return self.script.during_reply(call, e, turn)

    def after_reply(self, call: CallView, e: int, reply_end: int, turn: PlannedTurn | None) -> None:
        self.calls.append(("after_reply", turn and turn.index))
        self.script.after_reply(call, e, reply_end, turn)

    def after_timeout(self, call: CallView, e: int, turn: PlannedTurn | None) -> None:
        self.calls.append(("after_timeout", turn and turn.index))
        self.script.after_timeout(call, e, turn)

    def after_frame(self, call: CallView, start: int, caller: Pcm) -> None:
        self.calls.append(("after_frame", start))

    def finishing(self, call: CallView, at: int) -> None:
        self.calls.append(("finishing", at))


class Waits(Spy):
    """A caller with nothing left to say that waits for more rather than hanging up (as a person does)."""

    def after_reply(self, call: CallView, e: int, reply_end: int, turn: PlannedTurn | None) -> None:
        if turn is None:
            call.await_reply(reply_end)
        else:
            super().after_reply(call, e, reply_end, turn)


def test_the_default_behaviour_is_the_script():
    scripted = CallCore(plan(turn(0), turn(1, backchannel_at_ms=600)))
    given = CallCore(plan(turn(0), turn(1, backchannel_at_ms=600)), behaviour=ScriptedBehaviour())
    run_core(scripted, reference(reply_len_ms=3000, stop_ms=None))
    run_core(given, reference(reply_len_ms=3000, stop_ms=None))
    assert isinstance(scripted.behaviour, ScriptedBehaviour)
    assert given.events == scripted.events
    assert any(isinstance(e, ev.BackchannelSaid) for e in given.events)


def test_the_core_asks_its_behaviour_at_each_point_where_callers_differ():
    spy = Spy()
    core = CallCore(plan(turn(0), turn(1)), behaviour=spy)
    frames = len(run_core(core, reference()))
    scripted = CallCore(plan(turn(0), turn(1)))
    run_core(scripted, reference())
    assert core.events == scripted.events  # a behaviour that only delegates changes nothing
    names = [name for name, _ in spy.calls]
    assert [c for c in spy.calls if c[0] == "after_reply"] == [
        ("after_reply", 0),
        ("after_reply", 1),
        ("after_reply", None),
    ]
    assert names.count("after_frame") == frames
    assert [start for name, start in spy.calls if name == "after_frame"] == [k * 320 for k in range(frames)]
    end = next(e for e in core.events if isinstance(e, ev.CallEnded))
    assert [c for c in spy.calls if c[0] == "finishing"] == [("finishing", end.t)]
    assert names[-2:] == ["finishing", "after_frame"]  # before the outcome; the last frame is still reported
    assert "during_reply" in names and "after_timeout" not in names


def test_what_the_caller_does_with_nothing_left_to_say_is_its_behaviour():
    core = CallCore(plan(turn(0), response_timeout_ms=2000), behaviour=Waits())
    run_core(core, reference())
    assert core.outcome is not None and core.outcome.reason == "completed"
    assert core.outcome.detail == "the last reply never came"  # it waited for one more, then gave up
    assert ("after_timeout", None) in core.behaviour.calls


def test_the_call_state_is_public():
    assert CallCore(plan(turn(0))).state is CallState.AWAIT_REPLY
    assert CallCore(plan(turn(0), greeting=False)).state is CallState.SPEAKING


@dataclass
class View:
    """As much of a call core as placing a backchannel needs."""

    last_reply_onset: int
    now: int
    last_assistant_sound: int
    end_of_reply: int = ms_to_samples(700)
    records: list[ev.CallEvent] = field(default_factory=list)

    def schedule(self, pcm: Pcm, at: int) -> int:
        return max(at, self.now)

    def note(self, event: ev.CallEvent) -> None:
        self.records.append(event)


def test_a_backchannel_is_placed_once_per_reply_and_not_after_it_ended():
    script, audio, offset = ScriptedBehaviour(), tone(200), ms_to_samples(200)
    view = View(last_reply_onset=1000, now=4800, last_assistant_sound=4800)
    script.backchannel(view, 5120, 1, "嗯", audio, offset)
    script.backchannel(view, 5440, 1, "嗯", audio, offset)
    said = view.records
    assert [type(e) for e in said] == [ev.BackchannelSaid]
    assert isinstance(said[0], ev.BackchannelSaid) and said[0].start == 4800 + 1  # the tone's first sound
    later = View(last_reply_onset=9000, now=12_000, last_assistant_sound=12_000 - ms_to_samples(700))
    script.backchannel(later, 13_000, 2, "嗯", audio, offset)
    script.backchannel(later, 13_320, 2, "嗯", audio, offset)
    assert [type(e) for e in later.records] == [ev.BackchannelSkipped]  # a new reply, already over
    early = View(last_reply_onset=20_000, now=20_000, last_assistant_sound=20_000)
    script.backchannel(early, 20_320, 3, "嗯", audio, offset)
    assert early.records == []  # not due yet: it comes on a later frame
