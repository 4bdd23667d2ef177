import numpy as np

from voice.lines import codec


def test_mulaw_round_trip_error_is_bounded_by_the_codec_step():
    x = (np.sin(np.arange(8000) / 7.0) * 30000).astype(np.int16)
    y = codec.mulaw_decode(codec.mulaw_encode(x))
    err = np.abs(y.astype(np.int32) - x.astype(np.int32))
    # G.711 mu-law: the quantisation step grows with magnitude, up to 1024 in the top segment
    assert err.max() <= 1024
    small = np.abs(x) < 256
    assert err[small].max() <= 16
    assert len(codec.mulaw_encode(x)) == len(x)
