"""Put on a test peer's ``PYTHONPATH``: its WebRTC (aiortc) offers ICE candidates on 127.0.0.1 only.

The peer's code stays as its authors wrote it (pipecat's runner and a bot as pipecat's examples write
one); only the machine's rule is applied to its process: media on loopback, never another address.
"""

from voice.lines.webrtc_ice import only_loopback_everywhere

only_loopback_everywhere()
