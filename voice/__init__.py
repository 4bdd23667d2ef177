"""CallSim: a real-time voice call simulator for the CallBench phone-assistant benchmark.

``voice`` holds everything on the caller's side of the line (audio, speech engines, the caller's timing,
the I/O-free call core, lines to assistants, measurement, recording).  ``server`` holds what listens on a
socket (the built-in assistant).  ``voice`` never imports ``server`` except where the CLI starts the
built-in assistant.
"""

__version__ = "0.1.0"
