"""Where :mod:`voice.recording` used to live: kept only for ``voice/report/`` and ``voice/metrics/scoring/``.

The recording format moved below every room that reads it (``metrics`` reads recordings, ``run`` writes
them, and ``metrics`` must not import ``run``).  Import from :mod:`voice.recording`; this re-export goes once
those two rooms (being changed elsewhere) import it from there.
"""

from voice.recording import EventStream, Recording, load_recording, recording_paths, save_recording

__all__ = ["EventStream", "Recording", "load_recording", "recording_paths", "save_recording"]
