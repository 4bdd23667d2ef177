"""``callsim``'s exit codes, one per reason, and the text ``--help`` prints of them (docs/cli.md)."""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1  # ``data validate`` found problems (``voice/speech/data_cli.py``)
EXIT_ERROR = 2  # usage or settings, unreadable files, a refused resume, a target that never came up, a crash
EXIT_FAILED_CALLS = 3  # more failed calls than --max-failed allows (wins over 4 when both happen)
EXIT_GATE = 4  # a --fail-if threshold broke
EXIT_MISMATCH = 5  # compare: the two sides ran under other conditions (without --allow-mismatch)
EXIT_STORAGE = 6  # the disk refused a write (full, read-only): the batch stopped, finished calls kept
EXIT_SIMULATOR = 7  # CallSim itself failed on some calls (caller's speech...): not the assistant's; redo them
EXIT_INTERRUPTED = 130
EXIT_CODES = f"""exit codes:
  {EXIT_OK}    every call ran (within --max-failed), every --fail-if gate held, CallSim failed on none
  {EXIT_ERROR}    error, no verdict: bad options or figures, unreadable files, a folder made with other
       settings, a target that never accepted a connection, the built-in assistant crashed
  {EXIT_FAILED_CALLS}    more failed calls than --max-failed allows (wins over {EXIT_GATE})
  {EXIT_GATE}    a --fail-if threshold broke (each is printed with its target and actual value)
  {EXIT_STORAGE}    the disk refused a write (full, read-only, no permission): the batch stopped; finished
       calls are kept and a rerun resumes once there is room
  {EXIT_SIMULATOR}    CallSim failed on some calls (a caller line it could not voice): CallSim's failure, not
       the assistant's; they are in no figure, and the command printed with them redoes them
       ({EXIT_FAILED_CALLS} and {EXIT_GATE}, the assistant's own verdict, win over it)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); finished calls are kept and a rerun resumes"""
COMPARE_EXIT_CODES = f"""exit codes:
  {EXIT_OK}    every --fail-if gate held
  {EXIT_ERROR}    error, no verdict: bad options or figures, a folder that is not a run or cannot be read
  {EXIT_GATE}    a --fail-if threshold broke (each is printed with the value it saw)
  {EXIT_MISMATCH}    the two sides differ in dialogues, network, caller voice or seeds (--allow-mismatch
       compares them anyway, with a warning)
  {EXIT_STORAGE}    the disk refused to write --json"""
