"""Performance benchmarks behind ``scripts/bench_*``: they print figures, they assert nothing.

``capacity`` (simultaneous real-time calls against an echo assistant), ``stages`` (the built-in
assistant's per-stage latency next to the caller-side latency), ``tts_cache`` (cold vs warm caller
audio preparation), ``fidelity/`` (CallSim's figures against reference assistants that behave exactly as
told) and ``judge`` (how well a scoring judge separates reference replies from deliberately bad ones).
Shared helpers: ``plans`` (caller plans packed into long calls) and ``sysstats`` (CPU accounting,
tables); percentiles come from :mod:`voice.metrics.reduce`.
"""
