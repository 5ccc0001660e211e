"""Bad input, end to end: the router, the frontends, the espeak engine and the CLI.

What a demanding user throws at mixvox: empty, whitespace-only and punctuation-only text,
control characters and terminal escapes, lone surrogates, bidi marks, zero-width joiners,
combining marks, full-width forms, emoji sequences, NUL, invalid UTF-8 in a batch script or
on stdin, a 10,000-digit number and a 1 MB line. Each gets a clear result or a clear error,
never a traceback or a hang.

Exit status of the CLI (``mixvox --help``): 0 done, 1 user error (including text with nothing
to speak and invalid UTF-8), 2 usage error.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import tracemalloc
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_pipeline_props import FRAGMENTS, check_utterance

import mixvox
from mixvox.cli import main
from mixvox.pipeline import Router

_SCRIPT = Path(sys.executable).with_name("mixvox")
#: The installed ``mixvox`` command next to this interpreter (the venv's), else the same CLI
#: through the interpreter.
MIXVOX: list[str] = (
    [str(_SCRIPT)]
    if _SCRIPT.exists()
    else [sys.executable, "-c", "import sys; from mixvox.cli import main; sys.exit(main())"]
)
#: Generous wall-clock limit for subprocesses: a hang guard, not a timing assertion.
HANG_GUARD_S = 300

ROUTER = Router()


@pytest.fixture(scope="module")
def tts() -> Iterator[mixvox.Synthesizer]:
    with mixvox.Synthesizer("espeak") as synth:
        yield synth


def invoke(*args: str, input: bytes | str | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def no_traceback(result) -> None:
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


# ---------------------------------------------------------------------------------------------
# Nothing to say
# ---------------------------------------------------------------------------------------------

EMPTY_LIKE = ["", " ", "   \t  ", "\n\n", "\r\n", "\u3000\u3000", "\u00a0"]
PUNCT_ONLY = ["。。。", "!!!", "...", "，，", "——", "()", "“”", "?!", "…", "「」", "-", "・"]


@pytest.mark.parametrize("text", EMPTY_LIKE + PUNCT_ONLY)
def test_nothing_to_say_routes_to_no_words(text: str) -> None:
    utt = ROUTER.route(text)
    check_utterance(text, utt)
    assert not [w for w in utt.words if w.kind == "word" and w.spoken.strip()]
    if text.strip():
        # punctuation only: said so in a warning, never silently dropped
        assert [w.code for w in utt.warnings] == ["no-speech"] * len(utt.sentences)
        assert utt.sentences
    else:
        assert utt.sentences == [] and utt.warnings == []


@pytest.mark.parametrize("text", EMPTY_LIKE + PUNCT_ONLY)
def test_nothing_to_say_gives_empty_audio(tts: mixvox.Synthesizer, text: str) -> None:
    """``stream`` yields nothing; ``synthesize`` raises (issue 11: no silent 0-second file)."""
    from mixvox.errors import NothingToSay

    with pytest.raises(NothingToSay):
        tts.synthesize(text)
    assert list(tts.stream(text)) == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no text to speak"),
        ("   ", "no text to speak"),
        ("\n", "no text to speak"),
        ("。。。", "nothing to speak in the text (see the warnings above)"),
        ("!!!", "nothing to speak in the text (see the warnings above)"),
        ("😀", "nothing to speak in the text (see the warnings above)"),
        ("\x00", "nothing to speak in the text (see the warnings above)"),
    ],
)
def test_cli_say_nothing_to_speak_exits_1(tmp_path: Path, text: str, message: str) -> None:
    out = tmp_path / "o.wav"
    r = invoke("say", text, "-o", str(out), "--engine", "espeak")
    assert r.exit_code == 1, r.output
    assert f"Error: {message}" in r.stderr
    no_traceback(r)
    assert not out.exists()
    # the same through stdin
    r = invoke("say", "-", "-o", str(out), "--engine", "espeak", input=text.encode())
    assert r.exit_code == 1 and message in r.stderr
    assert not out.exists()


def test_cli_route_nothing_to_say_is_exit_0() -> None:
    """``route`` is an analysis: empty text is a valid (empty) answer, not an error."""
    r = invoke("route", "--json", "")
    assert r.exit_code == 0
    assert json.loads(r.stdout) == {"input": "", "spoken": "", "warnings": [], "sentences": []}
    r = invoke("route", "--json", "。。。")
    assert r.exit_code == 0
    assert [w["code"] for w in json.loads(r.stdout)["warnings"]] == ["no-speech"]


# ---------------------------------------------------------------------------------------------
# Control characters and odd Unicode
# ---------------------------------------------------------------------------------------------

ODD = {
    "nul": "hello\x00world 你好",
    "bell_del": "a\x07b\x7fc 测试",
    "c1_nel": "line\x85next 下一行",
    "ansi_colours": "\x1b[1;31mError\x1b[0m: 文件 not found",
    "lone_surrogates": b"caf\xe9 au lait \xff\xfe \xe4\xbd\xa0".decode("utf-8", "surrogateescape"),
    "lone_surrogate_pair_halves": "\ud83d\ude00 half \udfff 好",
    "rtl_marks": "\u200fשלום\u200e hello \u202eevil\u202c 你好",
    "zero_width": "zero\u200bwidth\u200cnon\u200djoiner\u2060 你\u200b好",
    "bom_inside": "\ufeffstart 中\ufeff文",
    "combining": "cafe\u0301 n\u0303 a\u0308\u0308\u0308\u0308 \u0301 字\u0301",
    "zalgo": "z" + "\u0300\u0301\u0302\u0303\u0304" * 40 + "algo 你好",
    "full_width": "ＲＴＸ　４０７０ 跑 ＴｅｎｓｏｒＲＴ 只要 ２２ｍｓ！",
    "emoji_zwj": "family 👨\u200d👩\u200d👧\u200d👦 and 👍🏽 flag 🏳\ufe0f\u200d🌈 🇨🇳 #\ufe0f\u20e3",
    "private_use": "\ue000\U000f0000 text 文本",
    "noncharacters": "\ufffe\uffff\U0010ffff end",
    "replacement": "\ufffd\ufffd broken 坏了",
    "tabs_and_odd_spaces": "a\tb\u2003c\u2009d\u00a0e\u3000中",
    "line_separators": "one\u2028two\u2029three\x1c四\x1e五",
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_unicode_routes_cleanly(name: str) -> None:
    text = ODD[name]
    utt = ROUTER.route(text)
    check_utterance(text, utt)
    # nothing odd reaches the engine: no control, format, surrogate or private-use character
    for w in utt.words:
        for ch in w.spoken:
            assert ch.isprintable() or ch == " ", (name, w)
            assert not ("\ud800" <= ch <= "\udfff" or "\ue000" <= ch <= "\uf8ff"), (name, w)


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_unicode_speaks_the_rest(tts: mixvox.Synthesizer, name: str) -> None:
    audio = tts.synthesize(ODD[name])
    assert np.isfinite(audio.samples).all()
    assert audio.duration > 0.2  # every sample text has readable words besides the odd parts


def test_cli_say_warnings_do_not_flood_the_terminal(tmp_path: Path) -> None:
    out = tmp_path / "e.wav"
    r = invoke("say", "a😀" * 80 + "😀" * 500, "-o", str(out), "--engine", "espeak", "-q")
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 51
    assert all(x.startswith("mixvox: warning: emoji [") for x in lines[:50])
    assert lines[-1] == "mixvox: warning: … and 30 more warnings (30 emoji)"
    r = invoke("say", "😀" * 5000 + " hi", "-o", str(out), "--engine", "espeak", "-q")
    assert r.exit_code == 0
    assert len(r.stderr) < 500 and "«" + "😀" * 40 + "…»" in r.stderr


def test_control_characters_are_reported_with_offsets() -> None:
    text = ODD["ansi_colours"]
    utt = ROUTER.route(text)
    ctrl = [(w.start, w.end) for w in utt.warnings if w.code == "control-char"]
    assert ctrl == [(0, 7), (12, 16)]  # the whole ESC[1;31m and ESC[0m, not "thirty one M"
    assert utt.spoken.startswith("Error")
    assert "thirty" not in utt.spoken and "one" not in utt.spoken.split()
    utt = ROUTER.route("hello\x00world")
    assert [(w.code, w.start, w.end) for w in utt.warnings] == [("control-char", 5, 6)]
    assert utt.spoken == "hello world"


def test_lone_surrogates_are_reported_not_spoken() -> None:
    text = ODD["lone_surrogates"]
    utt = ROUTER.route(text)
    bad = [w for w in utt.warnings if w.code == "invalid-char"]
    assert [w.text for w in bad] == ["\udce9", "\udcff\udcfe"]
    assert [(w.start, w.end) for w in bad] == [(3, 4), (13, 15)]
    assert "caf" in utt.spoken and "lait" in utt.spoken and "你" in utt.spoken
    json.dumps(utt.to_dict())  # serialisable (as \\udcXX escapes)


def test_cli_route_json_odd_lines_one_object_each() -> None:
    """``route --json -``: one object per input line, for every odd line, in order."""
    lines = [v for k, v in sorted(ODD.items()) if "surrogate" not in k and "separators" not in k]
    raw = [x.encode("utf-8") for x in lines]
    raw += [b"", b"bad \xff\xfe bytes", b"\xed\xa0\x80 encoded surrogate", b"   ", b"\xc3"]
    raw += ["one\u2028two\u2029three\x85four".encode()]
    r = invoke("route", "--json", "-", input=b"\n".join(raw) + b"\n")
    assert r.exit_code == 0, r.output
    out = r.stdout_bytes.split(b"\n")
    assert out[-1] == b"" and len(out) - 1 == len(raw)
    objs = [json.loads(x) for x in out[:-1]]
    # even str.splitlines() (which splits at U+2028, U+2029 and U+0085) sees one line each
    assert len(r.stdout_bytes.decode("utf-8").splitlines()) == len(raw)
    for obj, line in zip(objs, raw, strict=True):
        assert set(obj) == {"input", "spoken", "warnings", "sentences"}
        assert obj["input"] == line.decode("utf-8", "replace")
        for sent in obj["sentences"]:
            assert set(sent) == {"matrix", "spans"}
            for span in sent["spans"]:
                assert set(span) == {"lang", "text", "start", "end", "spoken", "words"}
                assert obj["input"][span["start"] : span["end"]] == span["text"]
                for w in span["words"]:
                    assert set(w) == {"text", "spoken", "phonemes"}
    invalid = [o for o, line in zip(objs, raw, strict=True) if b"\xff" in line or b"\xc3" == line]
    assert len(invalid) == 2
    for o in invalid:
        assert o["warnings"][0]["code"] == "invalid-utf8"
        assert "not valid UTF-8" in o["warnings"][0]["message"]
    assert objs[len(lines)]["input"] == "" and objs[len(lines)]["sentences"] == []


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.binary(max_size=30).map(lambda b: b.replace(b"\n", b"")), max_size=6))
def test_cli_route_json_any_bytes_one_object_per_line(lines: list[bytes]) -> None:
    data = b"\n".join(lines)
    r = invoke("route", "--json", "-", input=data)
    assert r.exit_code == 0, r.output
    # input lines: a final newline ends the last line, it does not start another one
    in_lines = data.split(b"\n")
    if in_lines[-1] == b"":
        in_lines.pop()
    objs = [json.loads(x) for x in r.stdout_bytes.split(b"\n")[:-1]]
    assert len(objs) == len(in_lines)
    assert len(r.stdout_bytes.decode("utf-8").splitlines()) == len(in_lines)
    for obj, raw in zip(objs, in_lines, strict=True):
        assert set(obj) == {"input", "spoken", "warnings", "sentences"}
        raw = raw.removesuffix(b"\r")
        if obj is objs[0]:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        assert obj["input"] == raw.decode("utf-8", "replace")


def test_cli_route_json_drops_a_leading_byte_order_mark_only() -> None:
    r = invoke("route", "--json", "-", input=b"\xef\xbb\xbfhi\r\n\xef\xbb\xbfyo\n")
    assert r.exit_code == 0
    first, second = (json.loads(x) for x in r.stdout.splitlines())
    assert first["input"] == "hi" and first["warnings"] == []
    # a BOM inside the text is a format character: reported, not spoken
    assert second["input"] == "\ufeffyo" and second["warnings"][0]["code"] == "control-char"


def test_non_str_input_is_a_clear_type_error(tts: mixvox.Synthesizer) -> None:
    for bad in (None, b"bytes", 42, ["list"]):
        with pytest.raises(TypeError, match="needs a str"):
            ROUTER.route(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="needs a str"):
            tts.synthesize(bad)  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=8).map("".join) | st.text(max_size=20))
def test_espeak_speaks_any_text_without_error(tts: mixvox.Synthesizer, text: str) -> None:
    """End to end through the engine: any text gives finite audio, or NothingToSay when it has
    no spoken word; no other error."""
    from mixvox.errors import NothingToSay

    utt = tts.route(text)
    spoken = [w for w in utt.words if w.kind == "word" and w.spoken.strip()]
    try:
        audio = tts.synthesize(utt)
    except NothingToSay:
        audio = None
    if audio is not None:
        assert np.isfinite(audio.samples).all() and audio.samples.ndim == 1 and len(audio) > 0
    if not spoken:
        assert audio is None


def test_cli_surrogate_argv_is_a_clear_error(tmp_path: Path) -> None:
    """Invalid UTF-8 on the command line (Python keeps it as lone surrogates)."""
    for cmd in (["route"], ["say", "-o", str(tmp_path / "x.wav"), "--engine", "espeak"]):
        p = subprocess.run(
            [*MIXVOX, *cmd[:1], b"caf\xe9 ok", *cmd[1:]],
            capture_output=True,
            timeout=HANG_GUARD_S,
        )
        assert p.returncode == 1, p.stderr
        assert b"Error: TEXT is not valid UTF-8" in p.stderr and b"Traceback" not in p.stderr
    assert not (tmp_path / "x.wav").exists()


def test_cli_stdin_invalid_utf8_for_say(tmp_path: Path) -> None:
    r = invoke("say", "-", "-o", str(tmp_path / "x.wav"), "--engine", "espeak", input=b"ok \xff")
    assert r.exit_code == 1
    assert "stdin is not valid UTF-8 (byte 0xff at offset 3)" in r.stderr
    no_traceback(r)


# ---------------------------------------------------------------------------------------------
# Invalid UTF-8 in a batch script
# ---------------------------------------------------------------------------------------------


def test_cli_batch_reports_bad_lines_and_does_the_rest(tmp_path: Path) -> None:
    script = tmp_path / "script.txt"
    script.write_bytes(
        b"\xe4\xbd\xa0\xe5\xa5\xbd world\n"  # 1: 你好 world
        b"bad \xff\xfe bytes\n"  # 2: invalid UTF-8
        b"\xed\xa0\x80 encoded surrogate\n"  # 3: invalid UTF-8 (CESU surrogate)
        b"\n"  # blank: skipped
        b"\xe3\x80\x82\xe3\x80\x82\n"  # 5: 。。 punctuation only
        b"hello \x00 there\n"  # 6: NUL inside: spoken without it
        b"truncated \xe4\xbd\n"  # 7: cut multi-byte sequence
        b"last line"  # 8: no final newline
    )
    out = tmp_path / "out"
    r = invoke("batch", str(script), "-o", str(out), "--engine", "espeak", "-q")
    assert r.exit_code == 1, r.output
    no_traceback(r)
    # line 5 (punctuation only) is skipped and counted, not a failure (issue 11)
    assert "3 done" in r.stderr and "3 failed" in r.stderr
    assert "1 skipped (only punctuation)" in r.stderr
    for line, byte in ((2, "ff"), (3, "ed"), (7, "e4")):
        assert f"line {line}: not valid UTF-8 (byte(s) {byte}" in r.stderr
    records = {
        rec["line"]: rec
        for rec in map(json.loads, (out / "manifest.jsonl").read_text("utf-8").splitlines())
        if "line" in rec
    }
    assert sorted(records) == [1, 2, 3, 6, 7, 8]
    assert {n for n, rec in records.items() if "error" in rec} == {2, 3, 7}
    assert sorted(p.name for p in out.glob("*.wav")) == ["0001.wav", "0006.wav", "0008.wav"]
    for name in ("0001.wav", "0006.wav", "0008.wav"):
        data, sr = sf.read(out / name)
        assert sr == 22050 and len(data) > 0.3 * sr and np.sqrt(np.mean(data**2)) > 0.01


# ---------------------------------------------------------------------------------------------
# Huge input: a 10,000-digit number, a 1 MB line
# ---------------------------------------------------------------------------------------------

_HUGE_NUMBER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import mixvox
    digits = "1234567890" * 1000
    grouped = "1" + ",234" * 3333
    cases = [digits, "共有" + digits + "个", "it costs $" + digits + " today", grouped,
             "0." + digits, "-" + digits + "%", digits + "x" + digits, "第" + digits + "名",
             "3." * 5000, "1:" * 5000, "1-" * 5000]
    router = mixvox.pipeline.Router()
    for text in cases:
        utt = router.route(text)
        d = utt.to_dict()
        json.dumps(d)
        chunks = router.chunks(utt, 120)
        print(json.dumps({"n": len(text), "words": len(utt.words),
                          "digits": sum(c.isdigit() for c in utt.spoken),
                          "spoken": len(utt.spoken),
                          "longest_word": max(len(w.spoken) for w in utt.words),
                          "longest_chunk": max(len(c.spoken) for c in chunks)}))
    """
)


