"""The server's pieces without a server: keys, the bind rule, voices, the SSML depth scan."""

from __future__ import annotations

import os

import pytest

from mixvox.interfaces import MixvoxError
from mixvox.server.security import KeyFileError, KeyRing, check_bind, load_keys, read_key_file
from mixvox.server.voices import UnknownVoice, Voices

KEY = "k" * 20


def test_keyring_matches_bearer_only():
    ring = KeyRing.of([KEY, "second-key-0123456789"])
    assert ring.match(f"Bearer {KEY}") == "key1"
    assert ring.match("bearer second-key-0123456789") == "key2"
    for bad in (None, "", KEY, f"Basic {KEY}", f"Bearer {KEY}x", "Bearer ", f"Bearer {KEY[:-1]}"):
        assert ring.match(bad) is None
    assert not KeyRing.of([]).enabled


def test_keys_from_env_and_file(tmp_path):
    f = tmp_path / "keys"
    f.write_text(f"# comment\n\n{KEY}\n", "utf-8")
    os.chmod(f, 0o600)
    assert load_keys(f, env={"MIXVOX_API_KEYS": f" other-key-0123456789 ,{KEY}"}) == [
        "other-key-0123456789",
        KEY,
    ]
    os.chmod(f, 0o640)
    with pytest.raises(KeyFileError, match="chmod 600"):
        read_key_file(f)
    with pytest.raises(KeyFileError, match="not found"):
        read_key_file(tmp_path / "nope")
    with pytest.raises(KeyFileError, match="at least 16"):
        load_keys(None, env={"MIXVOX_API_KEYS": "short"})
    empty = tmp_path / "empty"
    empty.write_text("# nothing\n", "utf-8")
    os.chmod(empty, 0o600)
    with pytest.raises(KeyFileError, match="no key"):
        read_key_file(empty)


@pytest.mark.parametrize(
    ("host", "keys", "insecure", "ok"),
    [
        ("127.0.0.1", [], False, True),
        ("::1", [], False, True),
        ("localhost", [], False, True),
        ("127.0.0.2", [], False, True),
        ("0.0.0.0", [], False, False),
        ("192.168.1.5", [], False, False),
        ("example.org", [], False, False),
        ("0.0.0.0", [KEY], False, True),
        ("0.0.0.0", [], True, True),
    ],
)
def test_bind_rule(host, keys, insecure, ok):
    assert (check_bind(host, keys, insecure) is None) == ok


def test_voices_are_names_never_paths():
    v = Voices({"narrator": "seed:5"}, None)
    assert v.resolve("narrator") == "seed:5"
    assert v.resolve("alloy") is None and v.resolve("default") is None
    assert v.resolve("seed:42") == "seed:42"
    for bad in ("@/etc/passwd", "../x", "/tmp/spk.txt", "seed:-1", "seed:99999999999", "蘁淰"):
        with pytest.raises(UnknownVoice):
            v.resolve(bad)
    e = Voices({}, ["f1", "m3"])
    assert e.resolve("f1") == "f1"
    with pytest.raises(UnknownVoice):
        e.resolve("seed:1")  # an engine that lists its voices takes only those
    with pytest.raises(MixvoxError):
        Voices({"../evil": "x"}, None)


def test_ssml_depth_scan():
    pytest.importorskip("fastapi")
    from mixvox.server.app import ssml_depth

    assert ssml_depth("<speak>hi</speak>") == 1
    assert ssml_depth("<speak><p><s>a</s><break time='1s'/></p></speak>") == 3
    assert ssml_depth("<speak>" + "<p>" * 50 + "</p>" * 50 + "</speak>") == 51
