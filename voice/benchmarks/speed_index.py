"""Where :mod:`voice.run.speed_index` used to live: kept only for ``voice/report/machine.py``.

Every run records the machine's speed index in its provenance, so the index moved down to ``run/`` (``run``
must not import a benchmark).  Import from :mod:`voice.run.speed_index`; this re-export goes once
``voice/report/`` (being changed elsewhere) imports it from there.
"""

from voice.run.speed_index import ENV, ratio, setting

__all__ = ["ENV", "ratio", "setting"]
