"""CallSim: a real-time voice call simulator for the CallBench phone-assistant benchmark.

``voice`` holds everything on the caller's side of the line (audio, speech engines, the caller's timing,
the I/O-free call core, lines to assistants, measurement, recording).  ``server`` holds what listens on a
socket (the built-in assistant).  ``voice`` never imports ``server`` except where the CLI starts the
built-in assistant.

The names below are the public API, for calling CallSim from Python (a pytest in a bot's own repository,
a notebook): ``docs/api.md``, with an example test in ``docs/example_test_my_bot.py``.  They are imported
on first use, so ``import voice`` stays light (no numpy, no websockets, no models).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name → the module that defines it
_EXPORTS = {
    # dialogues
    "Dialogue": "voice.dialogues",
    "bundled_dialogues_path": "voice.dialogues",
    "load_dialogues": "voice.dialogues",
    "parse_dialogue": "voice.dialogues",
    "validate_file": "voice.dialogues",
    "select_dialogues": "voice.app.run.dataset",
    # running a benchmark
    "BenchConfig": "voice.app.run.dataset",
    "TargetResult": "voice.app.run.dataset",
    "run_bench": "voice.app.run.dataset",
    "CallerTiming": "voice.core.caller",
    "LineEffects": "voice.lines.effects",
    "make_tts": "voice.speech.tts",
    "WhisperASR": "voice.speech.asr",
    # measuring, and reading results
    "measure": "voice.metrics.measure",
    "CallMetrics": "voice.metrics.call_metrics",
    "TurnMetrics": "voice.metrics.call_metrics",
    "BargeIn": "voice.metrics.call_metrics",
    "Recording": "voice.recording",
    "load_recording": "voice.recording",
    "metrics_from_json": "voice.metrics.model.call_record",
    "FIGURES": "voice.metrics.figures",
    "figures": "voice.metrics.figures",
    "summarize": "voice.metrics.results",
    "read_results": "voice.metrics.model.run_results",
    "RESULTS_SCHEMA": "voice.metrics.model.jsonio",
    "METRICS_SCHEMA": "voice.metrics.model.jsonio",
    "build_report": "voice.app.report.build",
    # errors
    "CallSimError": "voice.errors",
    "ConfigError": "voice.errors",
    "DialogueError": "voice.errors",
    "RecordingError": "voice.errors",
}

__all__ = [  # the names of _EXPORTS (tests/test_api.py checks they agree)
    "FIGURES",
    "METRICS_SCHEMA",
    "RESULTS_SCHEMA",
    "BargeIn",
    "BenchConfig",
    "CallMetrics",
    "CallSimError",
    "CallerTiming",
    "ConfigError",
    "Dialogue",
    "DialogueError",
    "LineEffects",
    "Recording",
    "RecordingError",
    "TargetResult",
    "TurnMetrics",
    "WhisperASR",
    "__version__",
    "build_report",
    "bundled_dialogues_path",
    "figures",
    "load_dialogues",
    "load_recording",
    "make_tts",
    "measure",
    "metrics_from_json",
    "parse_dialogue",
    "read_results",
    "run_bench",
    "select_dialogues",
    "summarize",
    "validate_file",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its module on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'voice' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later uses skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


if TYPE_CHECKING:  # for type checkers and editors; at run time __getattr__ imports on first use
    from voice.app.report.build import build_report
    from voice.app.run.dataset import BenchConfig, TargetResult, run_bench, select_dialogues
    from voice.core.caller import CallerTiming
    from voice.dialogues import (
        Dialogue,
        bundled_dialogues_path,
        load_dialogues,
        parse_dialogue,
        validate_file,
    )
    from voice.errors import CallSimError, ConfigError, DialogueError, RecordingError
    from voice.lines.effects import LineEffects
    from voice.metrics.call_metrics import BargeIn, CallMetrics, TurnMetrics
    from voice.metrics.figures import FIGURES, figures
    from voice.metrics.measure import measure
    from voice.metrics.model.call_record import metrics_from_json
    from voice.metrics.model.jsonio import METRICS_SCHEMA, RESULTS_SCHEMA
    from voice.metrics.model.run_results import read_results
    from voice.metrics.results import summarize
    from voice.recording import Recording, load_recording
    from voice.speech.asr import WhisperASR
    from voice.speech.tts import make_tts
