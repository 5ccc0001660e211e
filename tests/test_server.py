"""``mixvox serve`` end to end: the real server process, the official openai client, httpx."""

from __future__ import annotations

import base64
import io
import json
import os
import threading
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
openai = pytest.importorskip("openai")
sf = pytest.importorskip("soundfile")

from server_util import TINY, Server  # noqa: E402

TEXT = "今天的 meeting 改到 3:30 PM，RTX 4070 跑 TensorRT 只要 22ms。"
LONG = " ".join(f"第{i}句话说的是 sentence number {i} of a long text." for i in range(60))
KEY = "test-key-0123456789abcdef"


def decode(data: bytes, fmt: str) -> tuple[np.ndarray, int]:
    if fmt == "pcm":
        return np.frombuffer(data, "<i2").astype(np.float32) / 32768.0, 24000
    with sf.SoundFile(io.BytesIO(data)) as f:
        return f.read(dtype="float32"), f.samplerate


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("srv")
    lex = tmp / "lex"
    lex.mkdir()
    (lex / "brand.toml").write_text('[en]\nmixvox = { spoken = "mix vox" }\n', "utf-8")
    conf = tmp / "config.toml"
    conf.write_text('[voices]\nnarrator = "f3"\n', "utf-8")
    with Server(
        tmp,
        "--engine",
        "espeak",
        "--max-input-chars",
        "5000",
        "--lexicon-dir",
        str(lex),
        env={"MIXVOX_CONFIG": str(conf)},
    ) as s:
        yield s


def client(s: Server, key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(base_url=s.url + "/v1", api_key=key, max_retries=0)


@pytest.mark.parametrize("fmt", ["wav", "mp3", "opus", "flac", "pcm"])
def test_openai_client_every_format(srv, fmt):
    resp = client(srv).audio.speech.create(
        model="tts-1", voice="alloy", input=TEXT, response_format=fmt
    )
    audio, rate = decode(resp.content, fmt)
    assert rate == (24000 if fmt in ("pcm", "opus") else 22050)
    assert len(audio) / rate > 1.0
    assert float(np.sqrt(np.mean(audio**2))) > 0.01  # speech, not silence


def test_openai_streaming_response_streams(srv):
    with client(srv).audio.speech.with_streaming_response.create(
        model="tts-1", voice="f2", input=LONG[:600], response_format="pcm"
    ) as resp:
        assert resp.headers["content-type"] == "audio/pcm"
        chunks = list(resp.iter_bytes())
    assert len(chunks) > 1  # pieces arrive as they are made, not as one body
    audio, rate = decode(b"".join(chunks), "pcm")
    assert len(audio) / rate > 5


def test_wav_streaming_header_and_first_bytes(srv):
    with httpx.stream(
        "POST",
        srv.url + "/v1/audio/speech",
        json={"input": LONG[:1500], "response_format": "wav"},
        timeout=60,
    ) as r:
        assert r.status_code == 200 and r.headers["content-type"] == "audio/wav"
        assert "content-length" not in r.headers  # chunked
        it = r.iter_bytes()
        first = next(it)
        rest = b"".join(it)
    assert first[:4] == b"RIFF" and first[4:8] == b"\xff\xff\xff\xff"
    audio, rate = decode(first + rest, "wav")
    assert len(audio) / rate > 10


def test_small_endpoints(srv):
    h = httpx.get(srv.url + "/health").json()
    assert h["status"] == "ok" and h["engine"] == "espeak" and h["queue_depth"] == 0
    models = client(srv).models.list()
    assert "tts-1" in [m.id for m in models.data]
    voices = httpx.get(srv.url + "/v1/audio/voices").json()["voices"]
    ids = {v["id"] for v in voices}
    assert {"default", "alloy", "f1", "narrator"} <= ids
    r = httpx.post(srv.url + "/v1/route", json={"input": "3个GPU and 你好"}).json()
    langs = [sp["lang"] for s in r["sentences"] for sp in s["spans"]]
    assert "zh" in langs and "en" in langs
    assert "三" in r["spoken"] and r["chunks"]
    page = httpx.get(srv.url + "/")
    assert page.status_code == 200 and "<textarea" in page.text
    assert "MediaSource" in httpx.get(srv.url + "/app.js").text
    m = httpx.get(srv.url + "/metrics").text
    assert "mixvox_requests_total" in m and "mixvox_first_byte_seconds_bucket" in m
    assert "mixvox_queue_depth 0" in m


def test_named_lexicon_changes_the_reading(srv):
    body = {"input": "mixvox"}
    plain = httpx.post(srv.url + "/v1/route", json=body).json()
    named = httpx.post(srv.url + "/v1/route", json={**body, "lexicon": ["brand"]}).json()
    assert "mix vox" not in json.dumps(plain) and "mix vox" in json.dumps(named)
    bad = httpx.post(srv.url + "/v1/route", json={**body, "lexicon": ["../etc/passwd"]})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "unknown_lexicon"


def test_captioned_segments(srv):
    text = "第一句话在这里。" + "This is the second sentence, in English. " * 4 + "最后一句。"
    r = httpx.post(
        srv.url + "/v1/audio/captioned",
        json={"input": text, "response_format": "mp3"},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    d = r.json()
    audio, rate = decode(base64.b64decode(d["audio"]), "mp3")
    segs = d["segments"]
    assert len(segs) >= 2
    assert segs[0]["start"] == 0 and segs[-1]["end"] == pytest.approx(d["duration"], abs=0.01)
    for a, b in zip(segs, segs[1:], strict=False):
        assert a["end"] <= b["start"] + 1e-6 and a["input_end"] <= b["input_start"]
    for s in segs:
        assert s["start"] < s["end"]
        assert text[s["input_start"] : s["input_end"]].split() == s["text"].split()
    assert abs(len(audio) / rate - d["duration"]) < 0.2


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"input": "hi", "bogus": 1}, 422, "invalid_request"),
        ({"input": ""}, 422, "invalid_request"),
        ({"input": "hi", "response_format": "aac"}, 422, "invalid_request"),
        ({"input": "hi", "speed": 9}, 422, "invalid_request"),
        ({"input": "x" * 5001}, 413, "input_too_long"),
        ({"input": "hi", "voice": "../../etc/passwd"}, 400, "unknown_voice"),
        ({"input": "hi", "voice": "@/etc/passwd"}, 400, "unknown_voice"),
        ({"input": "hi", "voice": "seed:3"}, 400, "unknown_voice"),  # espeak lists its voices
        ({"input": "hi", "model": "kokoro"}, 400, "model_not_found"),
        ({"input": "。。。"}, 400, "nothing_to_speak"),
    ],
)
def test_bad_requests_are_json_errors(srv, body, status, code):
    r = httpx.post(srv.url + "/v1/audio/speech", json=body, timeout=30)
    assert r.status_code == status, r.text
    err = r.json()["error"]
    assert err["code"] == code and err["message"] and err["type"]
    assert "Traceback" not in r.text


