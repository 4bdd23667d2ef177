"""``--policy openai:MODEL`` as a policy like any other: the prompt, the hang-up marker, and whole replies.

The chat model is a :class:`voice.contract.policy.Policy`, built per call from the assistant view by
:class:`LLMPolicyFactory` (what ``load_policy_factory("openai:MODEL")`` returns): ``greeting()`` is the
rules' fixed line (nothing is said about the owner before the caller is known), ``respond(caller_text)``
asks the model for the whole reply through :class:`voice.llm.client.LLMClient` and keeps the conversation.
So whatever drives a policy — the known-reply replay (``replay_policy``), a user's own harness — drives this
one too.

The built-in assistant's live calls use the same policy object but not its ``respond``: they stream the
model's tokens into the voice clause by clause (:mod:`server.policy.llm`), which ``respond`` (a blocking call,
one reply at a time) cannot do.  The prompt, the marker and the fallback are the ones below in both.

Pipecat-free, so that ``callsim bench --policy openai:MODEL`` can check the spec without loading it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from server.policy.rules import GREETING
from voice.contract.policy import AssistantView
from voice.errors import CallSimError
from voice.llm.client import ChatRequest, LLMClient, Message
from voice.llm.settings import LLMSettings, parse_model_spec

logger = logging.getLogger(__name__)

PROMPT_VERSION = "callsim-assistant/1"
HANG_UP = "[挂断]"
FALLBACK = "抱歉，我这边线路有点问题，我会转告机主您来过电话，再见。"
TEMPERATURE = 0.3
MAX_TOKENS = 200

_RULES = f"""你是机主的 AI 电话助理，正在替机主接听电话。来电者听到的是你的语音。

规则：
- 你代表机主，但你不是机主；机主现在不方便接听。
- 机主的交代（预设）优先：紧急预设优先于平时的安排；照预设办，不要答应与预设相反的事。
- 只说来电者需要知道的；预设里的私事（去向、病情、住址等）除非对方需要才说；
  验证码、银行卡、身份证号等一律不说。
- 推销、诈骗、冒充客服或公检法的电话：礼貌拒绝，不透露任何信息，然后挂断。
- 对方找的不是机主（打错电话）：告诉对方可能打错了，请他核对号码，不要替别人转告。
- 不清楚对方要做什么时，先问清楚；对方留言时，把关键信息（时间、地点、数量）复述一遍并答应转告。
- 像打电话一样说话：每次一到两句、口语、简短，用普通话，不用列表、括号或表情。
- 通话该结束时（对方道别、事情办完、要挂断骚扰电话），说完道别的话后，在回复最后加上 {HANG_UP}。"""


def system_prompt(view: AssistantView) -> str:
    """The model's instructions for one call, from its assistant view (never the caller's goal)."""
    preset = view.get("preset")
    preset = preset if isinstance(preset, Mapping) else {}
    kind = str(preset.get("type") or "none")
    text = str(preset.get("text") or "").strip()
    owner_goal = str(view.get("owner_goal") or "").strip()
    label = {"emergent": "紧急预设", "regular": "日常预设"}.get(kind, "")
    lines = [_RULES, ""]
    lines.append(f"机主的{label}：{text}" if text and label else "机主没有留下交代。")
    if owner_goal:
        lines.append(f"机主希望：{owner_goal}")
    return "\n".join(lines)


@dataclass(frozen=True)
class LLMReply:
    """A model's reply as the policy protocol has it: the words to say, and whether to hang up after."""

    text: str
    end_call: bool = False


def spoken(answer: str) -> LLMReply:
    """The model's answer as a reply: the hang-up marker taken out and turned into ``end_call``."""
    return LLMReply(answer.replace(HANG_UP, "").strip(), end_call=HANG_UP in answer)


class LLMPolicy:
    """One call's chat-model policy: the system prompt from the view, then one model answer per turn."""

    def __init__(self, view: AssistantView, client: LLMClient) -> None:
        self.system = system_prompt(view)
        self._client = client
        self.messages: list[Message] = [Message("system", self.system), Message("assistant", GREETING)]

    def greeting(self) -> str:
        return GREETING

    def respond(self, caller_text: str) -> LLMReply:
        """The model's whole reply (blocking); a model that fails gets the spoken fallback and a hang-up."""
        self.messages.append(Message("user", caller_text))
        request = ChatRequest(
            tuple(self.messages),
            prompt_version=PROMPT_VERSION,
            temperature=TEMPERATURE,
            max_tokens=MAX_TOKENS,
        )
        try:
            answer = self._client.chat(request).text
        except CallSimError as exc:  # never silence, never a crash: as on a live call
            logger.error(f"the policy model failed: {exc}")
            return LLMReply(FALLBACK, end_call=True)
        reply = spoken(answer)
        self.messages.append(Message("assistant", reply.text))
        return reply


class LLMPolicyFactory:
    """``openai:MODEL`` as a :data:`~voice.contract.policy.PolicyFactory`: one client, one policy per call."""

    def __init__(self, spec: str, *, base_url: str = "", timeout_s: float = 10.0) -> None:
        """Check the spec now (a ConfigError names it); the client is made at the first call."""
        self.model = parse_model_spec(spec).model
        self.base_url = base_url
        self.settings = LLMSettings(
            self.model, base_url=base_url, timeout_s=timeout_s, attempts=1, cache="off"
        )
        self._client: LLMClient | None = None

    def __call__(self, view: AssistantView) -> LLMPolicy:
        if self._client is None:
            self._client = LLMClient(self.settings)
        return LLMPolicy(view, self._client)
