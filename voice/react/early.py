"""What the reactive caller's early decisions are made of (issue 26): a decision made into a move, a guess
in flight, and the count of guesses kept and thrown away (:mod:`voice.react.session`)."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from voice.core import events as ev
from voice.core.reactive import CallerMove
from voice.react.brain import Decided
from voice.speech.engine_lock import Urgency


@dataclass(frozen=True)
class Made:
    """A decision made into a move: what to hand the core, what to log, and the think-time generator
    advanced by it (kept only if the move is used)."""

    move: CallerMove
    logged: ev.CallerDecided
    goal: ev.GoalReported | None
    decided: Decided | None
    rng: random.Random
    rest: tuple[str, int] | None = None  # a turn's text still to voice, and the pause before it (ms)


@dataclass
class EarlyCount:
    """Decisions made early, at a pause of a reply: used, or thrown away because more was heard."""

    asked: int = 0
    kept: int = 0
    wasted: int = 0


@dataclass
class Guess:
    """A decision in the making for a request not raised yet; its engine jobs wait at ``urgency`` (SOON,
    raised to URGENT when the request comes and it is the decision)."""

    key: tuple[int, int | None, int | None]  # the guessed request's turn, reply onset and end
    task: asyncio.Task[Made]
    urgency: Urgency
