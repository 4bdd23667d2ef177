// The microphone, cut into 20 ms frames of 16-bit PCM at the context's rate (16 kHz: the page asks for it).
// An AudioWorklet runs on the audio thread: no frame is lost to a busy page.
class CaptureFrames extends AudioWorkletProcessor {
  constructor() {
    super();
    this.frame = new Int16Array(sampleRate / 50); // 20 ms
    this.filled = 0;
  }
  process(inputs) {
    const input = inputs[0];
    if (input && input[0]) {
      const samples = input[0];
      for (let i = 0; i < samples.length; i++) {
        const s = Math.max(-1, Math.min(1, samples[i]));
        this.frame[this.filled++] = s < 0 ? s * 32768 : s * 32767;
        if (this.filled === this.frame.length) {
          this.port.postMessage(this.frame.buffer.slice(0));
          this.filled = 0;
        }
      }
    }
    return true;
  }
}
registerProcessor("capture-frames", CaptureFrames);
