"""Lexicon files (TOML/TSV), their validation, and the built-in lexicon plugin."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mixvox.interfaces import LexEntry, Lexicon, MixvoxError
from mixvox.plugins import lexicons
from mixvox.plugins.lexicons import (
    builtin_lexicon,
    load_lexicon_file,
    mixvox_lexicon,
    parse_arpabet,
    parse_pinyin,
)


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


# ---------------------------------------------------------------------------------------------
# pinyin and ARPAbet
# ---------------------------------------------------------------------------------------------


def test_parse_pinyin_canonical_forms():
    assert parse_pinyin("Chong2  qing4", "重庆") == ("chong2", "qing4")
    assert parse_pinyin("lü4 lv4 lu:4", "绿绿绿") == ("lv4", "lv4", "lv4")
    assert parse_pinyin("jv3 xü1 nue4", "举需虐") == ("ju3", "xu1", "nve4")
    assert parse_pinyin("de5") == ("de5",)


@pytest.mark.parametrize(
    ("text", "word", "message"),
    [
        ("chong2", "重庆", "1 pinyin syllable(s) for 2 Han character"),
        ("chong2 qing4 yin2", "重庆", "3 pinyin syllable(s) for 2"),
        ("chong qing4", "重庆", "'chong' has no tone number"),
        ("chong6 qing4", "重庆", "tone must be 1-5"),
        ("chung2 qing4", "重庆", "unknown pinyin syllable 'chung'"),
        ("chong2qing4", "重庆", "'chong2qing4' is not a pinyin syllable"),
        ("chóng qìng", "重庆", "tone mark; write tone numbers ('chong2')"),
        ("", "重庆", "empty pinyin"),
    ],
)
def test_parse_pinyin_errors(text, word, message):
    with pytest.raises(ValueError) as err:
        parse_pinyin(text, word)
    assert message in str(err.value)


def test_parse_arpabet():
    assert parse_arpabet("/eh1 n jh ah0 n eh1 k s/") == tuple("EH1 N JH AH0 N EH1 K S".split())
    assert parse_arpabet("  K UW1 D AH0 ") == ("K", "UW1", "D", "AH0")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("/EH N/", "vowel 'EH' needs a stress digit"),
        ("/EH3 N/", "stress must be 0, 1 or 2"),
        ("/EH1 N1/", "consonant 'N1' takes no stress digit"),
        ("/EH1 Q/", "unknown ARPAbet phone 'Q'"),
        ("/EH1 ŋ/", "unknown ARPAbet phone"),
        ("//", "empty ARPAbet"),
    ],
)
def test_parse_arpabet_errors(text, message):
    with pytest.raises(ValueError) as err:
        parse_arpabet(text)
    assert message in str(err.value)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=6))
def test_parsers_only_raise_value_error(text, word):
    for call in (lambda: parse_pinyin(text, word), lambda: parse_arpabet(text)):
        try:
            out = call()
        except ValueError:
            continue
        assert out and all(isinstance(p, str) and p for p in out)


# ---------------------------------------------------------------------------------------------
# TOML
# ---------------------------------------------------------------------------------------------

GOOD_TOML = """
[zh]
"重庆银行" = "chong2 qing4 yin2 hang2"
"重构" = { phonemes = "chong2 gou4", respelling = "虫够" }

