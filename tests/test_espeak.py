"""The espeak-ng engine on hand-built IR (independent of the frontends and the router)."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

from mixvox.engines.espeak import binding
from mixvox.engines.espeak.engine import EspeakEngine, _Pause, _Speech, plan, split_script
from mixvox.interfaces import AudioChunk, Engine, SynthesisOptions
from mixvox.ir import Chunk, Utterance, Word
from mixvox.registry import build_registry


def w(text: str, lang: str, brk: int = 1, kind: str = "word", spoken: str | None = None) -> Word:
    return Word(text, spoken if spoken is not None else text, [], 0, len(text), lang, kind, brk)


def ctrl(token: str) -> Word:
    return Word(token, token, [], 0, len(token), "ctrl", "control", 0)


@pytest.fixture(scope="module")
def engine() -> EspeakEngine:
    return EspeakEngine()


def speak(engine: EspeakEngine, words: list[Word], **kw: object) -> np.ndarray:
    opts = SynthesisOptions(**kw)  # type: ignore[arg-type]
    pieces = list(engine.stream(Utterance("x"), [Chunk(0, words)], opts))
    assert len(pieces) == 1
    return pieces[0].samples


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if len(x) else 0.0


def longest_silence(x: np.ndarray, sr: int, thresh: float = 1e-4) -> float:
    """Longest run of (near-)zero samples, in seconds."""
    quiet = np.abs(x) <= thresh
    best = run = 0
    for q in quiet:
        run = run + 1 if q else 0
        best = max(best, run)
    return best / sr


def test_check_and_registration(monkeypatch: pytest.MonkeyPatch) -> None:
    assert binding.check() is None
    monkeypatch.setenv("MIXVOX_PLUGINS", "espeak")
    reg = build_registry()
    info = reg.engine("espeak")
    assert info is not None and info.priority == 0 and info.check() is None
    assert "espeak" in info.description
    eng = info.factory()
    assert isinstance(eng, Engine)
    assert (eng.name, eng.consumes, eng.sample_rate) == ("espeak", "text", 22050)


def test_speaks_mandarin(engine: EspeakEngine) -> None:
    x = speak(engine, [w("你好", "zh"), w("世界", "zh", 3)])
    assert x.dtype == np.float32
    dur = len(x) / engine.sample_rate
    assert 0.5 < dur < 3.0, dur  # four syllables
    assert rms(x) > 0.01
    assert np.abs(x).max() <= 1.0


def test_speaks_english(engine: EspeakEngine) -> None:
    x = speak(engine, [w("hello", "en"), w("world", "en", 3)])
    dur = len(x) / engine.sample_rate
    assert 0.4 < dur < 2.5, dur
    assert rms(x) > 0.01


def test_longer_text_longer_audio(engine: EspeakEngine) -> None:
    short = speak(engine, [w("今天", "zh", 3)])
    long = speak(
        engine,
        [
            w("今天", "zh"),
            w("的", "zh"),
            w("会议", "zh"),
            w("改到", "zh"),
            w("三点半", "zh"),
            w("meeting", "en"),
            w("room", "en", 3),
        ],
    )
    assert len(long) > 2.5 * len(short)


def test_clause_and_sentence_breaks_add_silence(engine: EspeakEngine) -> None:
    sr = engine.sample_rate
    joined = speak(engine, [w("hello", "en", 1), w("world", "en", 0)])
    clause = speak(engine, [w("hello", "en", 2), w("world", "en", 0)])
    sentence = speak(engine, [w("hello", "en", 3), w("world", "en", 0)])
    assert longest_silence(joined, sr) < 0.1
    assert 0.14 <= longest_silence(clause, sr) < 0.25
    assert 0.29 <= longest_silence(sentence, sr) < 0.4
    assert len(sentence) > len(clause) > len(joined) - 0.05 * sr


def test_pause_tokens_and_punctuation(engine: EspeakEngine) -> None:
    sr = engine.sample_rate
    plain = speak(engine, [w("你好", "zh", 0), w("世界", "zh", 0)])
    paused = speak(engine, [w("你好", "zh", 0), ctrl("[lbreak]"), w("世界", "zh", 0)])
    laugh = speak(engine, [w("你好", "zh", 0), ctrl("[laugh]"), w("世界", "zh", 0)])
    assert longest_silence(paused, sr) >= 0.29
    assert longest_silence(plain, sr) < 0.1
    # a non-pause control token is dropped: espeak cannot laugh; the words are read as one call
    # (espeak's output varies by a few samples from call to call, so compare lengths loosely)
    assert plan([w("你好", "zh", 0), ctrl("[laugh]"), w("世界", "zh", 0)]) == [
        _Speech("zh", "你好世界")
    ]
    assert abs(len(laugh) - len(plain)) < 0.03 * len(plain)
    assert longest_silence(laugh, sr) < 0.1
    # a comma word with a clause break gives the clause pause, merged with a following uv_break
    comma = w("，", "zh", 2, kind="punct")
    steps = plan([w("你好", "zh", 0), comma, ctrl("[uv_break]"), w("世界", "zh", 3)])
    assert steps == [_Speech("zh", "你好"), _Pause(150), _Speech("zh", "世界"), _Pause(300)]


def test_plan_groups_languages(engine: EspeakEngine) -> None:
    words = [
        w("今天", "zh"),
        w("的", "zh"),
        w("meeting", "en"),
        w("3:30", "en", spoken="three thirty"),
        w("PM", "en", 0),
        w("好", "zh", 3),
    ]
    assert plan(words) == [
        _Speech("zh", "今天的"),
        _Speech("en", "meeting three thirty PM"),
        _Speech("zh", "好"),
        _Pause(300),
    ]
    respelled = Word("nginx", "nginx", [], 0, 5, "en", respelling="engine x")
    assert plan([respelled]) == [_Speech("en", "engine x")]


def test_split_script_for_raw_text() -> None:
    assert split_script("今天 meeting 改到3点") == [
        ("zh", "今天 "),
        ("en", "meeting "),
        ("zh", "改到"),
        ("en", "3"),
        ("zh", "点"),
    ]
    assert split_script("...") == [("en", "...")]
    assert split_script("") == []


def test_raw_word_uses_both_voices(engine: EspeakEngine) -> None:
    x = speak(engine, [Word("你好 world", "你好 world", [], 0, 8, "raw")])
    assert rms(x) > 0.01 and len(x) / engine.sample_rate > 0.5


def test_one_chunk_per_ir_chunk(engine: EspeakEngine) -> None:
    chunks = [Chunk(0, [w("你好", "zh", 3)]), Chunk(1, [w("hello", "en", 3)])]
    out = list(engine.stream(Utterance("你好 hello"), chunks, SynthesisOptions()))
    assert all(isinstance(p, AudioChunk) for p in out)
    assert [(p.chunk, p.final, p.sample_rate) for p in out] == [(0, True, 22050), (1, True, 22050)]
    assert all(rms(p.samples) > 0.01 for p in out)


def test_unknown_options_warn_once(engine: EspeakEngine) -> None:
    eng = EspeakEngine()
    opts = SynthesisOptions(extra={"temperature": 0.3, "top_k": 20, "raw": False})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        list(eng.stream(Utterance("x"), [Chunk(0, [w("hi", "en")])], opts))
        list(eng.stream(Utterance("x"), [Chunk(0, [w("hi", "en")])], opts))
    msgs = [str(c.message) for c in caught]
    assert len(msgs) == 1, msgs
    assert "temperature" in msgs[0] and "top_k" in msgs[0] and "raw" not in msgs[0]


def test_factory_options_warn() -> None:
    with pytest.warns(UserWarning, match="backend"):
        EspeakEngine(backend="onnx")


def test_speaker_variant_and_unknown_speaker(engine: EspeakEngine) -> None:
    words = [w("hello", "en"), w("world", "en", 0)]
    default = speak(engine, words)
    female = speak(engine, words, speaker="f3")
    assert rms(female) > 0.01
    assert not (len(female) == len(default) and np.array_equal(female, default))
    eng = EspeakEngine()
    with pytest.warns(UserWarning, match="not an espeak voice variant"):
        odd = speak(eng, words, speaker="蘁杏䘵...not-a-variant")
    assert abs(len(odd) - len(default)) < 0.03 * len(default)


def test_speed_changes_duration(engine: EspeakEngine) -> None:
    words = [w("this", "en"), w("is", "en"), w("a", "en"), w("longer", "en"), w("sentence", "en")]
    normal = speak(engine, words)
    fast = speak(engine, words, speed=2.0)
    assert len(fast) < 0.75 * len(normal)
    eng = EspeakEngine()
    with pytest.warns(UserWarning, match="speed"):
        bad = speak(eng, words, speed=-1.0)
    assert abs(len(bad) - len(normal)) < 0.03 * len(normal)


def test_thread_safe(engine: EspeakEngine) -> None:
    """Concurrent calls must not mix their audio (libespeak-ng has one global callback)."""
    zh = [w("今天", "zh"), w("天气", "zh"), w("很好", "zh", 3)]
    en = [w("the", "en"), w("weather", "en"), w("is", "en"), w("nice", "en", 3)]
    ref_zh, ref_en = speak(engine, zh), speak(engine, en)
    assert abs(len(ref_zh) - len(ref_en)) > 0.1 * len(ref_en)  # distinguishable by length
    results: dict[int, np.ndarray] = {}

    def work(i: int) -> None:
        results[i] = speak(engine, zh if i % 2 else en)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6
    for i, x in results.items():
        ref = ref_zh if i % 2 else ref_en
        assert abs(len(x) - len(ref)) < 0.03 * len(ref)
        assert abs(rms(x) - rms(ref)) < 0.1 * rms(ref)


def test_odd_text_does_not_crash(engine: EspeakEngine) -> None:
    words = [w("\x00\x1b[31m", "en"), w("😀", "zh"), w("\ud800", "en"), w("", "zh"), w(" ", "en")]
    x = speak(engine, words)
    assert x.dtype == np.float32  # may be silent, must not raise
    assert speak(engine, []).size == 0


def test_full_pipeline_with_real_frontends() -> None:
    """Router + zh/en frontends + prosody + espeak: clause pauses come from the punctuation."""
    from mixvox import Synthesizer

    with Synthesizer("espeak") as tts:
        assert tts.engine_name == "espeak" and tts.sample_rate == 22050
        utt = tts.route("今天的 meeting 改到 3:30 PM，我们走。")
        assert not [w for w in utt.warnings if w.code == "no-frontend"]
        audio = tts.synthesize(utt)
        short = tts.synthesize("你好")
    x, sr = audio.samples, audio.sample_rate
    assert 1.5 < audio.duration < 8.0
    assert rms(x) > 0.01
    assert len(short) < len(x) / 2
    assert longest_silence(x, sr) >= 0.14  # the comma
    tail = x[-int(0.29 * sr) :]
    assert np.abs(tail).max() <= 1e-4  # sentence-final pause


def zh(text: str, pinyin: str, brk: int = 1) -> Word:
    return Word(text, text, pinyin.split(), 0, len(text), "zh", "word", brk)


def test_zh_words_are_read_from_their_pinyin(engine: EspeakEngine) -> None:
    ok = engine._lib.pinyin_readable
    words = [
        zh("行长", "hang2 zhang3"),
        zh("绿", "lü4"),  # ü spelled as v for espeak
        zh("去", "qv4"),  # jv/qv/xv/yv are written ju/qu/xu/yu
        zh("花儿", "huar1 er5"),  # erhua espeak cannot parse: characters instead
        zh("三个", "san1"),  # syllable count does not match: characters
        zh("八十GB", "ba1 shi2"),  # not all Han: characters
        zh("好", "hao3", 3),
    ]
    assert plan(words, ok) == [
        _Speech("pinyin", "hang2 zhang3 lv4 qu4"),
        _Speech("zh", "花儿三个八十GB"),
        _Speech("pinyin", "hao3"),
        _Pause(300),
    ]
    assert plan(words) == [_Speech("zh", "行长绿去花儿三个八十GB 好"), _Pause(300)]


def test_engine_sends_frontend_pinyin_to_the_pinyin_voice(
    engine: EspeakEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, str]] = []
    real = engine._lib.synth

    def spy(text: str, voice: str, rate: int = binding.DEFAULT_RATE) -> np.ndarray:
        calls.append((text, voice))
        return real(text, voice, rate)

    monkeypatch.setattr(engine._lib, "synth", spy)
    x = speak(engine, [zh("银行", "yin2 hang2"), w("app", "en"), zh("行走", "xing2 zou3", 3)])
    assert calls == [
        ("yin2 hang2", "cmn-Latn-pinyin"),
        ("app", "en-us"),
        ("xing2 zou3", "cmn-Latn-pinyin"),
    ]
    assert rms(x) > 0.01 and len(x) / engine.sample_rate > 0.8
    # the syllables are read as Mandarin, not spelled as English letters
    assert "(en)" not in engine._lib.phonemes("yin2 hang2 lv4 qu4", "cmn-Latn-pinyin")
    assert not engine._lib.pinyin_readable("huar1")