def test_body_limits_and_not_found(srv):
    big = json.dumps({"input": "a" * 70000})
    r = httpx.post(
        srv.url + "/v1/audio/speech",
        content=big,
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413 and r.json()["error"]["code"] == "body_too_large"
    r = httpx.post(
        srv.url + "/v1/audio/speech",
        content=b"{not json",
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422 and "error" in r.json()
    r = httpx.get(srv.url + "/v1/nothing")
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"
    with pytest.raises(openai.UnprocessableEntityError):
        client(srv).audio.speech.create(model="tts-1", voice="alloy", input="")


def test_disconnect_cancels_synthesis(srv):
    before = srv.log_records()
    text = LONG * 2
    with httpx.stream(
        "POST",
        srv.url + "/v1/audio/speech",
        json={"input": text[:4900], "response_format": "pcm"},
        timeout=60,
    ) as r:
        assert r.status_code == 200
        next(r.iter_bytes())
    # closed after the first bytes; the server must notice and stop that synthesis
    t_end = time.monotonic() + 30
    while time.monotonic() < t_end:
        m = httpx.get(srv.url + "/metrics").text
        if "mixvox_cancelled_total 1" in m or "mixvox_cancelled_total 2" in m:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the server did not cancel the abandoned request")
    new = [rec for rec in srv.log_records() if rec not in before and rec.get("chars", 0) >= 4000]
    assert new and new[-1]["result"] == "cancelled"
    # The full text is minutes of audio; far less was made before it stopped.
    assert new[-1]["audio_s"] < 60
    assert httpx.get(srv.url + "/health").json()["queue_depth"] == 0


def test_named_voice_from_the_config(srv):
    def pcm(voice: str) -> bytes:
        body = {"input": "hello world", "voice": voice, "response_format": "pcm"}
        r = httpx.post(srv.url + "/v1/audio/speech", json=body, timeout=30)
        assert r.status_code == 200
        return r.content

    # espeak's variants vary a little from run to run (breath noise), their timing does not
    assert len(pcm("narrator")) == len(pcm("f3")) != len(pcm("default"))


def test_log_lines_carry_no_text_and_no_key(srv):
    httpx.post(srv.url + "/v1/audio/speech", json={"input": "secret words 秘密"}, timeout=30)
    lines = "\n".join(srv.lines)
    assert "secret words" not in lines and "秘密" not in lines
    recs = [r for r in srv.log_records() if r["path"] == "/v1/audio/speech"]
    assert recs and all("status" in r and "ms" in r for r in recs)


# ---------------------------------------------------------------------------------------------
# Servers with their own settings
# ---------------------------------------------------------------------------------------------


def test_api_keys_from_env_and_file(tmp_path):
    with Server(tmp_path, "--engine", "espeak", env={"MIXVOX_API_KEYS": KEY}) as s:
        url = s.url + "/v1/audio/speech"
        assert httpx.post(url, json={"input": "hi"}).status_code == 401
        r = httpx.post(url, json={"input": "hi"}, headers={"Authorization": "Bearer wrong"})
        assert r.status_code == 401 and r.json()["error"]["code"] == "invalid_api_key"
        with pytest.raises(openai.AuthenticationError):
            client(s, "nope-nope-nope-nope").audio.speech.create(
                model="tts-1", voice="alloy", input="hi"
            )
        ok = client(s, KEY).audio.speech.create(
            model="tts-1", voice="alloy", input="hi", response_format="wav"
        )
        assert len(decode(ok.content, "wav")[0]) > 1000
        assert httpx.get(s.url + "/metrics").status_code == 401
        assert httpx.get(s.url + "/health").status_code == 200  # liveness stays open
        assert KEY not in "\n".join(s.lines)
    keyfile = tmp_path / "keys"
    keyfile.write_text(f"# keys\n{KEY}\n", "utf-8")
    os.chmod(keyfile, 0o644)
    s = Server(tmp_path, "--engine", "espeak", "--api-key-file", str(keyfile), wait_ready=False)
    assert s.proc.wait(60) == 1
    assert any("chmod 600" in line for line in s.lines)
    os.chmod(keyfile, 0o600)
    with Server(tmp_path, "--engine", "espeak", "--api-key-file", str(keyfile)) as s:
        r = httpx.get(s.url + "/v1/models", headers={"Authorization": f"Bearer {KEY}"})
        assert r.status_code == 200


def test_non_loopback_without_keys_refuses_to_start(tmp_path):
    s = Server(tmp_path, "--engine", "espeak", "--host", "0.0.0.0", wait_ready=False)
    assert s.proc.wait(60) == 1
    out = "\n".join(s.lines)
    assert "refusing to listen on 0.0.0.0 without API keys" in out and "serving on" not in out


def test_full_queue_answers_429_with_retry_after(tmp_path):
    with Server(tmp_path, "--engine", "espeak", "--max-queue", "1", "--max-per-key", "50") as s:
        results: list[httpx.Response] = []

        def hit() -> None:
            with httpx.Client(timeout=120) as c:
                results.append(
                    c.post(
                        s.url + "/v1/audio/speech",
                        json={"input": LONG[:2500], "response_format": "pcm"},
                    )
                )

        threads = [threading.Thread(target=hit) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = sorted(r.status_code for r in results)
        assert 200 in codes and 429 in codes and set(codes) <= {200, 429}
        refused = [r for r in results if r.status_code == 429]
        assert all(int(r.headers["retry-after"]) >= 1 for r in refused)
        assert refused[0].json()["error"]["code"] == "queue_full"


def test_per_key_concurrency_limit(tmp_path):
    env = {"MIXVOX_API_KEYS": f"{KEY},other-key-0123456789abcdef"}
    with Server(tmp_path, "--engine", "espeak", "--max-per-key", "1", env=env) as s:
        auth = {"Authorization": f"Bearer {KEY}"}
        url = s.url + "/v1/audio/speech"
        with httpx.stream("POST", url, json={"input": LONG[:3000]}, headers=auth, timeout=60) as r:
            assert r.status_code == 200
            second = httpx.post(url, json={"input": "hi"}, headers=auth, timeout=30)
            assert second.status_code == 429
            assert second.json()["error"]["code"] == "too_many_requests"
            other = {"Authorization": "Bearer other-key-0123456789abcdef"}
            assert (
                httpx.post(url, json={"input": "hi"}, headers=other, timeout=60).status_code == 200
            )
            r.read()

        def keys_logged() -> set:
            recs = [
                x for x in s.log_records() if x["path"] == "/v1/audio/speech" and x["status"] != 401
            ]
            return {x.get("key") for x in recs}

        # The streamed request's access-log line is written when its body ends and reaches
        # us through the server's stderr reader thread: wait for it instead of racing it.
        deadline = time.monotonic() + 15
        while keys_logged() != {"key1", "key2"} and time.monotonic() < deadline:
            time.sleep(0.1)
        assert keys_logged() == {"key1", "key2"}


def test_ssml_limits(srv):
    deep = "<speak>" + "<p>" * 40 + "hi" + "</p>" * 40 + "</speak>"
    r = httpx.post(srv.url + "/v1/audio/speech", json={"input": deep, "ssml": True})
    assert r.status_code == 400 and r.json()["error"]["code"] == "ssml_too_deep"
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><speak>&a;</speak>'
    r = httpx.post(srv.url + "/v1/audio/speech", json={"input": bomb, "ssml": True})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_ssml"
    r = httpx.post(srv.url + "/v1/audio/speech", json={"input": "hi", "ssml": True})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_ssml"
    import importlib.util

    r = httpx.post(
        srv.url + "/v1/audio/speech", json={"input": "<speak>你好 world</speak>"}, timeout=60
    )
    if importlib.util.find_spec("mixvox.ssml") is None:
        assert r.status_code == 400 and r.json()["error"]["code"] == "ssml_unsupported"
    else:
        assert r.status_code == 200 and len(r.content) > 1000


def test_sigterm_drains_in_flight_requests(tmp_path):
    s = Server(tmp_path, "--engine", "espeak")
    got: dict[str, object] = {}
    started = threading.Event()

    def run() -> None:
        with httpx.stream(
            "POST",
            s.url + "/v1/audio/speech",
            json={"input": LONG[:2000], "response_format": "pcm"},
            timeout=120,
        ) as r:
            parts = []
            for chunk in r.iter_bytes():
                parts.append(chunk)
                started.set()
            got["data"] = b"".join(parts)

    t = threading.Thread(target=run)
    t.start()
    assert started.wait(60)
    rc = s.stop()  # SIGTERM while the response is still streaming
    t.join(60)
    # uvicorn re-raises the signal after its graceful shutdown: killed by SIGTERM, but only
    # after "Application shutdown complete" (the engine closed after the drain)
    assert rc in (0, -15)
    assert any("Application shutdown complete" in line for line in s.lines)
    audio, rate = decode(got["data"], "pcm")  # type: ignore[arg-type]
    rec = [r for r in s.log_records() if r["path"] == "/v1/audio/speech"][-1]
    assert rec["result"] == "done"
    assert len(audio) / rate == pytest.approx(rec["audio_s"], abs=0.05)  # the whole answer
    with pytest.raises(httpx.TransportError):
        httpx.get(s.url + "/health", timeout=2)


def test_request_timeout_ends_a_long_synthesis(tmp_path):
    with Server(tmp_path, "--engine", "espeak", "--request-timeout", "2") as s:
        r = httpx.post(
            s.url + "/v1/audio/speech",
            json={"input": LONG[:4000], "response_format": "pcm"},
            timeout=60,
        )
        # the access line is written once the handler has returned, which can be a moment
        # after the client has read the last byte
        deadline = time.monotonic() + 10
        while True:
            recs = [x for x in s.log_records() if x["path"] == "/v1/audio/speech"]
            if (recs and "result" in recs[-1]) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        rec = recs[-1]
        if r.status_code == 504:  # still waiting for its first audio at the deadline
            assert r.json()["error"]["code"] == "timeout"
        else:
            assert r.status_code == 200 and rec["result"] == "timeout"
            assert len(r.content) / 2 / 24000 < 200  # far less than the whole text


def test_engine_that_cannot_load_stops_the_server(tmp_path):
    s = Server(tmp_path, "--model-dir", str(tmp_path / "no-such-model"), wait_ready=False)
    assert s.proc.wait(120) == 1
    out = "\n".join(s.lines)
    assert "the engine failed to load" in out and "no-such-model" in out
    assert "Traceback" not in out


@pytest.mark.skipif(not TINY.is_dir(), reason="shared fixtures missing")
def test_chattts_tiny_checkpoint(tmp_path):
    with Server(
        tmp_path, "--model-dir", str(TINY), "--max-frames", "24", "--temperature", "0"
    ) as s:
        h = httpx.get(s.url + "/health").json()
        assert h["engine"] != "espeak" and h["sample_rate"] == 24000
        if s.early is not None:  # a request while the engine was still loading
            assert s.early.status_code == 503 and s.early.headers["retry-after"] == "5"
            assert s.early.json()["error"]["code"] == "loading"
        voices = {v["id"] for v in httpx.get(s.url + "/v1/audio/voices").json()["voices"]}
        assert "seed:N" in voices
        c = client(s)
        for fmt in ("wav", "opus"):
            resp = c.audio.speech.create(
                model="mixvox", voice="seed:7", input="你好 world", response_format=fmt
            )
            audio, rate = decode(resp.content, fmt)
            assert rate == 24000 and len(audio) > 2000
        r = httpx.post(
            s.url + "/v1/audio/captioned",
            json={"input": "你好。Hello there.", "response_format": "wav", "seed": 3},
            timeout=120,
        )
        assert r.status_code == 200 and r.json()["segments"]
