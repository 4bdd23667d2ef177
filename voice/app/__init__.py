"""The application: ``callsim``'s commands and what they run (``run``), write (``report``), talk through
(``live``) and measure (``benchmarks``).

The one room above both the simulator library (the rest of ``voice/``) and the assistant (``server/``): the
only one that may start the built-in assistant, and that nothing below imports.
"""
