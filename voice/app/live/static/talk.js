// The page of `callsim talk --web`: microphone → AudioWorklet → 20 ms PCM frames over a websocket; the
// assistant's audio back over the same socket, played through the Web Audio API; the call shown as it goes.
"use strict";
const RATE = 16000;
const $ = (id) => document.getElementById(id);
const state = { ws: null, ctx: null, stream: null, playAt: 0, heardSamples: 0, latencies: [], lanes: [] };

function line(text, cls) {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  $("lines").appendChild(li);
}

function level(samples) { // RMS of 16-bit or float samples, 0..1
  let sum = 0;
  for (let i = 0; i < samples.length; i++) sum += samples[i] * samples[i];
  return Math.sqrt(sum / Math.max(1, samples.length));
}

function mark(lane, loud) { // one 20 ms column of the timeline: lane 0 you, 1 the assistant
  const t = Math.floor((state.ctx.currentTime * 1000) / 20);
  state.lanes.push([t, lane, loud]);
}

function draw() {
  const c = $("timeline"), g = c.getContext("2d");
  g.clearRect(0, 0, c.width, c.height);
  if (state.ctx) {
    const now = Math.floor((state.ctx.currentTime * 1000) / 20), span = c.width / 2; // 2 px per 20 ms
    for (const [t, lane, loud] of state.lanes) {
      if (!loud || t < now - span) continue;
      g.fillStyle = lane === 0 ? "#1565c0" : "#e65100";
      g.fillRect((t - (now - span)) * 2, lane === 0 ? 10 : 50, 2, 30);
    }
  }
  requestAnimationFrame(draw);
}

function play(buffer) { // the assistant's audio, in order, without gaps or overlaps
  const pcm = new Int16Array(buffer), f = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) f[i] = pcm[i] / 32768;
  const b = state.ctx.createBuffer(1, f.length, RATE);
  b.copyToChannel(f, 0);
  const src = state.ctx.createBufferSource();
  src.buffer = b;
  src.connect(state.ctx.destination);
  state.playAt = Math.max(state.playAt, state.ctx.currentTime);
  src.start(state.playAt);
  const loud = level(pcm) > 600, at = state.playAt;
  setTimeout(() => mark(1, loud), Math.max(0, (at - state.ctx.currentTime) * 1000));
  state.playAt += f.length / RATE;
  state.heardSamples += pcm.length;
  document.body.dataset.heardSamples = String(state.heardSamples);
}

function onEvent(msg) {
  if (msg.event === "line") line(msg.text, msg.text.startsWith("you said") ? "said" : msg.text.startsWith("assistant says") ? "assistant" : "");
  else if (msg.event === "latency") {
    state.latencies.push(msg.ms);
    $("latencies").textContent = state.latencies.map((ms) => ms + " ms").join(", ");
    line(`latency: ${msg.ms} ms`, "latency");
  } else if (msg.event === "status") $("status").textContent = msg.text;
  else if (msg.event === "done") {
    $("status").textContent = "call over";
    $("report").innerHTML = "";
    const a = document.createElement("a");
    a.href = msg.report; a.textContent = "the call's report"; a.id = "report-link";
    $("report").append(a, ` · latency p50 ${msg.latency_p50_ms ?? "–"} ms · ${msg.folder}`);
    stop();
  } else if (msg.event === "error") { $("status").textContent = "error: " + msg.text; stop(); }
}

async function call() {
  $("call").disabled = true;
  $("status").textContent = "connecting…";
  state.ctx = new AudioContext({ sampleRate: RATE });
  await state.ctx.audioWorklet.addModule("capture-worklet.js");
  state.stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: false, autoGainControl: false } });
  const mic = state.ctx.createMediaStreamSource(state.stream);
  const capture = new AudioWorkletNode(state.ctx, "capture-frames");
  mic.connect(capture);
  const ws = new WebSocket(`ws://${location.host}/call`);
  ws.binaryType = "arraybuffer";
  state.ws = ws;
  ws.onopen = () => {
    ws.send(JSON.stringify({ event: "start" }));
    $("hangup").disabled = false;
    $("status").textContent = "in call";
    capture.port.onmessage = (e) => {
      if (ws.readyState === WebSocket.OPEN) ws.send(e.data);
      mark(0, level(new Int16Array(e.data)) > 600);
    };
  };
  ws.onmessage = (e) => (typeof e.data === "string" ? onEvent(JSON.parse(e.data)) : play(e.data));
  ws.onclose = () => { $("hangup").disabled = true; };
}

function hangup() {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify({ event: "hangup" }));
  $("hangup").disabled = true;
  $("status").textContent = "hanging up…";
}

function stop() {
  if (state.stream) state.stream.getTracks().forEach((t) => t.stop());
  $("call").disabled = false;
  $("hangup").disabled = true;
}

fetch("info.json").then((r) => r.json()).then((info) => {
  $("preset").textContent = `${info.dialogue} · ${info.target} · the owner's preset: ${info.preset || "(none)"}`;
});
$("call").onclick = () => call().catch((err) => onEvent({ event: "error", text: String(err) }));
$("hangup").onclick = hangup;
requestAnimationFrame(draw);
