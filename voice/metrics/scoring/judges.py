"""Judges by name, for ``--judge``: ``checklist`` (offline, the default) or ``openai:MODEL``.

The LLM judge reaches its server through ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` or the options given
(docs/judges.md); nothing is imported or contacted until it is asked for.
"""

from __future__ import annotations

from typing import Any

from voice.errors import ConfigError
from voice.metrics.scoring.base import Judge

DEFAULT_JUDGE = "checklist"


def make_judge(spec: str = DEFAULT_JUDGE, **llm_settings: Any) -> Judge:
    """``checklist`` or ``openai:MODEL`` (``llm_settings``: base_url, api_key, ... for the LLM judge)."""
    if spec in ("checklist", "checklist/1"):
        from voice.metrics.scoring.checklist import ChecklistJudge

        return ChecklistJudge()
    if spec.startswith("openai:"):
        from voice.metrics.scoring.llm import LLMJudge

        return LLMJudge.from_spec(spec, **{k: v for k, v in llm_settings.items() if v is not None})
    raise ConfigError(f"unknown judge {spec!r}: checklist (offline) or openai:MODEL")
