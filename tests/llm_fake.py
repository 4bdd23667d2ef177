"""The tests' name for the stand-in chat model, which ships in the package
(``voice/llm/scripted_server.py``)."""

from voice.llm.scripted_server import Reply, Seen
from voice.llm.scripted_server import StandInLLM as FakeLLM

__all__ = ["FakeLLM", "Reply", "Seen"]
