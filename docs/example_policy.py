"""An example policy for the built-in assistant: ``callsim serve --policy docs.example_policy:EchoPolicy``.

Run from the repository root (or put the module on ``PYTHONPATH``).  The policy is built once per call from
the call's assistant view, then asked for a greeting and for one reply per finished caller turn (the
caller's words as the built-in assistant's Whisper heard them).  ``end_call=True`` hangs up once the reply
has been spoken.  Everything else — voice activity, turn-taking, barge-ins, TTS — is the built-in's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Reply:
    text: str
    end_call: bool = False


class EchoPolicy:
    """Says back what it heard, tells the preset once, and hangs up when the caller says goodbye."""

    def __init__(self, view: Mapping[str, Any]) -> None:
        preset = view.get("preset") or {}
        self.preset = str(preset.get("text") or "") if isinstance(preset, Mapping) else ""
        self.told = False

    def greeting(self) -> str:
        return "您好，我是机主的电话助理，请问有什么事？"

    def respond(self, caller_text: str) -> Reply:
        if any(word in caller_text for word in ("再见", "拜拜")):
            return Reply("好的，再见。", end_call=True)
        if self.preset and not self.told:
            self.told = True
            return Reply(f"您说{caller_text}，好的。机主交代：{self.preset}")
        return Reply(f"您说{caller_text}，我记下了，会转告机主。")
