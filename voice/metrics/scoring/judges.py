"""Judges by name, for ``--judge``: ``checklist`` (offline, the default) or ``openai:MODEL``.

The LLM judge reaches its server through ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` or the options given
(docs/judges.md); nothing is imported or contacted until it is asked for.
"""

from __future__ import annotations

from typing import Any

from voice.errors import ConfigError
from voice.metrics.scoring.vocabulary import Judge

DEFAULT_JUDGE = "checklist"
CHECKLIST = ("checklist", "checklist/3")


def check_judge(spec: str, *, option: str | None = None) -> None:
    """Refuse a judge :func:`make_judge` would refuse, without making it: ``bench --judge`` scores when the
    last call ends, so a wrong name must be said before the first."""
    if spec in CHECKLIST:
        return
    if spec.startswith("openai:"):
        from voice.llm.settings import parse_model_spec

        try:
            parse_model_spec(spec)
        except ConfigError as exc:
            raise ConfigError(f"{option}: {exc}" if option else str(exc)) from exc
        return
    said = f"unknown judge {spec!r}: checklist (offline) or openai:MODEL"
    raise ConfigError(f"{option}: {said}" if option else said)


def make_judge(spec: str = DEFAULT_JUDGE, **llm_settings: Any) -> Judge:
    """``checklist`` or ``openai:MODEL`` (``llm_settings``: base_url, api_key, ... for the LLM judge)."""
    check_judge(spec)
    if spec in CHECKLIST:
        from voice.metrics.scoring.checklist import ChecklistJudge

        return ChecklistJudge()
    from voice.metrics.scoring.llm import LLMJudge

    return LLMJudge.from_spec(spec, **{k: v for k, v in llm_settings.items() if v is not None})