def test_ten_thousand_digit_numbers_route_in_bounded_time() -> None:
    """Run in a subprocess with a generous timeout: a hang guard, not a timing test."""
    p = subprocess.run(
        [sys.executable, "-c", _HUGE_NUMBER_SCRIPT],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(rows) == 11
    for row in rows:
        assert row["words"] > 0 and row["digits"] == 0
        assert row["spoken"] >= row["n"] // 10  # read out, not dropped
        # read in bounded words, so chunks stay near the 120-character target: an engine
        # never gets the whole number in one go (ChatTTS would refuse it as too long)
        assert row["longest_word"] <= 700 and row["longest_chunk"] <= 708, row


def test_ten_thousand_digit_number_through_the_cli() -> None:
    line = ("9876543210" * 1000).encode()
    p = subprocess.run(
        [*MIXVOX, "route", "--json", "-"],
        input=line + b"\n\n" + line[:5000] + b" GB\n",
        capture_output=True,
        timeout=HANG_GUARD_S,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    objs = [json.loads(x) for x in p.stdout.splitlines()]
    assert len(objs) == 3
    assert objs[1]["input"] == ""
    for obj in (objs[0], objs[2]):
        assert obj["spoken"] and not any(c.isdigit() for c in obj["spoken"])


def _one_megabyte_line() -> str:
    unit = (
        "今天的 meeting 改到 3:30 PM，请准时参加。We review the GPU budget of $5,000 today; "
        "显存 80GB 只要 22ms. "
    )
    data = (unit * ((1 << 20) // len(unit.encode()) + 1)).encode()[: 1 << 20]
    return data.decode("utf-8", "ignore")


def test_one_megabyte_line_streams_progressively(tts: mixvox.Synthesizer) -> None:
    """A 1 MB line is cut into chunks and audio comes out chunk by chunk: the first piece
    arrives after one chunk is rendered, and memory stays far below the whole audio."""
    text = _one_megabyte_line()
    assert len(text.encode()) >= (1 << 20) - 3 and "\n" not in text
    utt = tts.route(text)  # routing is linear in the text; audio is the part that must stream
    rendered: list[int] = []
    render = tts.engine.render_chunk

    def counting_render(words, options):
        rendered.append(sum(len(w.spoken) for w in words))
        return render(words, options)

    tts.engine.render_chunk = counting_render  # type: ignore[method-assign]
    try:
        tracemalloc.start()
        pieces = []
        gen = tts.stream(utt)
        for audio in gen:
            pieces.append((len(audio), len(rendered)))
            if len(pieces) == 3:
                break
        gen.close()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        del tts.engine.render_chunk
    # progressive: piece k arrives when exactly k chunks have been rendered
    assert [n for _, n in pieces] == [1, 2, 3]
    assert all(samples > 0 for samples, _ in pieces)
    # memory: the whole audio, estimated from what 3 chunks gave, is far above the peak
    bytes_per_char = sum(s for s, _ in pieces) * 4 / sum(rendered)
    spoken_chars = sum(len(w.spoken) for w in utt.words)
    whole_audio = bytes_per_char * spoken_chars
    assert whole_audio > 1e9  # sanity: hours of audio
    assert peak < whole_audio / 10, (peak, whole_audio)


def test_cli_say_writes_a_long_text_piece_by_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``say -o FILE`` streams: while chunk k is rendered, the audio of chunks 1..k-1 is
    already in the temporary file (memory holds one chunk, not hours of audio); a failure
    mid-way leaves neither the target nor a temporary file behind."""
    from mixvox.engines.espeak.engine import EspeakEngine

    render = EspeakEngine.render_chunk
    part_sizes: list[int] = []

    def watching_render(self, words, options):
        part_sizes.append(sum(p.stat().st_size for p in tmp_path.glob(".*.part")))
        if len(part_sizes) == 6 and fail:
            raise RuntimeError("engine died")
        return render(self, words, options)

    monkeypatch.setattr(EspeakEngine, "render_chunk", watching_render)
    text = "今天的 meeting 改到 3:30 PM，请准时参加。We review the GPU budget today. " * 8
    out = tmp_path / "long.wav"
    fail = False
    r = invoke("say", text, "-o", str(out), "--engine", "espeak", "-q")
    assert r.exit_code == 0, r.output
    assert len(part_sizes) > 5
    assert part_sizes[0] == 0 and all(b > a for a, b in pairwise(part_sizes[1:]))
    data, sr = sf.read(out)
    assert sr == 22050 and len(data) * 2 > part_sizes[-1]  # the file holds every chunk
    assert not list(tmp_path.glob(".*.part"))

    fail, part_sizes[:] = True, []
    bad = tmp_path / "bad.wav"
    r = invoke("say", text, "-o", str(bad), "--engine", "espeak")
    assert r.exit_code == 1 and "engine died" in r.stderr
    no_traceback(r)
    assert not bad.exists() and not list(tmp_path.glob(".*.part"))
