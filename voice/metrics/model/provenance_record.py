"""A run's ``provenance`` block, typed: which CallSim, which command, when, which packages, which machine,
and the machine's speed index (``docs/results.md``, "Provenance").

:mod:`voice.app.run.provenance` gathers it; the run's and every target's ``results.json`` carry it, and
``callsim compare`` holds two runs' speed indices against each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from voice.metrics.model.jsonio import Fields, JsonValue


@dataclass(frozen=True)
class CallsimState:
    """CallSim's version, and the git commit it ran from and whether that tree had changes (None: no git)."""

    version: str | None
    commit: str | None = None
    dirty: bool | None = None

    def to_json(self) -> dict[str, JsonValue]:
        return {"version": self.version, "commit": self.commit, "dirty": self.dirty}

    @classmethod
    def from_json(cls, f: Fields) -> CallsimState:
        return cls(f.opt_text("version"), f.opt_text("commit"), f.opt_flag("dirty"))


@dataclass(frozen=True)
class Machine:
    """The CPU's model, its SIMD flags, its CPUs and those this process may use, the OS and Python."""

    cpu_model: str | None
    cpu_flags: list[str]
    cpus: int | None
    cpus_usable: int | None
    platform: str
    python: str

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "cpu_model": self.cpu_model,
            "cpu_flags": list(self.cpu_flags),
            "cpus": self.cpus,
            "cpus_usable": self.cpus_usable,
            "platform": self.platform,
            "python": self.python,
        }

    @classmethod
    def from_json(cls, f: Fields) -> Machine:
        return cls(
            f.opt_text("cpu_model"),
            f.texts("cpu_flags"),
            f.opt_integer("cpus"),
            f.opt_integer("cpus_usable"),
            f.text("platform", ""),
            f.text("python", ""),
        )


@dataclass(frozen=True)
class SpeedIndexRecord:
    """The speed index as written: seconds, each component's median, every timed run, its definition."""

    seconds: float
    components: dict[str, float]
    runs: dict[str, list[float]] = field(default_factory=dict)
    definition: str = ""

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "seconds": self.seconds,
            "components": dict(self.components),
            "runs": {k: list(v) for k, v in self.runs.items()},
            "definition": self.definition,
        }

    @classmethod
    def from_json(cls, f: Fields) -> SpeedIndexRecord:
        components = f.obj("components")
        runs = f.obj("runs")
        return cls(
            f.number("seconds"),
            {k: components.number(k) for k in components.doc},
            {k: [_seconds(x, k) for x in runs.values(k)] for k in runs.doc},
            f.text("definition", ""),
        )


def _seconds(value: JsonValue, where: str) -> float:
    return Fields({"s": value}, f"speed_index.runs.{where}").number("s")


@dataclass(frozen=True)
class Provenance:
    """Where a run's figures came from, gathered once at its start (``voice.app.run.provenance``)."""

    callsim: CallsimState
    command: list[str]
    date_utc: str
    packages: dict[str, str | None]
    machine: Machine
    speed_index: SpeedIndexRecord | None = None  # None: not measured (``--no-speed-index``)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "callsim": self.callsim.to_json(),
            "command": list(self.command),
            "date_utc": self.date_utc,
            "packages": dict(self.packages),
            "machine": self.machine.to_json(),
            "speed_index": None if self.speed_index is None else self.speed_index.to_json(),
        }

    @classmethod
    def from_json(cls, f: Fields) -> Provenance:
        packages = f.obj("packages")
        index = f.opt_obj("speed_index")
        return cls(
            CallsimState.from_json(f.obj("callsim")),
            f.texts("command"),
            f.text("date_utc", ""),
            {k: packages.opt_text(k) for k in packages.doc},
            Machine.from_json(f.obj("machine")),
            None if index is None else SpeedIndexRecord.from_json(index),
        )
