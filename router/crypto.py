"""Models encrypted at rest: AES-256-GCM per file, keys from files, the environment or plugins.

Why: users pick mixvox for privacy, and a deployment may have to keep licensed or fine-tuned
weights unreadable on disk. This module knows nothing about any particular model: it encrypts
every regular file of a model directory and gives engines the plaintext *in memory only*.

Layout of an encrypted model directory (same relative paths as the plain one, so layout checks
keep working)::

    DST/<rel>                   b"MXVXENC1" + 12-byte nonce + AES-256-GCM(ciphertext + tag)
    DST/mixvox-encrypted.json   {"format", "version", "cipher", "files": {rel: {sha256,
                                 ciphertext_sha256, size}}, "mac"}

Each file has a fresh random nonce; its relative path is bound in as associated data, so two
files cannot be swapped. The manifest lists the SHA-256 of every plaintext and ciphertext and is
itself authenticated (``mac``: HMAC-SHA256 under a key derived from the model key), so a file
cannot be replaced by an older encrypted copy of itself, added or removed unnoticed.

Keys (32 random bytes) are stored base64-encoded in a key file (``mixvox keygen``, mode 0600).
Where a key comes from, first hit wins (:func:`resolve_key`): an explicit key file
(``--key-file`` / ``key_file=``), ``$MIXVOX_MODEL_KEY_FILE``, ``$MIXVOX_MODEL_KEY`` (base64),
then the ``mixvox_model_key(model_dir)`` plugin hook (a KMS or HSM client). A key is never
written to a log or an error message.

Access control as ssh does it: a key file that others can read or write, or a model directory
that others can write, is refused with the ``chmod`` that fixes it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .interfaces import MixvoxError

MAGIC = b"MXVXENC1"
NONCE_BYTES = 12
KEY_BYTES = 32
MANIFEST_NAME = "mixvox-encrypted.json"
FORMAT = "mixvox-encrypted-model"
VERSION = 1
#: Key files are tiny; anything larger is not a key file.
MAX_KEY_FILE_BYTES = 4096
#: Associated-data prefix: binds each ciphertext to this format and its relative path.
_AAD_PREFIX = b"mixvox-model-v1\0"

KEY_FILE_ENV = "MIXVOX_MODEL_KEY_FILE"
KEY_ENV = "MIXVOX_MODEL_KEY"


class CryptoError(MixvoxError):
    """A problem with a key or an encrypted model; the CLI exits with status 2."""

    exit_code = 2


class ModelKeyError(CryptoError):
    """No key, a malformed key, an unsafe key file, or the wrong key."""


class TamperedError(CryptoError):
    """An encrypted file failed authentication or does not match the manifest."""


class UnsafePermissions(CryptoError):
    """A key file or model directory others can read or write."""


# ---------------------------------------------------------------------------------------------
# Keys
# ---------------------------------------------------------------------------------------------


def generate_key() -> bytes:
    """32 bytes from the OS's cryptographic random source."""
    return secrets.token_bytes(KEY_BYTES)


def encode_key(key: bytes) -> str:
    return base64.b64encode(key).decode("ascii")


