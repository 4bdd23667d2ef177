"""The speech detector: an energy gate whose floor is an RMS level, bounds exact to the loud samples."""

import numpy as np

from voice.core.audio import rms_dbfs
from voice.core.detector import EnergyDetector


def test_energy_detector_floor_is_the_rms_level_in_dbfs():
    det = EnergyDetector(floor_dbfs=-50.0)
    quiet, loud = (np.full(320, v, dtype=np.int16) for v in (90, 120))  # -51.2 and -48.7 dBFS
    assert rms_dbfs(quiet) < -50 < rms_dbfs(loud)
    assert det.active(quiet) is None and det.active(np.zeros(320, np.int16)) is None
    assert det.active(loud) == (0, 320)  # below the sample threshold: the whole frame
    spike = np.zeros(320, dtype=np.int16)
    spike[100:140] = 3000
    assert det.active(spike) == (100, 140)
    assert det.active(np.zeros(0, np.int16)) is None
