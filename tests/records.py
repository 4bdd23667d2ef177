"""Dialogue records as they appear in a JSONL file, for the tests that parse or count them."""

from __future__ import annotations

from typing import Any


def good(did: str = "takeout-regular-01") -> dict[str, Any]:
    return {
        "id": did,
        "scenario": "takeout",
        "preset": {"type": "regular", "text": "外卖放门口就行，我在开会。"},
        "owner_goal": "外卖放门口，不被打扰",
        "caller_goal": "尽快把外卖送到并确认放哪",
        "relation": "alignment",
        "turns": [
            {"role": "assistant", "text": "您好，我是机主的电话助理，请问有什么事？"},
            {"role": "caller", "text": "喂，你好，美团外卖，你的餐到了。", "pause_before_ms": 400},
            {"role": "assistant", "text": "好的，麻烦您放门口就行，机主在开会。"},
            {"role": "caller", "text": "那个，我放门口了啊，你记得拿。", "barge_in_ms": 900},
            {"role": "assistant", "text": "好的，谢谢您。"},
            {
                "role": "caller",
                "text": "我想问一下，明天还要不要送？",
                "pause_inside": {"after": "我想问一下，", "ms": 1500},
            },
            {"role": "assistant", "text": "这个我记下来，转告机主。"},
            {"role": "caller", "text": "好的，谢谢，再见。", "backchannel": {"text": "嗯", "at_ms": 700}},
            {"role": "assistant", "text": "不客气，再见。"},
        ],
    }


def takeout_call(dialogue_id: str) -> dict[str, object]:
    """The short real-engine dialogue of the end-to-end tests: a greeting, a turn, a barge-in goodbye."""
    return {
        "id": dialogue_id,
        "scenario": "takeout",
        "preset": {"type": "regular", "text": "外卖放门口就行，我在开会。"},
        "owner_goal": "外卖放门口",
        "caller_goal": "送到外卖",
        "relation": "alignment",
        "turns": [
            {"role": "assistant", "text": "您好，我是机主的电话助理，请问有什么事？"},
            {"role": "caller", "text": "你好，我是送外卖的，你的外卖到了。"},
            {"role": "assistant", "text": "好的，麻烦您放门口就行。"},
            {"role": "caller", "text": "好的，那我放门口了，再见。", "barge_in_ms": 600},
            {"role": "assistant", "text": "谢谢，再见。"},
        ],
    }


def short_delivery(dialogue_id: str, pause_before_ms: int | None = None) -> dict[str, Any]:
    """The smallest useful dialogue: a greeting, one caller line, one answer (runner and bench tests)."""
    caller: dict[str, Any] = {"role": "caller", "text": "快递到了。"}
    if pause_before_ms is not None:
        caller["pause_before_ms"] = pause_before_ms
    return {
        "id": dialogue_id,
        "scenario": "delivery",
        "preset": {"type": "none", "text": ""},
        "owner_goal": "收快递",
        "caller_goal": "送快递",
        "relation": "alignment",
        "turns": [
            {"role": "assistant", "text": "您好。"},
            caller,
            {"role": "assistant", "text": "放驿站吧。"},
        ],
    }


def caller_first(dialogue_id: str = "talk-test") -> dict[str, Any]:
    """One caller line (the caller speaks first, 300 ms into the call) and its answer (``talk`` tests)."""
    return {
        "id": dialogue_id,
        "scenario": "delivery",
        "preset": {"type": "regular", "text": "快递放驿站。"},
        "owner_goal": "快递放驿站",
        "caller_goal": "送快递",
        "relation": "alignment",
        "turns": [
            {"role": "caller", "text": "快递到了。", "pause_before_ms": 300},
            {"role": "assistant", "text": "好的，放驿站吧。"},
        ],
    }
