"""Language models over any OpenAI-compatible chat API: one client for judges, callers and policies.

``client`` sends chat completions (JSON-schema output with fallbacks, temperature 0, bounded concurrency,
retries with backoff) and caches every answer on disk; ``cache`` is that disk cache, keyed by prompt
version, model and request; ``schema`` validates answers against the JSON schema they were asked for.
"""
