"""The phone network between caller and assistant: G.711 band limit, jitter, packet loss, noise, loudness.

:class:`LineEffects` says what the network does (everything off by default); :class:`EffectLine` wraps
any :class:`~voice.lines.line.Line` and does it, seeded per call (``seed`` and the call id), so a rerun
hears exactly the same network.  Caller → assistant, in this order: loudness (``caller_gain_db``),
background noise at ``noise_snr_db`` below the caller's speech level, the 8 kHz mu-law channel, loss,
jitter.  Assistant → caller: the 8 kHz mu-law channel, loss, jitter.

* A *packet* is 20 ms of audio.  A lost packet is a gap of silence of the same length, as a phone without
  loss concealment plays it: the timeline is kept, so a loss never makes a reply shorter or earlier.
* Jitter delays each packet (caller) or message (assistant) by a uniform random 0..``jitter_ms`` but
  never reorders: a packet is never delivered before the one sent ahead of it.  Delayed assistant audio
  still goes through the call core's playout buffer, so it is heard late or with gaps, as on a phone.
  Playout marks travel in order with the audio both ways: a bot's mark behind its delayed audio, the
  answer (:meth:`EffectLine.played`) behind the caller packets already in flight, with no delay of its own.
* The band limit is the real codec path: 16 kHz → 8 kHz (anti-aliased) → mu-law → 16 kHz.  A line whose
  protocol is an 8 kHz codec (Twilio, Telnyx, Plivo, Exotel, Genesys) is that path already
  (:class:`MulawChannel`, :class:`AlawChannel`, :class:`NarrowbandChannel`); :mod:`voice.lines.factory`
  then does not apply it a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.signal import firwin, lfilter, lfilter_zi

from voice.core.audio import FRAME_SAMPLES, Pcm, from_bytes, to_bytes
from voice.core.call import AssistantAudio, LineClosed, LineInput
from voice.core.clock import Clock, MonotonicClock
from voice.errors import ConfigError
from voice.lines.codec import alaw_decode, alaw_encode, mulaw_decode, mulaw_encode
from voice.lines.line import CallStart, Line
from voice.lines.line_meta import EffectLineMeta, EffectsMeta, EffectStats

NOMINAL_SPEECH_DBFS = -26.0  # active speech level assumed until the caller has spoken (ITU-T P.56 typical)
ACTIVE_DBFS = -45.0  # caller frames above this RMS count towards the caller's speech level

Floats = npt.NDArray[np.float64]

# --- the 8 kHz mu-law channel ------------------------------------------------------------------------

# 31-tap linear-phase low-pass at 3.7 kHz: anti-aliasing before 16 → 8 kHz and image rejection after
# 8 → 16 kHz.  Its delay is 15 samples at 16 kHz (< 1 ms) each way.
_TAPS = firwin(31, 3700.0, fs=16000.0)


def _pcm(x: Floats) -> Pcm:
    return np.clip(np.round(x), -32768, 32767).astype(np.int16)


class Downsampler:
    """16 kHz → 8 kHz, streaming: any chunk size, no edge clicks (filter state carries over)."""

    def __init__(self) -> None:
        self._zi = lfilter_zi(_TAPS, 1.0) * 0.0
        self._odd = 0  # parity of the samples consumed so far: which input sample is kept next

    def __call__(self, pcm: Pcm) -> Pcm:
        y, self._zi = lfilter(_TAPS, 1.0, np.asarray(pcm, dtype=np.float64), zi=self._zi)
        out = y[self._odd :: 2]
        self._odd = (self._odd + len(pcm)) % 2
        return _pcm(out)


class Upsampler:
    """8 kHz → 16 kHz, streaming (zero-stuffing through the same low-pass, gain 2)."""

    def __init__(self) -> None:
        self._zi = lfilter_zi(_TAPS, 1.0) * 0.0

    def __call__(self, pcm: Pcm) -> Pcm:
        z = np.zeros(2 * len(pcm), dtype=np.float64)
        z[0::2] = pcm
        y, self._zi = lfilter(2.0 * _TAPS, 1.0, z, zi=self._zi)
        return _pcm(y)


class NarrowbandChannel:
    """One direction of an 8 kHz phone channel, for 16 kHz PCM on both ends; on the wire 16-bit linear PCM
    (Exotel's, Plivo's ``audio/x-l16``).  The G.711 channels below only change the wire encoding, so every
    8 kHz carrier shares one pair of streaming filters (no clicks between 20 ms packets)."""

    bytes_per_sample = 2

    def __init__(self) -> None:
        self._down = Downsampler()
        self._up = Upsampler()

    def _compress(self, pcm8k: Pcm) -> bytes:
        return to_bytes(pcm8k)

    def _expand(self, data: bytes) -> Pcm:
        return from_bytes(data)  # an odd byte count is the caller's to refuse first

    def encode(self, pcm: Pcm) -> bytes:
        """16 kHz PCM → 8 kHz wire bytes (320 samples → 160 samples)."""
        return self._compress(self._down(pcm))

    def decode(self, data: bytes) -> Pcm:
        """8 kHz wire bytes → 16 kHz PCM."""
        return self._up(self._expand(data))

    def __call__(self, pcm: Pcm) -> Pcm:
        """What 16 kHz PCM sounds like after the channel."""
        return self.decode(self.encode(pcm))


class MulawChannel(NarrowbandChannel):
    """One direction of a G.711 mu-law 8 kHz phone channel (Twilio, Plivo, Telnyx's PCMU): 160 B a frame."""

    bytes_per_sample = 1

    def _compress(self, pcm8k: Pcm) -> bytes:
        return mulaw_encode(pcm8k)

    def _expand(self, data: bytes) -> Pcm:
        return mulaw_decode(data)


class AlawChannel(MulawChannel):
    """One direction of a G.711 A-law 8 kHz phone channel (Telnyx's PCMA)."""

    def _compress(self, pcm8k: Pcm) -> bytes:
        return alaw_encode(pcm8k)

    def _expand(self, data: bytes) -> Pcm:
        return alaw_decode(data)


# --- settings -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LineEffects:
    """What the network does to a call.  All off by default; ``mulaw_band_limit=None`` means "by target"
    (on for Twilio, whose codec it is; off for raw PCM)."""

    mulaw_band_limit: bool | None = None
    jitter_ms: float = 0.0  # extra one-way delay per packet, uniform in [0, jitter_ms], both directions
    loss_rate: float = 0.0  # probability that a 20 ms packet is lost, each direction independently
    noise_snr_db: float | None = None  # background noise this many dB below the caller's speech level
    caller_gain_db: float = 0.0  # the caller's loudness, applied before the noise

    def __post_init__(self) -> None:
        problems = []
        if not 0.0 <= self.jitter_ms <= 2000.0:
            problems.append(f"jitter_ms={self.jitter_ms} is not in 0..2000")
        if not 0.0 <= self.loss_rate < 1.0:
            problems.append(f"loss_rate={self.loss_rate} is not in [0, 1)")
        if self.noise_snr_db is not None and not -20.0 <= self.noise_snr_db <= 100.0:
            problems.append(f"noise_snr_db={self.noise_snr_db} is not in -20..100")
        if not -60.0 <= self.caller_gain_db <= 40.0:
            problems.append(f"caller_gain_db={self.caller_gain_db} is not in -60..40")
        if problems:
            raise ConfigError("invalid line effects: " + "; ".join(problems))

    @property
    def alters_audio(self) -> bool:
        """Whether a line with these effects differs from the bare line (band limit counted if True)."""
        return bool(
            self.mulaw_band_limit
            or self.jitter_ms
            or self.loss_rate
            or self.noise_snr_db is not None
            or self.caller_gain_db
        )

    def describe(self) -> EffectsMeta:
        """The settings as plain JSON values, for the event log."""
        return {"mulaw_band_limit": self.mulaw_band_limit, "jitter_ms": self.jitter_ms,
                "loss_rate": self.loss_rate, "noise_snr_db": self.noise_snr_db,
                "caller_gain_db": self.caller_gain_db}  # fmt: skip


def call_seed(seed: int, call_id: str) -> int:
    """One call's seed: the run's seed and the call id, so a call hears the same network on every rerun."""
    digest = hashlib.sha256(f"{seed}:{call_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# --- noise ----------------------------------------------------------------------------------------------

# Pink (1/f) noise from white noise: Julius O. Smith's 3-pole approximation; background noise on a phone is
# closer to pink than to white.
_PINK_B = np.array([0.049922035, -0.095993537, 0.050612699, -0.004408786])
_PINK_A = np.array([1.0, -2.494956002, 2.017265875, -0.522189400])


class NoiseSource:
    """Seeded stationary pink noise at a level that follows the caller's active speech level."""

    def __init__(self, snr_db: float, rng: np.random.Generator) -> None:
        self.snr_db = snr_db
        self._rng = rng
        self._zi = lfilter_zi(_PINK_B, _PINK_A) * 0.0
        warm = lfilter(_PINK_B, _PINK_A, rng.standard_normal(16000 * 5))
        self._unit = 1.0 / float(np.sqrt(np.mean(warm[16000:] ** 2)))  # scale to unit RMS
        self._power_sum = 0.0
        self._active_frames = 0

    @property
    def speech_dbfs(self) -> float:
        """The caller's active speech level so far (nominal until the caller has spoken)."""
        if not self._active_frames:
            return NOMINAL_SPEECH_DBFS
        return 10.0 * float(np.log10(self._power_sum / self._active_frames / 32768.0**2))

    def mix(self, pcm: Pcm) -> Pcm:
        x = np.asarray(pcm, dtype=np.float64)
        power = float(np.mean(x * x)) if len(x) else 0.0
        if power > 0 and 10.0 * np.log10(power / 32768.0**2) >= ACTIVE_DBFS:
            self._power_sum += power
            self._active_frames += 1
        noise_rms = 32768.0 * 10.0 ** ((self.speech_dbfs - self.snr_db) / 20.0)
        white = self._rng.standard_normal(len(x))
        pink, self._zi = lfilter(_PINK_B, _PINK_A, white, zi=self._zi)
        return _pcm(x + pink * self._unit * noise_rms)


# --- the wrapper ---------------------------------------------------------------------------------------


def _lose(pcm: Pcm, rng: np.random.Generator, rate: float) -> tuple[Pcm, int]:
    """Silence each 20 ms packet of ``pcm`` with probability ``rate``; return the audio and packets lost."""
    n = -(-len(pcm) // FRAME_SAMPLES)
    lost = rng.random(n) < rate
    if not lost.any():
        return pcm, 0
    out = np.array(pcm, dtype=np.int16, copy=True)
    for i in np.flatnonzero(lost):
        out[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES] = 0
    return out, int(lost.sum())


class EffectLine:
    """Any line, through the network described by ``effects``.  Implements the Line protocol."""

    def __init__(self, inner: Line, effects: LineEffects, *, seed: int = 0, clock: Clock | None = None):
        self.inner = inner
        self.effects = effects
        self.seed = seed
        self._clock = clock or MonotonicClock()
        self._gain = 10.0 ** (effects.caller_gain_db / 20.0)
        self._up_channel = MulawChannel() if effects.mulaw_band_limit else None
        self._down_channel = MulawChannel() if effects.mulaw_band_limit else None
        self._rng_up = self._rng_down = np.random.default_rng(seed)
        self._noise: NoiseSource | None = None
        self._jitter_ns = round(effects.jitter_ms * 1e6)
        self._outbox: asyncio.Queue[tuple[int, Pcm | tuple[str, ...]]] = asyncio.Queue()
        self._inbox: asyncio.Queue[tuple[int, LineInput]] = asyncio.Queue()
        self._last_up_due = self._last_down_due = 0
        self._tasks: list[asyncio.Task[None]] = []
        self.stats: EffectStats = {
            "caller_packets": 0,
            "caller_packets_lost": 0,
            "assistant_packets": 0,
            "assistant_packets_lost": 0,
            "caller_samples_clipped": 0,
            "max_delay_ms": 0.0,
        }

    def describe(self) -> EffectLineMeta:
        """The effects, the seed and what they did so far (for ``call_start``/``meta`` in the event log)."""
        stats = self.stats.copy()
        if self._noise is not None:
            stats["caller_speech_dbfs"] = round(self._noise.speech_dbfs, 1)
        return {**self.effects.describe(), "seed": self.seed, "stats": stats}

    async def open(self, start: CallStart) -> None:
        s = call_seed(self.seed, start.call_id)
        self._rng_up, self._rng_down, noise_rng = (np.random.default_rng([s, k]) for k in range(3))
        if self.effects.noise_snr_db is not None:
            self._noise = NoiseSource(self.effects.noise_snr_db, noise_rng)
        await self.inner.open(start)
        if self._jitter_ns:
            self._tasks = [asyncio.create_task(self._sender()), asyncio.create_task(self._pump())]

    # --- caller → assistant --------------------------------------------------------------------------

    async def send(self, pcm: Pcm) -> None:
        x = np.asarray(pcm, dtype=np.int16)
        if self._gain != 1.0:
            scaled = x.astype(np.float64) * self._gain
            self.stats["caller_samples_clipped"] += int(np.count_nonzero(np.abs(scaled) > 32767))
            x = _pcm(scaled)
        if self._noise is not None:
            x = self._noise.mix(x)
        if self._up_channel is not None:
            x = self._up_channel(x)
        self.stats["caller_packets"] += -(-len(x) // FRAME_SAMPLES)
        if self.effects.loss_rate:
            x, lost = _lose(x, self._rng_up, self.effects.loss_rate)
            self.stats["caller_packets_lost"] += lost
        if not self._jitter_ns:
            await self.inner.send(x)
            return
        due = max(self._last_up_due, self._clock.now_ns() + self._delay_ns(self._rng_up))
        self._last_up_due = due
        self._outbox.put_nowait((due, x))

    async def played(self, marks: tuple[str, ...]) -> None:
        """Answer marks behind the caller packets still in flight (no random delay: the rng stays as is)."""
        if not self._jitter_ns:
            await self.inner.played(marks)
            return
        self._last_up_due = max(self._last_up_due, self._clock.now_ns())
        self._outbox.put_nowait((self._last_up_due, marks))

    async def _sender(self) -> None:
        while True:
            due, item = await self._outbox.get()
            await self._clock.sleep_until(due)
            if isinstance(item, tuple):
                await self.inner.played(item)
            else:
                await self.inner.send(item)
            self._outbox.task_done()

    def _delay_ns(self, rng: np.random.Generator) -> int:
        delay = int(rng.integers(0, self._jitter_ns + 1))
        self.stats["max_delay_ms"] = max(self.stats["max_delay_ms"], delay / 1e6)
        return delay

    # --- assistant → caller --------------------------------------------------------------------------

    def _downlink(self, item: LineInput) -> LineInput:
        if not isinstance(item, AssistantAudio):
            return item
        pcm = item.pcm
        if self._down_channel is not None:
            pcm = self._down_channel(pcm)
        self.stats["assistant_packets"] += -(-len(pcm) // FRAME_SAMPLES)
        if self.effects.loss_rate:
            pcm, lost = _lose(pcm, self._rng_down, self.effects.loss_rate)
            self.stats["assistant_packets_lost"] += lost
        return AssistantAudio(pcm)

    async def _pump(self) -> None:
        while True:
            item = self._downlink(await self.inner.recv())
            due = max(self._last_down_due, self._clock.now_ns() + self._delay_ns(self._rng_down))
            self._last_down_due = due
            self._inbox.put_nowait((due, item))
            if isinstance(item, LineClosed):
                return

    async def recv(self) -> LineInput:
        if not self._jitter_ns:
            item = self._downlink(await self.inner.recv())
        else:
            due, item = await self._inbox.get()
            await self._clock.sleep_until(due)
        return item

    # --- the end -------------------------------------------------------------------------------------

    async def hangup(self, reason: str) -> None:
        """Hang up once the caller audio still in flight has gone out (at most ``jitter_ms`` late)."""
        if self._tasks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._outbox.join(), self.effects.jitter_ms / 1000.0 + 1.0)
        await self.inner.hangup(reason)

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []
        await self.inner.close()
