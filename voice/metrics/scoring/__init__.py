"""Scoring assistants on what the caller heard: CallBench's seven dimensions, per assistant turn.

``base`` holds the shared vocabulary (dimensions, a turn's scores, what a judge is given, the judge
interface); ``transcript`` builds what a judge reads from a recording and its metrics (the heard reply
with timing tags inlined); ``checklist`` is the offline judge driven by dialogue annotations; ``llm`` is the
judge over any OpenAI-compatible chat API.
"""
