"""The pieces of an ``openai:MODEL`` policy for the built-in pipeline, from the assistant's settings."""

from __future__ import annotations

import os

from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameProcessor

from server.config import PolicySettings
from server.policy.llm import LLMPolicyProcessor, ReplyGate
from server.policy.llm_policy import LLMPolicyFactory
from server.policy.processor import DEFAULT_VIEW

NO_KEY = "not-needed"  # local servers ignore the key; the openai client insists on one


def llm_policy_parts(
    settings: PolicySettings, factory: LLMPolicyFactory | None = None
) -> tuple[LLMPolicyProcessor, FrameProcessor, ReplyGate]:
    """The front processor, pipecat's OpenAI-compatible LLM service and the reply gate, sharing a context.

    ``factory`` is the ``openai:MODEL`` policy (``load_policy_factory``); by default, the settings' own."""
    from pipecat.services.openai.llm import OpenAILLMService

    if factory is None:
        factory = LLMPolicyFactory(settings.policy, base_url=settings.policy_base_url)
    model = factory.model
    base_url = factory.base_url or os.environ.get("OPENAI_BASE_URL") or None
    context = LLMContext()
    llm = OpenAILLMService(
        api_key=os.environ.get("OPENAI_API_KEY") or NO_KEY,
        base_url=base_url,
        settings=OpenAILLMService.Settings(model=model, temperature=0.3, max_tokens=200),
    )
    front = LLMPolicyProcessor(
        context,
        factory,
        default_view=DEFAULT_VIEW,
        start_timeout_secs=settings.start_timeout_secs,
        send_logs=settings.send_logs,
    )
    gate = ReplyGate(context, send_logs=settings.send_logs, timeout_secs=settings.policy_timeout_secs)
    return front, llm, gate