def decode_key(text: str, source: str) -> bytes:
    """A base64 key (surrounding whitespace ignored); errors name ``source``, never the key."""
    try:
        key = base64.b64decode(text.strip().encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ModelKeyError(f"{source} does not hold a base64 model key") from None
    if len(key) != KEY_BYTES:
        raise ModelKeyError(
            f"{source} holds a {len(key) * 8}-bit key; a {KEY_BYTES * 8}-bit key is needed"
        )
    return key


def write_key_file(path: str | os.PathLike[str]) -> Path:
    """Write a new random key to ``path`` (mode 0600); refuses to overwrite anything."""
    p = Path(path).expanduser()
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        raise CryptoError(f"{p} already exists; refusing to overwrite a key") from None
    except OSError as exc:
        raise CryptoError(f"cannot create the key file {p}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, (encode_key(generate_key()) + "\n").encode("ascii"))
        os.fsync(fd)
    finally:
        os.close(fd)
    return p


def check_key_file_permissions(path: Path, st: os.stat_result) -> None:
    """Refuse a key file that is not a regular file or that group/others can read or write."""
    if not stat.S_ISREG(st.st_mode):
        raise UnsafePermissions(f"key file {path} is not a regular file")
    if os.name == "posix" and st.st_mode & 0o077:
        raise UnsafePermissions(
            f"key file {path} is accessible by others (mode {stat.S_IMODE(st.st_mode):04o}); "
            f"run `chmod 600 {path}`"
        )


def load_key_file(path: str | os.PathLike[str]) -> bytes:
    """Read a key file, refusing unsafe permissions (as ssh does for private keys)."""
    p = Path(path).expanduser()
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ModelKeyError(f"key file {p} does not exist") from None
    except OSError as exc:
        raise ModelKeyError(f"cannot open the key file {p}: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        check_key_file_permissions(p, st)
        data = os.read(fd, MAX_KEY_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_KEY_FILE_BYTES:
        raise ModelKeyError(f"{p} is too large to be a key file")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ModelKeyError(f"{p} does not hold a base64 model key") from None
    return decode_key(text, f"key file {p}")


def key_id(key: bytes) -> str:
    """A short public identifier of a key (tells "wrong key" from "damaged file")."""
    return hashlib.sha256(b"mixvox-key-id\0" + key).hexdigest()[:16]


def _mac_key(key: bytes) -> bytes:
    return hashlib.sha256(b"mixvox-manifest-mac\0" + key).digest()


def resolve_key(
    model_dir: str | os.PathLike[str], key_file: str | os.PathLike[str] | None = None
) -> bytes:
    """The key for ``model_dir``: ``key_file``, ``$MIXVOX_MODEL_KEY_FILE``,
    ``$MIXVOX_MODEL_KEY`` (base64), then the ``mixvox_model_key`` plugin hook."""
    if key_file:
        return load_key_file(key_file)
    env_file = os.environ.get(KEY_FILE_ENV)
    if env_file:
        return load_key_file(env_file)
    env_key = os.environ.get(KEY_ENV)
    if env_key:
        return decode_key(env_key, f"${KEY_ENV}")
    from .registry import get_registry

    got = get_registry().call_first("mixvox_model_key", model_dir=Path(model_dir))
    if got is not None:
        if isinstance(got, str):
            return decode_key(got, "the key-provider plugin's key")
        if isinstance(got, bytes | bytearray) and len(got) == KEY_BYTES:
            return bytes(got)
        raise ModelKeyError("the key-provider plugin returned something that is not a 256-bit key")
    raise ModelKeyError(
        f"{model_dir} is an encrypted model and no key was given: use --key-file KEYFILE "
        f"(key_file= in Python), ${KEY_FILE_ENV}, ${KEY_ENV} (base64), or a key-provider "
        "plugin (mixvox_model_key)"
    )


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def _aead(key: bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    except ImportError:  # pragma: no cover - a declared dependency
        raise CryptoError("model encryption needs the 'cryptography' package") from None
    return AESGCM(key)


def _aad(rel: str) -> bytes:
    return _AAD_PREFIX + rel.encode("utf-8")


def encrypt_bytes(key: bytes, rel: str, data: bytes) -> bytes:
    """One file's encrypted form: magic, fresh nonce, ciphertext and tag (path as AAD)."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    return MAGIC + nonce + _aead(key).encrypt(nonce, data, _aad(rel))


def decrypt_bytes(key: bytes, rel: str, blob: bytes, where: str) -> bytes:
    """Inverse of :func:`encrypt_bytes`; :class:`TamperedError` naming ``where`` on failure."""
    from cryptography.exceptions import InvalidTag

    if not blob.startswith(MAGIC) or len(blob) < len(MAGIC) + NONCE_BYTES + 16:
        raise TamperedError(f"{where} is not a mixvox-encrypted file (damaged or replaced)")
    nonce = blob[len(MAGIC) : len(MAGIC) + NONCE_BYTES]
    try:
        return _aead(key).decrypt(nonce, blob[len(MAGIC) + NONCE_BYTES :], _aad(rel))
    except InvalidTag:
        raise TamperedError(
            f"{where} failed authentication: the file was changed, swapped with another one, "
            "or the key is wrong; nothing was loaded"
        ) from None


def is_encrypted(model_dir: str | os.PathLike[str]) -> bool:
    return (Path(model_dir) / MANIFEST_NAME).is_file()


def check_dir_permissions(model_dir: Path) -> None:
    """Refuse a model directory (or a folder inside it) that group or others can write."""
    if os.name != "posix":
        return
    for folder in [model_dir, *(p for p in model_dir.rglob("*") if p.is_dir())]:
        mode = stat.S_IMODE(folder.lstat().st_mode)
        if mode & 0o022:
            raise UnsafePermissions(
                f"model directory {folder} is writable by others (mode {mode:04o}), so its files "
                f"could be replaced; run `chmod go-w {folder}`"
            )


def _walk(root: Path) -> Iterator[str]:
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_symlink():
            raise CryptoError(f"{p} is a symbolic link; copy the real file into the model first")
        if p.is_file():
            if rel == MANIFEST_NAME:
                continue
            yield rel


def _canonical(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _fresh_dest(dst: Path) -> None:
    if dst.exists() and (not dst.is_dir() or any(dst.iterdir())):
        raise CryptoError(f"{dst} already exists and is not empty; choose a new folder")
    dst.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(dst, 0o700)


def encrypt_model(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], key: bytes
) -> dict[str, Any]:
    """Write an encrypted copy of every regular file under ``src`` into the new folder ``dst``."""
    s, d = Path(src), Path(dst)
    if not s.is_dir():
        raise CryptoError(f"{s} is not a folder")
    if is_encrypted(s):
        raise CryptoError(f"{s} is already encrypted")
    _fresh_dest(d)
    files: dict[str, dict[str, Any]] = {}
    for rel in _walk(s):
        data = (s / rel).read_bytes()
        blob = encrypt_bytes(key, rel, data)
        _write_private(d / rel, blob)
        files[rel] = {
            "sha256": hashlib.sha256(data).hexdigest(),
            "ciphertext_sha256": hashlib.sha256(blob).hexdigest(),
            "size": len(data),
        }
    if not files:
        raise CryptoError(f"{s} holds no files to encrypt")
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "cipher": "AES-256-GCM",
        "key_id": key_id(key),
        "files": files,
    }
    manifest["mac"] = hmac.new(_mac_key(key), _canonical(manifest), "sha256").hexdigest()
    _write_private(d / MANIFEST_NAME, json.dumps(manifest, indent=2, sort_keys=True).encode())
    return manifest


def read_manifest(model_dir: Path, key: bytes) -> dict[str, Any]:
    """The encrypted model's manifest, authenticated with ``key``."""
    path = model_dir / MANIFEST_NAME
    try:
        raw = path.read_bytes()
        if len(raw) > 64 * 1024**2:
            raise ValueError("too large")
        manifest = json.loads(raw)
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise ValueError("not a mixvox encrypted-model manifest")
    except (OSError, ValueError) as exc:
        raise TamperedError(f"cannot read {path}: {exc}") from None
    if manifest.get("version") != VERSION:
        raise CryptoError(f"{path}: unsupported version {manifest.get('version')!r}")
    if manifest.get("key_id") != key_id(key):
        raise ModelKeyError(
            f"wrong key for {model_dir} (the key does not match {path}); nothing loaded"
        )
    body = {k: v for k, v in manifest.items() if k != "mac"}
    want = hmac.new(_mac_key(key), _canonical(body), "sha256").hexdigest()
    if not isinstance(manifest.get("mac"), str) or not hmac.compare_digest(manifest["mac"], want):
        raise TamperedError(f"{path} was changed (its authentication code does not match)")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise TamperedError(f"{path} lists no files")
    for rel in files:
        parts = Path(rel).parts
        if not isinstance(rel, str) or rel.startswith("/") or ".." in parts:
            raise TamperedError(f"{path}: bad file name {rel!r}")
    return manifest


def decrypt_files(model_dir: str | os.PathLike[str], key: bytes) -> dict[str, tuple[bytes, str]]:
    """Every file of an encrypted model, decrypted and verified, in memory: rel -> (bytes,
    plaintext SHA-256). Raises on the first bad file, naming it; nothing partial is returned."""
    root = Path(model_dir)
    check_dir_permissions(root)
    manifest = read_manifest(root, key)
    out: dict[str, tuple[bytes, str]] = {}
    on_disk = set(_walk(root))
    extra = sorted(on_disk - set(manifest["files"]))
    if extra:
        raise TamperedError(f"{root / extra[0]} is not listed in {root / MANIFEST_NAME}")
    for rel, meta in sorted(manifest["files"].items()):
        path = root / rel
        try:
            blob = path.read_bytes()
        except OSError as exc:
            raise TamperedError(f"{path} (listed in the manifest) cannot be read: {exc}") from None
        if hashlib.sha256(blob).hexdigest() != meta.get("ciphertext_sha256"):
            raise TamperedError(f"{path} does not match its manifest entry (changed or replaced)")
        data = decrypt_bytes(key, rel, blob, str(path))
        digest = hashlib.sha256(data).hexdigest()
        if digest != meta.get("sha256"):
            raise TamperedError(f"{path} decrypts to other bytes than the manifest records")
        out[rel] = (data, digest)
    return out


def decrypt_model(
    src: str | os.PathLike[str], dst: str | os.PathLike[str], key: bytes
) -> list[str]:
    """Write the plaintext of an encrypted model into the new folder ``dst`` (mode 0600 files)."""
    files = decrypt_files(src, key)
    d = Path(dst)
    _fresh_dest(d)
    for rel, (data, _digest) in files.items():
        _write_private(d / rel, data)
    return sorted(files)
