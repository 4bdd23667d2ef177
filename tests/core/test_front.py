"""A call core shown through a front: the driver sees it unchanged; live and reactive calls are fronts."""

from tests.fakes import plan, reference, run_core, turn
from voice.core import events as ev
from voice.core.call import CallCore
from voice.core.front import CallFront
from voice.core.live import LiveCallCore, PersonBehaviour
from voice.core.reactive import ReactiveBehaviour, ReactiveCallCore


def test_a_front_plays_its_core_unchanged():
    bare, front = CallCore(plan(turn(0), turn(1))), CallFront(CallCore(plan(turn(0), turn(1))))
    run_core(bare, reference())
    run_core(front, reference())  # fed and ticked as a driver does
    assert front.events == bare.events and front.events is front.call.events
    assert front.done and front.outcome == bare.outcome
    assert front.log is front.call.log and front.plan is front.call.plan
    assert front.now == front.call.now > 0


def test_what_a_companion_notes_goes_on_the_cores_record():
    front = CallFront(CallCore(plan(turn(0))))
    front.note(ev.CallerEarly(0, 0, 0, True))
    assert front.call.events[-1] == ev.CallerEarly(0, 0, 0, True)


def test_the_live_and_reactive_cores_are_one_call_core_with_a_behaviour_of_their_own():
    live, reactive = LiveCallCore(), ReactiveCallCore(plan(greeting=True), max_turns=2)
    for front, kind in ((live, PersonBehaviour), (reactive, ReactiveBehaviour)):
        assert not isinstance(front, CallCore) and type(front.call) is CallCore
        assert isinstance(front.behaviour, kind) and front.call.behaviour is front.behaviour