[en]
nginx = "/EH1 N JH AH0 N EH1 K S/"
Nginx = "engine x"
k8s = { spoken = "kubernetes", phonemes = "K UW2 B ER0 N EH1 T IY0 Z" }
"C++" = { respelling = "C plus plus" }
"""


def test_toml_all_value_forms(tmp_path):
    path = write(tmp_path, "lex.toml", GOOD_TOML)
    tables = load_lexicon_file(path)
    assert set(tables) == {"zh", "en"}
    zh, en = tables["zh"], tables["en"]
    assert zh["重庆银行"].phonemes == ("chong2", "qing4", "yin2", "hang2")
    assert zh["重构"] == LexEntry(
        "重构", ("chong2", "gou4"), respelling="虫够", source=f"{path} [zh] 重构"
    )
    assert en["nginx"].phonemes == tuple("EH1 N JH AH0 N EH1 K S".split())
    assert en["nginx"].respelling is None
    assert en["Nginx"].phonemes == () and en["Nginx"].respelling == "engine x"
    assert en["k8s"].spoken == "kubernetes" and en["k8s"].phonemes[0] == "K"
    assert en["C++"].respelling == "C plus plus"
    assert str(path) in en["k8s"].source


def test_toml_path_can_be_str_and_pathlike(tmp_path):
    path = write(tmp_path, "lex.toml", GOOD_TOML)
    assert load_lexicon_file(str(path)) == load_lexicon_file(path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[zh]\n"重庆" = "chong2"\n', "[zh] key '重庆': 1 pinyin syllable(s) for 2"),
        ('[en]\nnginx = "/EH1 N JH AH N/"\n', "[en] key 'nginx': ARPAbet vowel 'AH' needs"),
        ('[fr]\nbonjour = "bon jour"\n', "top-level key 'fr': expected a language table"),
        ('zh = "x"\n', "'zh' must be a table"),
        ("[en]\nnginx = { phonemes = 3 }\n", "field 'phonemes' must be a string, not int"),
        ('[en]\nnginx = { sound = "x" }\n', "unknown field(s) 'sound'"),
        ("[en]\nnginx = {}\n", "gives none of phonemes, respelling, spoken"),
        ("[en]\nnginx = 5\n", "must be a string or an inline table, not int"),
        ('[zh]\nGPU = "ji1"\n', "zh word 'GPU' must be written in Han characters"),
        ('[en]\n"显卡" = "x"\n', "contains Han characters (put it under zh)"),
        ('[en]\n"engine x" = "x"\n', "contains whitespace"),
        ('[en]\n"" = "x"\n', "empty word"),
        ('[en]\nx = "[uv_break] x"\n', "must not contain '[' or ']'"),
        ('[en]\nx = "  "\n', "empty respelling"),
        ('[en]\nx = "a\\u0007b"\n', "control character U+0007"),
        ('[zh]\n"重构" = { spoken = "重gou", phonemes = "chong2 gou4" }\n', "spoken form"),
    ],
)
def test_toml_errors_name_file_key_and_problem(tmp_path, body, message):
    path = write(tmp_path, "bad.toml", body)
    with pytest.raises(MixvoxError) as err:
        load_lexicon_file(path)
    text = str(err.value)
    assert str(path) in text
    assert message in text


def test_toml_syntax_error(tmp_path):
    path = write(tmp_path, "bad.toml", '[zh]\n"重庆" = chong2\n')
    with pytest.raises(MixvoxError, match=r"is not valid TOML.*line 2"):
        load_lexicon_file(path)


def test_all_problems_are_reported_together(tmp_path):
    body = '[zh]\n"重庆" = "chong2"\n"好" = "hao3"\n[en]\nx = "/Q/"\ny = "/AH/"\n'
    path = write(tmp_path, "bad.toml", body)
    with pytest.raises(MixvoxError) as err:
        load_lexicon_file(path)
    text = str(err.value)
    assert "3 problem(s)" in text
    assert "'重庆'" in text and "'x'" in text and "'y'" in text
    assert "'好'" not in text  # the good entry is not blamed


def test_many_problems_are_capped(tmp_path):
    body = "[en]\n" + "".join(f'w{i} = "/Q{i}/"\n' for i in range(50))
    with pytest.raises(MixvoxError) as err:
        load_lexicon_file(write(tmp_path, "bad.toml", body))
    assert "50 problem(s)" in str(err.value)
    assert "... and 30 more" in str(err.value)


# ---------------------------------------------------------------------------------------------
# TSV
# ---------------------------------------------------------------------------------------------


def test_tsv_forms_language_guess_and_comments(tmp_path):
    body = (
        "# my words\n"
        "\n"
        "重构\tchong2 gou4\n"
        "nginx\t/EH1 N JH AH0 N EH1 K S/\n"
        "Nginx\tengine x\n"
        "  # indented comment\n"
        "C#\tC sharp\ten\n"
        "银行\tyin2 hang2\tzh\n"
    )
    path = write(tmp_path, "words.tsv", body)
    tables = load_lexicon_file(path)
    assert tables["zh"]["重构"].phonemes == ("chong2", "gou4")
    assert tables["zh"]["重构"].source == f"{path}:3"
    assert tables["zh"]["银行"].phonemes == ("yin2", "hang2")
    assert tables["en"]["nginx"].phonemes[0] == "EH1"
    assert tables["en"]["Nginx"].respelling == "engine x"
    assert tables["en"]["C#"].respelling == "C sharp"
    assert sum(len(t) for t in tables.values()) == 5


def test_tsv_crlf_bom_and_trailing_empty_column(tmp_path):
    body = "\ufeff重构\tchong2 gou4\r\nnginx\tengine x\t\r\n".encode()
    tables = load_lexicon_file(write(tmp_path, "w.txt", body))
    assert tables["zh"]["重构"].phonemes == ("chong2", "gou4")
    assert tables["en"]["nginx"].respelling == "engine x"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("重构 chong2 gou4\n", ":1: expected word<TAB>pronunciation[<TAB>lang], got 1 column(s) "
         "(no TAB found"),
        ("a\tb\ten\textra\n", ":1: expected word<TAB>pronunciation"),
        ("ok\tfine\n重构\tchong2\n", ":2: '重构': 1 pinyin syllable(s) for 2"),
        ("GPU\tji1\tzh\n", ":1: 'GPU': zh word 'GPU' must be written in Han"),
        ("x\ty\tfr\n", ":1: 'x': unknown language 'fr'"),
        ("nginx\tengine x\n\nnginx\tengine ex\n", ":3: 'nginx' (en) already defined on line 1"),
        ("\tx\n", ":1: expected word<TAB>pronunciation"),
    ],
)  # fmt: skip
def test_tsv_errors_name_file_and_line(tmp_path, body, message):
    path = write(tmp_path, "bad.tsv", body)
    with pytest.raises(MixvoxError) as err:
        load_lexicon_file(path)
    assert f"{path}{message}" in str(err.value)


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def test_file_level_errors(tmp_path):
    with pytest.raises(MixvoxError, match="lexicon file not found: .*missing.toml"):
        load_lexicon_file(tmp_path / "missing.toml")
    with pytest.raises(MixvoxError, match=r"unknown format '\.json'"):
        load_lexicon_file(write(tmp_path, "lex.json", "{}"))
    with pytest.raises(MixvoxError, match="not UTF-8"):
        load_lexicon_file(write(tmp_path, "lex.tsv", b"\xff\xfe\x00bad"))
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(MixvoxError, match="cannot read lexicon"):
        load_lexicon_file(tmp_path / "dir.toml")


def test_empty_files_give_empty_tables(tmp_path):
    assert load_lexicon_file(write(tmp_path, "e.toml", "")) == {}
    assert load_lexicon_file(write(tmp_path, "e.tsv", "# nothing\n\n")) == {}


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_random_tsv_content_never_crashes(tmp_path_factory, body):
    path = tmp_path_factory.mktemp("fuzz") / "f.tsv"
    path.write_text(body, encoding="utf-8", errors="surrogatepass")
    try:
        tables = load_lexicon_file(path)
    except MixvoxError:
        return
    for lang, table in tables.items():
        assert lang in ("zh", "en")
        assert all(isinstance(e, LexEntry) and e.word == w for w, e in table.items())


# ---------------------------------------------------------------------------------------------
# Built-in lexicon plugin
# ---------------------------------------------------------------------------------------------


def test_builtin_lexicon_content():
    zh, en = builtin_lexicon("zh"), builtin_lexicon("en")
    assert zh["重构"].phonemes == ("chong2", "gou4")
    assert zh["重庆银行"].phonemes == ("chong2", "qing4", "yin2", "hang2")
    assert en["nginx"].respelling == "engine x"
    assert en["k8s"].spoken == "kubernetes"
    assert en["k8s"].phonemes == en["kubernetes"].phonemes
    assert "tech_lexicon.toml" in en["nginx"].source
    assert builtin_lexicon("fr") == {}
    with pytest.raises(TypeError):
        zh["x"] = zh["重构"]  # type: ignore[index]  # shared, so read-only


def test_builtin_words_are_not_case_ambiguous():
    # Lexicon lookups fall back to case-insensitive matching, so no two built-in entries may
    # differ only by case (the fallback would pick one arbitrarily).
    words = list(builtin_lexicon("en"))
    assert len({w.casefold() for w in words}) == len(words)
    lex = Lexicon("en", [builtin_lexicon("en")])
    assert lex.get("NGINX") is builtin_lexicon("en")["nginx"]
    assert lex.get("github") is builtin_lexicon("en")["GitHub"]


def test_builtin_zh_entries_fix_the_default_reading():
    # Each zh entry exists because the generic reading differs; pypinyin is the zh G2P base.
    from pypinyin import Style, lazy_pinyin

    differ = [
        w
        for w, e in builtin_lexicon("zh").items()
        if tuple(lazy_pinyin(w, style=Style.TONE3, neutral_tone_with_five=True)) != e.phonemes
    ]
    assert "重构" in differ and "重定向" in differ and "重试" in differ
    assert len(differ) >= len(builtin_lexicon("zh")) - 2  # the two bank names are examples


def test_builtin_hook():
    impl = lexicons.mixvox_lexicon.mixvox_impl  # type: ignore[attr-defined]
    assert impl["trylast"] is True
    assert mixvox_lexicon(lang="zh") is builtin_lexicon("zh")
    assert mixvox_lexicon(lang="fr") is None
