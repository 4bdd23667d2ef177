"""A rule-played caller model: answers the reactive caller's requests from what the prompt says was heard.

It stands in for a real chat model (a script, not a model), in CallSim's tests and CI and for anyone trying
the reactive caller without a model or a key: ``callsim fake-llm --role caller`` serves it as an
OpenAI-compatible server on port 8011 (:mod:`voice.llm.fake_cli`); point ``callsim bench --caller
openai:rules --caller-base-url http://127.0.0.1:8011/v1`` at it.  It reads the sections of
:func:`voice.react.prompt.render_user` and follows the script, except where what it heard calls for
something else:

- the assistant said goodbye → hang up (goal yes if the script was said through, else partly);
- the assistant said it was a wrong number → hang up, goal no;
- the reply was not heard (empty) or asked to repeat (什么 / 再说 / 没听清) → say the last line again;
- the reply shares almost nothing with the script's reference reply → ask what it meant before going on;
- a reply still going after more than 25 heard characters → cut in with the next line, else wait;
- no reply came → "喂？您还在吗？".

Deterministic: the same prompt always gets the same answer.
"""

from __future__ import annotations

from typing import Any

from voice.react.decision import CallerAnswer

ASK_AGAIN = "不好意思，您刚才说的我没太明白，能再说一下吗？"
STILL_THERE = "喂？您还在吗？"


def _section(lines: list[str], header: str) -> list[str]:
    out, inside = [], False
    for line in lines:
        if line.startswith(header):
            inside = True
            continue
        if inside and not line.startswith("  "):
            break
        if inside:
            out.append(line.strip())
    return out


def say(text: str, reason: str) -> CallerAnswer:
    """A ``say`` decision (every field of the caller's answer schema; the rest None)."""
    return {
        "action": "say",
        "text": text,
        "pause_before_ms": None,
        "pause_inside": None,
        "backchannel": None,
        "interrupt_after_ms": None,
        "goal": None,
        "reason": reason,
    }


def end(goal: str, reason: str) -> CallerAnswer:
    """A ``hang_up`` decision with the caller's verdict on its goal (yes, partly, no)."""
    return {**say("", reason), "action": "hang_up", "goal": goal}


def _overlap(a: str, b: str) -> float:
    """Share of the reference's distinct characters heard (punctuation ignored)."""
    ref = {c for c in b if c.isalnum()}
    return len(ref & set(a)) / len(ref) if ref else 1.0


def answer(body: dict[str, Any]) -> CallerAnswer:
    """The caller's decision for one chat request body."""
    user = next(m["content"] for m in body["messages"] if m["role"] == "user")
    lines = user.split("\n")
    script = _section(lines, "参考剧本")
    callers = [s.removeprefix("来电者：") for s in script if s.startswith("来电者：")]
    references = [s.removeprefix("助理：") for s in script if s.startswith("助理：")]
    greeting = bool(script) and script[0].startswith("助理：")
    history = _section(lines, "到目前为止")
    said = [h.removeprefix("你：").split("[")[0] for h in history if h.startswith("你：")]
    heard = [h.removeprefix("助理：") for h in history if h.startswith("助理：")]
    now = next(line for line in lines if line.startswith("现在："))
    n = len([s for s in said if s != ASK_AGAIN and s != STILL_THERE and not s.startswith("我是说，")])
    last = heard[-1].split("[")[0] if heard else ""
    if "通话已经结束" in now:
        return end("yes" if n >= len(callers) else "partly", f"说完了 {n}/{len(callers)} 句")
    if "还在说话" in now:
        return (
            say(callers[n], "它说得太长了，我直接说")
            if len(last) > 25 and n < len(callers)
            else {
                **say("", "让它说完"),
                "action": "wait",
            }
        )
    if "先开口" in now:
        return say(callers[0], "电话接通了")
    if "没有回应" in now or "没有回应" in (heard[-1] if heard else ""):
        return say(STILL_THERE, "对方没声音")
    if "打错" in last:
        return end("no", "对方说我打错了")
    if n and ("再见" in last or "拜拜" in last):
        return end("yes" if n >= len(callers) else "partly", "对方道别了")
    if not last or last == "（听不清）" or any(w in last for w in ("什么", "再说", "没听清")):
        return say(f"我是说，{said[-1]}" if said else callers[0], "对方没听清")
    reference = (
        references[n - (0 if greeting else 1)] if 0 <= n - (0 if greeting else 1) < len(references) else ""
    )
    if reference and said and said[-1] != ASK_AGAIN and _overlap(last, reference) < 0.15:
        return say(ASK_AGAIN, "答非所问")
    if n < len(callers):
        return say(callers[n], "按我的事情往下说")
    return end("yes", "事情办完了")
