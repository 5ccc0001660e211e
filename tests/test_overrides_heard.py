"""Overrides are heard: an ARPAbet override changes what each engine says, and ``mixvox
route`` shows per override word how each engine will render it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mixvox.cli import main
from mixvox.engines.chattts import respell
from mixvox.engines.chattts.render import render_words
from mixvox.engines.espeak.arpabet import to_espeak
from mixvox.engines.espeak.engine import EspeakEngine, plan
from mixvox.interfaces import SynthesisOptions
from mixvox.ir import Chunk, Word
from mixvox.pipeline import Router

TINY = Path(__file__).resolve().parents[2] / "shared" / "chattts" / "tiny"
ROUTER = Router()


def words_of(text: str) -> list[Word]:
    return ROUTER.route(text).words


# --- espeak ------------------------------------------------------------------------------------


def test_arpabet_maps_to_espeak_mnemonics_with_stress() -> None:
    assert to_espeak("EH1 N JH AH0 N EH1 K S".split()) == "'EndZ@n'Eks"
    assert to_espeak("HH AH0 L OW1".split()) == "h@l'oU"
    assert to_espeak(["AH1", "ER0", "ER1", "IY0"]) == "'V3'3:i"
    assert to_espeak(["QQ"]) is None and to_espeak(["AA"]) is None


def test_espeak_plan_feeds_override_phonemes_and_escapes_typed_brackets() -> None:
    steps = plan(words_of("use [nginx](/EH1 N JH AH0 N EH1 K S/) now"))
    speech = [s for s in steps if hasattr(s, "text")]
    assert speech[0].phonemes and "[['EndZ@n'Eks]]" in speech[0].text
    plain = plan(words_of("use tomato now"))
    assert not any(getattr(s, "phonemes", False) for s in plain)


@pytest.fixture(scope="module")
def espeak() -> EspeakEngine:
    return EspeakEngine()


def speak(engine: EspeakEngine, text: str) -> np.ndarray:
    utt = ROUTER.route(text)
    chunks = [Chunk(0, utt.words)]
    return np.concatenate([p.samples for p in engine.stream(utt, chunks, SynthesisOptions())])


def spectrum_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Mean absolute difference of the long-term log spectra: espeak varies a few samples
    from call to call (so sample equality says nothing), but a different vowel moves this
    ten times more than a repeat does."""

    def ltas(x: np.ndarray) -> np.ndarray:
        frames = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), 512)[::256]
        return np.log(np.abs(np.fft.rfft(frames * np.hanning(512), axis=1)).mean(0) + 1e-6)

    return float(np.abs(ltas(a) - ltas(b)).mean())


def test_espeak_override_changes_the_audio(espeak: EspeakEngine) -> None:
    plain = speak(espeak, "tomato")  # espeak's own reading: t@m'eItoU
    say_ah = speak(espeak, "[tomato](/T AH0 M AA1 T OW2/)")
    again = speak(espeak, "[tomato](/T AH0 M AA1 T OW2/)")
    say_ay = speak(espeak, "[tomato](/T AH0 M EY1 T OW2/)")
    noise = spectrum_distance(say_ah, again)
    vowel = spectrum_distance(say_ah, say_ay)
    assert len(say_ah) and len(say_ay) and not np.array_equal(plain, say_ah)
    assert vowel > 4 * noise  # one vowel apart: heard (measured ~0.28 against ~0.03)
    assert spectrum_distance(plain, say_ah) > 4 * noise
    # the override is what is spoken: the same phones sound the same, whatever the text
    same = spectrum_distance(say_ah, speak(espeak, "[tomayto](/T AH0 M AA1 T OW2/)"))
    assert same < vowel / 3


def test_espeak_zh_override_changes_the_audio(espeak: EspeakEngine) -> None:
    xing, hang = speak(espeak, "[行](xing2)"), speak(espeak, "[行](hang2)")
    noise = spectrum_distance(xing, speak(espeak, "[行](xing2)"))
    assert spectrum_distance(xing, hang) > 4 * noise


def test_espeak_prosody_rate_is_heard(espeak: EspeakEngine) -> None:
    normal = speak(espeak, "<speak>hello there my friend</speak>")
    slow = speak(espeak, '<speak><prosody rate="x-slow">hello there my friend</prosody></speak>')
    assert len(slow) > 1.3 * len(normal)


# --- ChatTTS ------------------------------------------------------------------------------------


