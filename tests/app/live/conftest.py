"""A virtual sound card for the device tests: PulseAudio in user mode with two null sinks.

``callsim_mic`` is what the microphone hears (its monitor is the input: a test plays a WAV into the sink),
``callsim_speaker`` is where the speaker plays (its monitor can be recorded, or, for the loopback
calibration, used as the microphone).  sounddevice reaches them through ALSA's ``pulse`` device
(``libasound2-plugins``); ``PULSE_SOURCE``/``PULSE_SINK`` choose the sink per test.  ``scripts/setup``
installs PulseAudio; without it the device tests fail under ``CALLSIM_REQUIRE_PULSE`` (CI) and skip otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REQUIRE_PULSE = "CALLSIM_REQUIRE_PULSE"


@dataclass(frozen=True)
class Pulse:
    server: str  # PULSE_SERVER for clients
    env: dict[str, str]  # the environment the daemon and paplay run in

    def play(self, wav: Path, sink: str) -> subprocess.Popen[bytes]:
        """Play ``wav`` into ``sink`` (in the background)."""
        return subprocess.Popen(["paplay", f"--device={sink}", str(wav)], env=self.env)


@pytest.fixture
def pulse(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pulse]:
    if shutil.which("pulseaudio") is None or shutil.which("paplay") is None:
        if os.environ.get(REQUIRE_PULSE):
            pytest.fail(f"{REQUIRE_PULSE} is set but PulseAudio is not installed (scripts/setup installs it)")
        pytest.skip("PulseAudio is not installed (scripts/setup installs it)")
    runtime = tmp_path_factory.mktemp("pulse")
    socket = runtime / "native"
    env = {**os.environ, "PULSE_RUNTIME_PATH": str(runtime), "HOME": str(runtime)}
    env["XDG_RUNTIME_DIR"] = str(runtime)
    env["PULSE_SERVER"] = f"unix:{socket}"
    subprocess.run(
        [
            "pulseaudio",
            "--daemonize=yes",
            "-n",
            "--exit-idle-time=-1",
            "--load=module-null-sink sink_name=callsim_mic",
            "--load=module-null-sink sink_name=callsim_speaker",
            f"--load=module-native-protocol-unix auth-anonymous=1 socket={socket}",
        ],
        env={k: v for k, v in env.items() if k != "PULSE_SERVER"},
        check=True,
        capture_output=True,
    )
    for _ in range(100):  # the daemon forks before it listens
        if socket.exists():
            break
        time.sleep(0.05)
    for key in ("PULSE_SERVER", "PULSE_RUNTIME_PATH", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(key, env[key])
    import sounddevice as sd

    sd._terminate()  # PortAudio lists ALSA's devices when it starts: again, now that the server is up
    sd._initialize()
    try:
        yield Pulse(env["PULSE_SERVER"], env)
    finally:
        subprocess.run(["pulseaudio", "--kill"], env=env, capture_output=True)
        sd._terminate()
        sd._initialize()
