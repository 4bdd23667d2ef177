"""Performance benchmarks behind ``scripts/bench_*``: they print figures, they assert nothing.

``capacity`` (simultaneous real-time calls against an echo assistant), ``stages`` (the built-in
assistant's per-stage latency next to the caller-side latency) and ``tts_cache`` (cold vs warm caller
audio preparation).  Shared helpers (CPU accounting, tables) live in ``sysstats``; percentiles in
:mod:`voice.metrics.reduce`.
"""
