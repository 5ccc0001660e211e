// The mixvox page: no build step, no CDN. Audio starts on the first streamed chunk:
// mp3 through Media Source Extensions, pcm through Web Audio; other formats play when complete.
"use strict";
const $ = (id) => document.getElementById(id);
const state = { bytes: 0, firstChunkMs: null, done: false, error: null, playing: false };
window.mixvoxState = state;

function headers(json) {
  const h = {};
  if (json) h["Content-Type"] = "application/json";
  const key = $("key").value.trim();
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

function setStatus(text, isError) {
  const el = $("status");
  el.textContent = text;
  el.className = isError ? "error" : "";
}

async function errorText(resp) {
  try { const j = await resp.json(); return j.error && j.error.message || resp.statusText; }
  catch (e) { return resp.statusText; }
}

async function loadVoices() {
  const resp = await fetch("/v1/audio/voices", { headers: headers(false) });
  if (resp.status === 503) { setTimeout(loadVoices, 1000); setStatus("loading the engine…"); return; }
  if (!resp.ok) return;
  const data = await resp.json();
  const sel = $("voice");
  sel.innerHTML = "";
  for (const v of data.voices) {
    if (v.kind === "pattern") continue;
    const o = document.createElement("option");
    o.value = v.id; o.textContent = v.kind === "openai-alias" ? v.id + " (default)" : v.id;
    sel.appendChild(o);
  }
  setStatus("ready (" + data.engine + ")");
}

function showAnalysis(utt) {
  const box = $("analysis");
  box.innerHTML = "";
  for (const sent of utt.sentences) {
    for (const span of sent.spans) {
      const s = document.createElement("span");
      s.className = "span lang-" + span.lang;
      s.title = span.lang + ": " + span.spoken;
      for (const w of span.words) {
        const wd = document.createElement("span");
        wd.className = "word";
        wd.textContent = w.text || w.spoken;
        const r = document.createElement("small");
        r.textContent = (w.phonemes && w.phonemes.length) ? w.phonemes.join(" ") : (w.spoken !== w.text ? w.spoken : "\u00a0");
        wd.appendChild(r);
        s.appendChild(wd);
      }
      box.appendChild(s);
    }
  }
}

function wavFromPcm(chunks, rate) {
  let n = 0; for (const c of chunks) n += c.length;
  const buf = new ArrayBuffer(44 + n), v = new DataView(buf);
  const w = (o, s) => { for (let i = 0; i < s.length; i++) v.setUint8(o + i, s.charCodeAt(i)); };
  w(0, "RIFF"); v.setUint32(4, 36 + n, true); w(8, "WAVEfmt "); v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); v.setUint16(22, 1, true); v.setUint32(24, rate, true);
  v.setUint32(28, rate * 2, true); v.setUint16(32, 2, true); v.setUint16(34, 16, true);
  w(36, "data"); v.setUint32(40, n, true);
  let o = 44; const u8 = new Uint8Array(buf);
  for (const c of chunks) { u8.set(c, o); o += c.length; }
  return new Blob([buf], { type: "audio/wav" });
}

async function playMse(resp, player, t0) {
  const ms = new MediaSource();
  player.src = URL.createObjectURL(ms);
  await new Promise((res) => ms.addEventListener("sourceopen", res, { once: true }));
  const sb = ms.addSourceBuffer("audio/mpeg");
  const reader = resp.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    state.bytes += value.length;
    if (state.firstChunkMs === null) state.firstChunkMs = performance.now() - t0;
    if (sb.updating) await new Promise((res) => sb.addEventListener("updateend", res, { once: true }));
    sb.appendBuffer(value);
    await new Promise((res) => sb.addEventListener("updateend", res, { once: true }));
    if (!state.playing) { state.playing = true; player.play().catch(() => {}); }
    setStatus("streaming… " + state.bytes + " bytes");
  }
  if (sb.updating) await new Promise((res) => sb.addEventListener("updateend", res, { once: true }));
  ms.endOfStream();
}

async function playPcm(resp, player, t0) {
  const rate = 24000;
  const ctx = new AudioContext({ sampleRate: rate });
  let at = ctx.currentTime + 0.05, carry = null;
  const chunks = [];
  const reader = resp.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    state.bytes += value.length;
    if (state.firstChunkMs === null) state.firstChunkMs = performance.now() - t0;
    chunks.push(value);
    let bytes = value;
    if (carry) { const m = new Uint8Array(carry.length + bytes.length); m.set(carry); m.set(bytes, carry.length); bytes = m; carry = null; }
    if (bytes.length % 2) { carry = bytes.slice(-1); bytes = bytes.slice(0, -1); }
    const pcm = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
    if (!pcm.length) continue;
    const ab = ctx.createBuffer(1, pcm.length, rate), ch = ab.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) ch[i] = pcm[i] / 32768;
    const src = ctx.createBufferSource(); src.buffer = ab; src.connect(ctx.destination);
    at = Math.max(at, ctx.currentTime); src.start(at); at += ab.duration;
    state.playing = true;
    setStatus("streaming… " + state.bytes + " bytes");
  }
  player.src = URL.createObjectURL(wavFromPcm(chunks, rate));
}

async function playWhole(resp, player, t0) {
  const parts = [];
  const reader = resp.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    state.bytes += value.length;
    if (state.firstChunkMs === null) state.firstChunkMs = performance.now() - t0;
    parts.push(value);
    setStatus("receiving… " + state.bytes + " bytes");
  }
  player.src = URL.createObjectURL(new Blob(parts, { type: resp.headers.get("content-type") || "" }));
  state.playing = true;
  player.play().catch(() => {});
}

async function speak() {
  const text = $("text").value;
  if (!text.trim()) { setStatus("type something first", true); return; }
  Object.assign(state, { bytes: 0, firstChunkMs: null, done: false, error: null, playing: false });
  const fmt = $("format").value, voice = $("voice").value, player = $("player");
  $("speak").disabled = true;
  try {
    fetch("/v1/route", { method: "POST", headers: headers(true), body: JSON.stringify({ input: text }) })
      .then((r) => r.ok ? r.json() : null).then((u) => { if (u) showAnalysis(u); }).catch(() => {});
    const t0 = performance.now();
    const resp = await fetch("/v1/audio/speech", {
      method: "POST", headers: headers(true),
      body: JSON.stringify({ model: "mixvox", input: text, voice: voice, response_format: fmt }),
    });
    if (!resp.ok) throw new Error(await errorText(resp));
    setStatus("streaming…");
    if (fmt === "mp3" && window.MediaSource && MediaSource.isTypeSupported("audio/mpeg")) await playMse(resp, player, t0);
    else if (fmt === "pcm") await playPcm(resp, player, t0);
    else await playWhole(resp, player, t0);
    state.done = true;
    setStatus("done: " + state.bytes + " bytes, first audio after " + Math.round(state.firstChunkMs) + " ms");
  } catch (e) {
    state.error = String(e.message || e);
    setStatus("error: " + state.error, true);
  } finally {
    $("speak").disabled = false;
  }
}

$("speak").addEventListener("click", speak);
loadVoices();
