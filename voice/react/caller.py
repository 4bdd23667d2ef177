"""``--caller``: the scripted caller (the default) or a reactive one over an OpenAI-compatible chat model.

:func:`parse_caller` turns the option into ``None`` (scripted: the dialogue is played as written) or a
:class:`ReactiveCaller`, the run-wide settings from which each call gets its own
:class:`~voice.react.session.ReactiveSession`.  One :class:`~voice.llm.client.LLMClient` serves every call
of a run (it bounds the requests in flight and owns the answer cache).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, TypedDict

from voice.core.caller import CallerTiming
from voice.dialogues import Dialogue
from voice.errors import ConfigError
from voice.llm.cache import AnswerCache
from voice.llm.client import LLMClient
from voice.llm.settings import LLMSettings, parse_model_spec
from voice.react.brain import CallerBrain
from voice.react.heard_so_far import caller_ears
from voice.react.persona import PERSONAS, Persona, choose_persona
from voice.react.prompt import PROMPT_VERSION
from voice.react.session import ReactiveSession
from voice.speech.asr import ASREngine
from voice.speech.engine_lock import EngineLock
from voice.speech.tts.engine import TTSEngine

# 3: a turn's rest streamed clause by clause; 2: fitted ears, a turn voiced first clause first (issue 26);
# 1: whole turns
VOICING_VERSION = 3


class CallerFingerprint(TypedDict):
    """The reactive caller's part of a run's settings (``settings.json``): what a resume must match."""

    caller: str
    persona: str
    caller_prompt: str
    caller_max_turns: int
    caller_early_ms: float | None
    caller_voicing: int


CALLERS = ("scripted", "openai:MODEL")
MIN_TURNS = 6  # a reactive caller may take more turns than its script: at least this many, or twice it


@dataclass(frozen=True)
class ReactiveCaller:
    """How a run's reactive callers are made: the model, persona choice, limits."""

    spec: str  # openai:MODEL
    llm: LLMSettings
    persona: str = "random"  # a name of PERSONAS, or random (seeded per call)
    max_turns: int = 0  # caller turns per call; 0: twice the script's, at least MIN_TURNS
    decide_timeout_s: float = 20.0  # one decision, retries included, before the fallback
    wait_in_place: bool = False  # virtual clocks only: decisions take no call time
    early_ms: float | None = 240.0  # hear the reply at its pauses this long and decide early (None: off)
    # where the model's answers are kept (None: the LLM settings' disk cache); a Ray run's workers keep
    # them in the driver's (voice.app.run.ray_cache), so its replays work on any node
    answer_cache: AnswerCache | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.persona != "random" and self.persona not in PERSONAS:
            raise ConfigError(f"unknown persona {self.persona!r} (random, {', '.join(PERSONAS)})")
        if self.max_turns < 0 or self.decide_timeout_s <= 0:
            raise ConfigError("the caller's max turns must be >= 0 and its decision timeout > 0")
        reply_over = CallerTiming().end_of_reply_ms  # a guess is made before the reply is taken as over
        if self.early_ms is not None and not 20 <= self.early_ms < reply_over:
            raise ConfigError(f"early_ms must be 20 ms (a frame) to {reply_over:g} ms, got {self.early_ms}")

    def fingerprint(self) -> CallerFingerprint:
        """What must match for a folder's calls to be reused on resume."""
        return {
            "caller": self.spec,
            "persona": self.persona,
            "caller_prompt": PROMPT_VERSION,
            "caller_max_turns": self.max_turns,
            "caller_early_ms": self.early_ms,  # hearing and deciding at the reply's pauses (issue 26)
            "caller_voicing": VOICING_VERSION,
        }

    def persona_for(self, dialogue: Dialogue, seed: int) -> Persona:
        return choose_persona(self.persona, dialogue.id, dialogue.scenario, seed)

    def turns_for(self, dialogue: Dialogue) -> int:
        return self.max_turns or max(MIN_TURNS, 2 * len(dialogue.caller_turns))

    @functools.cached_property
    def client(self) -> LLMClient:
        """The run's one client (made on first use)."""
        return LLMClient(self.llm, cache=self.answer_cache)

    def session(
        self,
        dialogue: Dialogue,
        timing: CallerTiming,
        tts: TTSEngine,
        ears: ASREngine,
        *,
        tts_lock: EngineLock | None = None,
        asr_lock: EngineLock | None = None,
    ) -> ReactiveSession:
        """The reactive caller of one call (``timing.seed``: the call's seed; ``ears``: the run's transcriber,
        which it hears with through :func:`~voice.react.heard_so_far.caller_ears`)."""
        brain = CallerBrain(
            self.client,
            dialogue,
            self.persona_for(dialogue, timing.seed),
            max_turns=self.turns_for(dialogue),
            timeout_s=self.decide_timeout_s,
        )
        return ReactiveSession(
            brain,
            tts,
            caller_ears(ears),
            timing,
            tts_lock=tts_lock,
            asr_lock=asr_lock,
            wait_in_place=self.wait_in_place,
            early_ms=self.early_ms,
        )

    def close(self) -> None:
        if "client" in self.__dict__:
            self.client.close()


def parse_caller(spec: str, **settings: Any) -> ReactiveCaller | None:
    """``scripted`` → None; ``openai:MODEL`` → a :class:`ReactiveCaller` (``settings``: its fields and
    :class:`~voice.llm.settings.LLMSettings` fields such as ``base_url``)."""
    if spec == "scripted":
        return None
    try:
        model = parse_model_spec(spec).model
    except ConfigError as exc:
        raise ConfigError(f"--caller: scripted (the default) or openai:MODEL; {exc}") from exc
    settings.setdefault("timeout_s", 15.0)  # per HTTP request: a caller cannot wait minutes
    settings.setdefault("attempts", 2)
    settings.setdefault("output_attempts", 2)  # a refused answer is asked again once, then the fallback
    own = {
        k: settings.pop(k)
        for k in ("persona", "max_turns", "decide_timeout_s", "wait_in_place", "early_ms")
        if k in settings
    }
    return ReactiveCaller(spec, LLMSettings(model, **settings), **own)
