"""API keys and the bind rule of ``mixvox serve``.

Keys come from ``MIXVOX_API_KEYS`` (comma-separated) and/or ``--api-key-file`` (one per line,
``#`` comments). The file must not be readable or writable by group or others (like ssh's
key files), because a key in a world-readable file is no secret. Keys are compared in constant
time against every configured key (no early exit that would tell which one nearly matched),
and a key never appears in a log line: requests are logged with the key's position
(``key1``, ``key2``...).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from mixvox.interfaces import MixvoxError

ENV_KEYS = "MIXVOX_API_KEYS"
#: Shortest accepted key: a guessable key is worse than none, because it looks safe.
MIN_KEY_LENGTH = 16


class KeyFileError(MixvoxError):
    """The key file is missing, unreadable, too open or holds a bad key."""


def _check_key(key: str, where: str) -> str:
    if len(key) < MIN_KEY_LENGTH:
        raise KeyFileError(f"{where}: an API key must be at least {MIN_KEY_LENGTH} characters")
    if any(c.isspace() or not c.isprintable() for c in key):
        raise KeyFileError(f"{where}: an API key must be printable, without spaces")
    return key


def read_key_file(path: str | os.PathLike[str]) -> list[str]:
    """Keys from ``path``; refuses a file that group or others may read or write."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise KeyFileError(f"API key file not found: {p}") from None
    except OSError as exc:
        raise KeyFileError(f"cannot read API key file {p}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise KeyFileError(f"API key file {p} is not a regular file")
    if st.st_mode & 0o077:
        raise KeyFileError(
            f"API key file {p} has mode {stat.S_IMODE(st.st_mode):03o}: other users could "
            f"read it; run `chmod 600 {p}`"
        )
    try:
        text = p.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KeyFileError(f"cannot read API key file {p}: {exc}") from None
    keys = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            keys.append(_check_key(line, f"{p}:{n}"))
    if not keys:
        raise KeyFileError(f"API key file {p} holds no key")
    return keys


def load_keys(
    key_file: str | os.PathLike[str] | None, env: dict[str, str] | None = None
) -> list[str]:
    """All configured keys: ``MIXVOX_API_KEYS`` first, then the key file's."""
    environ = os.environ if env is None else env
    keys = [
        _check_key(k.strip(), f"${ENV_KEYS}")
        for k in environ.get(ENV_KEYS, "").split(",")
        if k.strip()
    ]
    if key_file is not None:
        keys.extend(read_key_file(key_file))
    return list(dict.fromkeys(keys))  # duplicates once, order kept


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to anything


def check_bind(host: str, keys: list[str], insecure_no_auth: bool) -> str | None:
    """``None`` when the server may start; else why not. A warning text when it is open."""
    if keys or is_loopback(host):
        return None
    if insecure_no_auth:
        return None
    return (
        f"refusing to listen on {host} without API keys: anyone who can reach this address "
        f"could use the server. Set {ENV_KEYS} or --api-key-file, bind to 127.0.0.1, or pass "
        "--insecure-no-auth if you really mean it"
    )


@dataclass(frozen=True)
class KeyRing:
    """The configured keys; :meth:`match` says which one a request carries."""

    keys: tuple[bytes, ...]

    @classmethod
    def of(cls, keys: list[str]) -> KeyRing:
        return cls(tuple(k.encode("utf-8") for k in keys))

    @property
    def enabled(self) -> bool:
        return bool(self.keys)

    def match(self, authorization: str | None) -> str | None:
        """``key<N>`` for a valid ``Bearer`` header, else ``None``. Constant time per key."""
        if not authorization:
            return None
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return None
        given = token.strip().encode("utf-8", "replace")
        found = None
        for n, key in enumerate(self.keys, 1):
            if hmac.compare_digest(given, key) and found is None:
                found = f"key{n}"
        return found
