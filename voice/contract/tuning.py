"""The built-in assistant's turn-taking settings and the ``--set KEY=VALUE`` tuning that changes them.

Here, in the contract below both sides, because the pairs enter on either: ``callsim bench
--assistant-set`` and ``callsim
talk --assistant-set`` parse them where they enter (a wrong key is refused before anything loads), carry the
typed :class:`Tuning` to the launcher, which hands the built-in its canonical pairs; ``python -m server
--set`` (``callsim serve``) parses them where they enter too.  The server builds its :class:`TurnSettings`
group from here; ``voice`` never imports the server.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from voice.errors import ConfigError, nearest

TurnModel = Literal["running", "lexical", "silence", "smart-turn"]
TURN_MODELS: tuple[TurnModel, ...] = ("running", "lexical", "silence", "smart-turn")
# The built-in's ASR prompt: a phone call, with the fillers written out, so that Whisper base writes "那个"
# and "就是" (which the lexical turn model reads) instead of dropping or mishearing them.  Caller speech
# (scripts/bench_asr_cer --speech caller, +3 s window): CER 0.176, against 0.166 with DEFAULT_PROMPT.
ASSISTANT_ASR_PROMPT = "以下是普通话的电话录音，嗯，那个，就是，然后。"
ASR_CONTEXT_S = 3.0  # Whisper's encoder sees the speech + this (None: its full 30 s; voice/speech/asr.py)
_FULL_WINDOW = ("full", "none")

# Durations a trade-off bench varies, each in 0..5 s.
_SHORT_SECS = (
    "vad_start_secs",
    "vad_stop_secs",
    "turn_grace_secs",
    "turn_end_secs",
    "turn_end_max_secs",
    "piece_pause_secs",
    "barge_in_confirm_secs",
    "barge_in_silence_secs",
    "hold_after_secs",
    "hold_release_secs",
    "hold_min_gap_secs",
    "hold_again_secs",
    "output_lead_secs",
)


@dataclass(frozen=True)
class TurnSettings:
    """When the built-in assistant hears a turn start and end, yields to the caller, and holds a reply.

    Invalid values raise :class:`ConfigError` naming each one, so no call is made with a setting that
    silently means something else.
    """

    vad_start_secs: float = 0.2  # speech needed before the VAD says "speaking"
    vad_stop_secs: float = 0.2  # silence needed before it says "stopped" (ends the ASR segment)
    vad_confidence: float = 0.7
    vad_min_volume: float = 0.5
    turn_model: TurnModel = "running"  # what ends a turn (server/turn_end.py, server/turns.py)
    turn_max_silence_secs: float = 2.0  # an unfinished-sounding turn ends after this
    turn_grace_secs: float = 0.2  # lexical, silence: after the VAD stops, how long the caller may resume
    turn_end_secs: float = 0.3  # running: silence that ends a turn whose words sound finished ...
    turn_end_max_secs: float = 0.45  # ... raised up to this for a caller who pauses longer and goes on
    piece_pause_secs: float = 0.12  # running: a pause that closes a piece of the caller's speech for the ASR
    barge_in_confirm_secs: float = 0.3  # extra speech needed to interrupt (short backchannels do not)
    barge_in_silence_secs: float = 0.1  # silent this long when the confirmation is due: a backchannel
    hold_after_secs: float = 0.1  # caller speech that holds an audible reply at once (0: off; server/hold.py)
    hold_release_secs: float = 0.064  # caller silence that lets a held reply go on
    hold_min_gap_secs: float = 0.22  # ... but not before the caller has heard this much of the hold
    hold_again_secs: float = 0.4  # caller speech this soon after a release holds again at once
    output_lead_secs: float = 0.06  # audio sent ahead of the caller's playout (the rest at real time)
    turn_stop_timeout_secs: float = 3.0  # a turn whose transcript never comes is closed after this

    def __post_init__(self) -> None:
        problems = [
            f"{n}={getattr(self, n)} is not in 0..5 s" for n in _SHORT_SECS if not 0 <= getattr(self, n) <= 5
        ]
        if self.turn_model not in TURN_MODELS:
            problems.append(f"turn_model {self.turn_model!r} is not one of {', '.join(TURN_MODELS)}")
        if self.turn_end_max_secs < self.turn_end_secs:
            problems.append(
                f"turn_end_max_secs={self.turn_end_max_secs} is under turn_end_secs={self.turn_end_secs}"
            )
        if not 0.02 <= self.piece_pause_secs <= self.turn_end_secs:
            problems.append(f"piece_pause_secs={self.piece_pause_secs} is not in 0.02..turn_end_secs")
        if not 0.1 <= self.turn_max_silence_secs <= 10.0:
            problems.append(f"turn_max_silence_secs={self.turn_max_silence_secs} is not in 0.1..10 s")
        if not 0.0 < self.vad_confidence < 1.0:
            problems.append(f"vad_confidence={self.vad_confidence} is not in (0, 1)")
        if not 0.0 <= self.vad_min_volume < 1.0:
            problems.append(f"vad_min_volume={self.vad_min_volume} is not in [0, 1)")
        if self.turn_stop_timeout_secs <= 0:
            problems.append("turn_stop_timeout_secs must be positive")
        if problems:
            raise ConfigError("invalid assistant settings: " + "; ".join(problems))


def asr_context_problem(seconds: float | None) -> str | None:
    """Why ``asr_audio_context_s`` is refused (None: it is fine); the speech group checks it too."""
    if seconds is not None and not 0.0 <= seconds <= 30.0:
        return f"asr_audio_context_s={seconds} is not in 0..30 s (or full)"
    return None


# The settings ``--set KEY=VALUE`` may change (``python -m server``, ``callsim serve``, ``bench
# --assistant-set``): turn-taking and the ASR's window, what a trade-off bench varies; the rest have flags.
_FLAGGED = ("vad_min_volume", "turn_stop_timeout_secs")
_TURN_KEYS = tuple(f.name for f in dataclasses.fields(TurnSettings) if f.name not in _FLAGGED)
TUNABLE = (*_TURN_KEYS, "asr_audio_context_s", "asr_prompt")
TuningValue = float | str | None


@dataclass(frozen=True)
class Tuning:
    """The ``--set`` pairs given, parsed and checked once: the typed values, and which keys were given.

    ``turns`` is a checked :class:`TurnSettings`; ``asr_audio_context_s`` and ``asr_prompt`` are the speech
    group's.  A key not given keeps its default, so ``Tuning()`` changes nothing.
    """

    turns: TurnSettings = field(default_factory=TurnSettings)
    asr_audio_context_s: float | None = ASR_CONTEXT_S
    asr_prompt: str = ASSISTANT_ASR_PROMPT
    given: tuple[str, ...] = ()  # the keys set, in the order given, each once (a later pair wins)

    def __post_init__(self) -> None:
        if (problem := asr_context_problem(self.asr_audio_context_s)) is not None:
            raise ConfigError(f"invalid assistant settings: {problem}")

    def value(self, key: str) -> TuningValue:
        """The value of a :data:`TUNABLE` key."""
        value: TuningValue = getattr(self.turns if key in _TURN_KEYS else self, key)
        return value

    def with_value(self, key: str, value: TuningValue) -> Tuning:
        """This tuning with ``key`` set to ``value`` (checked: :class:`ConfigError` if out of range)."""
        given = (*(k for k in self.given if k != key), key)
        change: dict[str, Any] = {key: value}  # typed per key by _parse_pair; the group checks the range
        if key in _TURN_KEYS:
            return dataclasses.replace(self, turns=dataclasses.replace(self.turns, **change), given=given)
        return dataclasses.replace(self, **change, given=given)

    def applied_to(self, turns: TurnSettings) -> TurnSettings:
        """``turns`` with the turn-taking keys given here."""
        changes: dict[str, Any] = {key: getattr(self.turns, key) for key in self.given if key in _TURN_KEYS}
        return dataclasses.replace(turns, **changes)

    def pairs(self) -> tuple[str, ...]:
        """The canonical ``key=value`` pairs of the keys given (what ``python -m server --set`` reads)."""
        return tuple(f"{key}={_text(self.value(key))}" for key in self.given)

    def args(self, option: str = "--set") -> list[str]:
        """``[option, pair, option, pair…]`` for a command line."""
        return [a for pair in self.pairs() for a in (option, pair)]

    def __bool__(self) -> bool:
        return bool(self.given)


def _text(value: TuningValue) -> str:
    """A value as typed: ``3`` stays ``3`` (not ``3.0``), so a run recorded with ``vad_stop_secs=3`` before
    the pairs were parsed once still matches its fingerprint on resume."""
    if value is None:
        return "full"
    return repr(value).removesuffix(".0") if isinstance(value, float) else value


def parse_tuning(pairs: Sequence[str], option: str = "--set") -> Tuning:
    """``["vad_stop_secs=0.3", "turn_model=silence"]`` → a checked :class:`Tuning`.

    Raises :class:`ConfigError` naming ``option`` (``--set`` of ``serve``, ``--assistant-set`` of ``bench``:
    the one the user typed) and the pair: for an unknown key with the nearest known one, for a missing
    ``=``, a value of the wrong type or out of its range.  ``turn-model`` is ``turn_model``.
    """
    tuning = Tuning()
    for pair in pairs:
        key, value = _parse_pair(pair, option)
        try:
            tuning = tuning.with_value(key, value)
        except ConfigError as exc:
            problem = str(exc).removeprefix("invalid assistant settings: ")
            raise ConfigError(f"{option} {pair!r}: {problem}") from None
    return tuning


def _parse_pair(pair: str, option: str) -> tuple[str, TuningValue]:
    key, sep, text = pair.partition("=")
    key = key.strip().replace("-", "_")
    if not sep:
        raise ConfigError(f"{option} {pair!r}: expected KEY=VALUE")
    if key not in TUNABLE:
        guess = nearest(key, TUNABLE)
        hint = f"did you mean {guess}?" if guess else f"one of {', '.join(TUNABLE)}"
        raise ConfigError(f"{option} {pair!r}: unknown setting {key!r} ({hint})")
    if key == "asr_audio_context_s" and text.strip().lower() in _FULL_WINDOW:
        return key, None  # Whisper's full 30 s window
    if key in ("turn_model", "asr_prompt"):
        return key, text.strip()
    try:
        return key, float(text)
    except ValueError:
        unit = "a number" if key == "vad_confidence" else "a number of seconds"
        raise ConfigError(f"{option} {pair!r}: {key} takes {unit}") from None