def test_respelling_uses_dictionary_words() -> None:
    assert respell.respell_phones("EH1 N JH AH0 N EH1 K S".split()) == "engine x"
    assert respell.respell_phones(["R", "EH1", "D"]) == "red"
    assert respell.respell_phones(["ZH", "ZH", "ZH"]) is None


def test_chattts_text_follows_the_override() -> None:
    assert render_words(words_of("[read](/R EH1 D/) it")).text == "red it"
    assert render_words(words_of("[read](/R IY1 D/) it")).text == "reed it"
    assert render_words(words_of("use [nginx](/EH1 N JH AH0 N EH1 K S/)")).text == "use engine x"


def test_chattts_unfaithful_override_is_a_warning_and_keeps_the_builtin_reading() -> None:
    r = render_words(words_of("[XQZ](/ZH ZH AH0/) ok"))
    assert r.text == "X Q Z ok"  # the built-in spelling-out, not the bare "XQZ"
    (note,) = r.notes
    assert note.code == "override-approximate" and (note.start, note.end) == (0, 18)


def test_arpabet_only_lexicon_entry_keeps_the_builtin_spelling(tmp_path: Path) -> None:
    lex = tmp_path / "lex.toml"
    lex.write_text('[en]\nXYZW = "/ZH IH1 ZH/"\n', encoding="utf-8")
    (w,) = [x for x in Router(lexicons=[lex]).route("XYZW").words if x.kind == "word"]
    assert w.override and w.phonemes == ["ZH", "IH1", "ZH"]
    assert w.spoken == "X Y Z W"
    assert render_words([w]).text == "X Y Z W"


@pytest.fixture(scope="module")
def chattts(tmp_path_factory: pytest.TempPathFactory):
    if not (TINY / "asset").is_dir() and not TINY.is_dir():
        pytest.fail(f"missing fixture {TINY}")
    from mixvox.engines.chattts.engine import ChatTTSEngine

    root = tmp_path_factory.mktemp("chattts-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MIXVOX_CACHE_DIR", str(root))
        mp.setenv("MIXVOX_DATA_DIR", str(root / "data"))
        mp.delenv("MIXVOX_CHATTTS_DIR", raising=False)
        eng = ChatTTSEngine(TINY)
        yield eng
        eng.close()


def test_chattts_override_changes_the_audio(chattts) -> None:
    def run(text: str) -> np.ndarray:
        utt = ROUTER.route(text)
        opts = SynthesisOptions(seed=7, extra={"max_frames": 24, "temperature": 0.0})
        return np.concatenate([p.samples for p in chattts.stream(utt, [Chunk(0, utt.words)], opts)])

    plain = run("read it")
    red = run("[read](/R EH1 D/) it")
    assert np.array_equal(red, run("red it"))  # the respelling is what the model reads
    assert plain.shape != red.shape or not np.array_equal(plain, red)


# --- route ----------------------------------------------------------------------------------------


def test_route_shows_each_engines_rendering_of_an_override() -> None:
    res = CliRunner().invoke(
        main, ["route", "用 [nginx](/EH1 N JH AH0 N EH1 K S/) 和 [XQZ](/ZH ZH AH0/)"]
    )
    assert res.exit_code == 0, res.output
    out = res.output
    assert "espeak: phonemes [['EndZ@n'Eks]] (exact)" in out
    assert "chattts: text 'engine x'" in out
    assert "chattts: text 'X Q Z' (approximate" in out


def test_every_arpabet_phone_has_an_espeak_mnemonic() -> None:
    from mixvox.phonetics import ARPABET_CONSONANTS, ARPABET_VOWELS

    for v in ARPABET_VOWELS:
        for stress in "012":
            assert to_espeak([v + stress]), v
    for c in ARPABET_CONSONANTS:
        assert to_espeak([c]), c


def test_plugin_lexentry_with_phonemes_is_heard_by_both_engines() -> None:
    from mixvox import LexEntry

    router = Router()
    router.lexicons["en"].add_layer({"zorblax": LexEntry("zorblax", ("R", "EH1", "D"))})
    words = [w for w in router.route("say zorblax now").words if w.spoken == "zorblax"]
    assert words and words[0].override and words[0].phonemes == ["R", "EH1", "D"]
    speech = [s for s in plan(router.route("say zorblax now").words) if hasattr(s, "text")]
    assert "[[r'Ed]]" in speech[0].text and speech[0].phonemes
    assert render_words(router.route("say zorblax now").words).text == "say red now"
