"""The tests' name for the stand-in chat model, which ships in the package (``voice/llm/standin.py``)."""

from voice.llm.standin import Reply, Seen
from voice.llm.standin import StandInLLM as FakeLLM

__all__ = ["FakeLLM", "Reply", "Seen"]
