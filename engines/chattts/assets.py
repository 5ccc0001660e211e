"""ChatTTS model directories: where they are, what they must hold, and whether they are intact.

A *model directory* is the folder that holds ``asset/`` in the official 2Noise/ChatTTS layout::

    asset/gpt/config.json  asset/gpt/model.safetensors  asset/Embed.safetensors
    asset/Decoder.safetensors  asset/DVAE.safetensors  asset/Vocos.safetensors
    asset/tokenizer/{tokenizer.json, tokenizer_config.json, special_tokens_map.json}

Where it is looked for, first hit wins (:func:`candidate_dirs`):

1. an explicit ``model_dir`` (``--model-dir``),
2. ``$MIXVOX_CHATTTS_DIR``,
3. ``<user data dir>/chattts`` -- ``platformdirs.user_data_dir("mixvox")``, or
   ``$MIXVOX_DATA_DIR``. This is where ``mixvox download`` puts the weights. A *data* dir rather
   than a cache dir on purpose: cache cleaners may empty ``~/.cache`` at any time, and the
   weights are a 1 GB download, whereas the ONNX graphs we derive from them are cheap to rebuild
   and do live in the cache dir,
4. ``<user cache dir>/chattts`` (``$MIXVOX_CACHE_DIR`` or ``platformdirs.user_cache_dir``), for
   users who put the weights there by hand.

Integrity: every file is checked against a pinned SHA-256 (:data:`OFFICIAL_SHA256`, the
published hashes of the official release). A model directory may carry its own ``sha256.json``
(same format: path inside the model dir -> hex digest) for fine-tuned or test weights; it then
replaces the official manifest. Note what that means: a bundled manifest protects against
corruption and truncation, not against someone who can write the whole directory.

Hashing 1 GB takes seconds, so a positive verdict is remembered in a small JSON file in the
cache dir, keyed by (absolute path, device, inode, size, mtime_ns, ctime_ns, expected hash).
Size and mtime alone can be restored after an in-place edit (``os.utime``); the inode change
time cannot be set by a user, so any write, rename or ``utime`` changes the key and forces a
fresh hash. ``verify="force"`` ignores the remembered verdicts.

Loaders read weights through :func:`read_asset`, which returns the bytes together with the
SHA-256 *of those bytes*: the remembered verdict is used only when the open file's stat (before
and after the read) is the verified one, else the bytes are hashed. Derived caches (ONNX graphs)
are keyed by that hash, so a graph built from bytes that were not the verified ones is never
reused for the real weights. Decrypted files of an encrypted model (:mod:`mixvox.crypto`) are
served from memory by the same function and never touch the disk.

Weights load from safetensors only. ``.pt``/``.pth``/``.bin``/``.ckpt`` files are Python
pickles, and unpickling runs arbitrary code from the file, so they are never loaded: a
directory that has only pickled weights is refused with an explanation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from mixvox.interfaces import MixvoxError

log = logging.getLogger("mixvox.chattts")

#: SHA-256 of every file of the official ChatTTS release, by path inside the model directory.
OFFICIAL_SHA256: dict[str, str] = {
    "asset/Decoder.safetensors": "77aa55e0a977949c4733df3c6f876fa85860d3298cba63295a7bc6901729d4e0",
    "asset/DVAE.safetensors": "1d0b044a8368c0513100a2eca98456b289e6be6a18b7a63be1bcaa315ea874d9",
    "asset/Embed.safetensors": "2ff0be7134934155741b643b74e32fb6bf3eec41257984459b2ed60cdb4c48b0",
    "asset/Vocos.safetensors": "07e5561491cce41f7f90cfdb94b2ff263ff5742c3d89339db99b17ad82cc3f44",
    "asset/gpt/config.json": "0aaa1ecd96c49ad4f473459eb1982fa7ad79fa5de08cde2781bf6ad1f9a0c236",
    "asset/gpt/model.safetensors": "cd0806fd971f52f6a22c923ec64982b305e817bcc41ca83417fcf9141b984a0f",
    "asset/tokenizer/special_tokens_map.json": (
        "bd0ac9d9bb1657996b5c5fbcaa7d80f8de530d01a283da97f89deae5b1b8d011"
    ),
    "asset/tokenizer/tokenizer_config.json": (
        "43e9d658b554fa5ee8d8e1d763349323bfef1ed7a89c0794220ab8861387d421"
    ),
    "asset/tokenizer/tokenizer.json": (
        "843838a64e121e23e774cc75874c6fe862198d9f7dd43747914633a8fd89c20e"
    ),
}

#: Files every model directory must have (the official manifest's keys).
REQUIRED_FILES: tuple[str, ...] = tuple(sorted(OFFICIAL_SHA256))

#: The name of a model directory's own manifest.
MANIFEST_NAME = "sha256.json"

#: Suffixes of pickle-based checkpoints, which are never loaded.
PICKLE_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".pkl", ".pickle")

_HEX64 = re.compile(r"[0-9a-f]{64}")

GET_WEIGHTS_HINT = (
    "run `mixvox download` (fetches the official weights from Hugging Face into "
    "{default}), or point --model-dir / MIXVOX_CHATTTS_DIR at a folder that holds asset/"
)

VerifyMode = bool | Literal["force"]


# ---------------------------------------------------------------------------------------------
# Locations
# ---------------------------------------------------------------------------------------------


def cache_dir() -> Path:
    """mixvox's cache dir: ``$MIXVOX_CACHE_DIR`` or ``platformdirs.user_cache_dir("mixvox")``."""
    env = os.environ.get("MIXVOX_CACHE_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("mixvox"))


def data_dir() -> Path:
    """mixvox's data dir: ``$MIXVOX_DATA_DIR`` or ``platformdirs.user_data_dir("mixvox")``."""
    env = os.environ.get("MIXVOX_DATA_DIR")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_data_dir("mixvox"))


def default_model_dir() -> Path:
    """Where ``mixvox download`` puts the weights unless told otherwise."""
    return data_dir() / "chattts"


def get_weights_hint() -> str:
    return GET_WEIGHTS_HINT.format(default=default_model_dir())


def candidate_dirs(model_dir: str | os.PathLike[str] | None = None) -> list[tuple[str, Path]]:
    """The places searched for a model directory, in order, as ``(how it was named, path)``.

    An explicit ``model_dir`` is the only candidate when given: a user who names a folder wants
    that folder, not a silent fallback to another copy.
    """
    if model_dir is not None:
        return [("--model-dir", Path(model_dir).expanduser())]
    out: list[tuple[str, Path]] = []
    env = os.environ.get("MIXVOX_CHATTTS_DIR")
    if env:
        out.append(("MIXVOX_CHATTTS_DIR", Path(env).expanduser()))
    out.append(("user data dir", default_model_dir()))
    out.append(("user cache dir", cache_dir() / "chattts"))
    return out


def layout_problem(root: Path) -> str | None:
    """A cheap look (no hashing) at whether ``root`` holds a complete model; ``None`` if so."""
    if not root.is_dir():
        return f"{root} does not exist"
    if not (root / "asset").is_dir():
        hint = (
            " (point at the folder that holds asset/, not at asset/ itself)"
            if (root.name == "asset")
            else ""
        )
        return f"{root} has no asset/ folder{hint}"
    missing = [rel for rel in REQUIRED_FILES if not (root / rel).is_file()]
    if missing:
        pickles = _pickles(root)
        extra = ""
        if pickles:
            extra = (
                f"; it has pickled checkpoints ({', '.join(p.name for p in pickles[:4])}), "
                "which mixvox never loads because unpickling runs arbitrary code"
            )
        return f"{root} lacks {', '.join(missing)}{extra}"
    return None


def find_model_dir(model_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The first candidate directory that looks complete, or ``None``."""
    for _how, path in candidate_dirs(model_dir):
        if layout_problem(path) is None:
            return path
    return None


def resolve_model_dir(model_dir: str | os.PathLike[str] | None = None) -> Path:
    """Like :func:`find_model_dir` but raises a :class:`MixvoxError` saying where it looked."""
    found = find_model_dir(model_dir)
    if found is not None:
        return found
    raise MixvoxError(
        "no ChatTTS model found: "
        + "; ".join(f"{how}: {layout_problem(path)}" for how, path in candidate_dirs(model_dir))
        + ". To get the weights, "
        + get_weights_hint()
    )


def _pickles(root: Path) -> list[Path]:
    asset = root / "asset"
    if not asset.is_dir():
        return []
    return sorted(
        p for p in asset.rglob("*") if p.is_file() and p.suffix.lower() in PICKLE_SUFFIXES
    )


# ---------------------------------------------------------------------------------------------
# Manifests
# ---------------------------------------------------------------------------------------------


def parse_manifest(data: object, source: str) -> dict[str, str]:
    """Validate a manifest (``{"asset/...": "<64 hex>"}``) and return it with lower-case hashes.

    Paths must be relative, inside ``asset/``, without ``..``: a manifest must not be able to
    make us read files elsewhere.
    """
    if not isinstance(data, dict) or not data:
        raise MixvoxError(f"{source}: a manifest must be a non-empty JSON object path -> sha256")
    out: dict[str, str] = {}
    for rel, digest in data.items():
        if not isinstance(rel, str) or not isinstance(digest, str):
            raise MixvoxError(f"{source}: entry {rel!r} must map a path to a hex string")
        parts = Path(rel).parts
        if rel.startswith(("/", "\\")) or ".." in parts or not parts or parts[0] != "asset":
            raise MixvoxError(f"{source}: path {rel!r} must be relative and inside asset/")
        d = digest.strip().lower()
        if not _HEX64.fullmatch(d):
            raise MixvoxError(f"{source}: {rel!r} has no valid SHA-256 ({digest!r})")
        if Path(rel).suffix.lower() in PICKLE_SUFFIXES:
            raise MixvoxError(
                f"{source}: lists the pickled checkpoint {rel!r}; mixvox loads weights from "
                "safetensors only (unpickling runs arbitrary code)"
            )
        out[rel] = d
    missing = [r for r in REQUIRED_FILES if r not in out]
    if missing:
        raise MixvoxError(f"{source}: does not list {', '.join(missing)}")
    return out


def load_manifest(root: Path) -> tuple[dict[str, str], str]:
    """The manifest that applies to ``root`` and where it came from.

    ``root/sha256.json`` when present (fine-tuned or test weights), else the official one.
    """
    own = root / MANIFEST_NAME
    if own.is_file():
        try:
            data = json.loads(read_asset_text(own))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise MixvoxError(f"cannot read the manifest {own}: {exc}") from None
        return parse_manifest(data, str(own)), str(own)
    return dict(OFFICIAL_SHA256), "the official ChatTTS manifest"


# ---------------------------------------------------------------------------------------------
# Hashing with remembered verdicts
# ---------------------------------------------------------------------------------------------


def sha256_file(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file, read in 1 MiB blocks (the one file hasher of the ChatTTS engine)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verdict_cache_path() -> Path:
    return cache_dir() / "chattts-verified.json"


def stat_identity(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """(device, inode, size, mtime_ns, ctime_ns): what changes whenever a file's bytes may have.

    ``ctime`` is set by the kernel on every write, rename or ``utime`` and cannot be chosen by
    a user, so an in-place edit that restores size and mtime still changes it.
    """
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def verdict_key(path: Path, st: os.stat_result, expected: str) -> str:
    """Key of the verdict "``path`` as it is now (:func:`stat_identity`) has SHA-256
    ``expected``"."""
    blob = json.dumps([2, str(path), *stat_identity(st), expected])
    return hashlib.sha256(blob.encode()).hexdigest()


# ---------------------------------------------------------------------------------------------
# Reading asset bytes (plain files, or decrypted files held in memory)
# ---------------------------------------------------------------------------------------------

_PLAINTEXT: dict[str, tuple[bytes, str]] = {}
_PLAINTEXT_LOCK = threading.Lock()
#: Open encrypted model roots and how many loaders hold each.
_OPEN: dict[str, int] = {}
#: SHA-256 of every plaintext of an open encrypted model (-> how many files hold it): anything
#: derived from them (cached graphs) must not be written to disk in the clear.
_SECRET_HASHES: dict[str, int] = {}
#: Which in-memory paths hold a secret plaintext (to drop the hash with the file).
_SECRET_PATHS: set[str] = set()


def register_plaintext(path: Path, data: bytes, sha256: str, *, secret: bool = True) -> None:
    """Serve ``path`` from memory (a decrypted file of an encrypted model) in :func:`read_asset`."""
    key = str(Path(path).absolute())
    with _PLAINTEXT_LOCK:
        if key in _SECRET_PATHS:
            _drop_secret(key)
        _PLAINTEXT[key] = (data, sha256)
        if secret:
            _SECRET_HASHES[sha256] = _SECRET_HASHES.get(sha256, 0) + 1
            _SECRET_PATHS.add(key)


def _drop_secret(key: str) -> None:
    """(Lock held.) Forget that the plaintext at ``key`` is secret."""
    _SECRET_PATHS.discard(key)
    hit = _PLAINTEXT.get(key)
    if hit is None:
        return
    left = _SECRET_HASHES.get(hit[1], 1) - 1
    if left > 0:
        _SECRET_HASHES[hit[1]] = left
    else:
        _SECRET_HASHES.pop(hit[1], None)


def is_secret(values: Iterable[object]) -> bool:
    """Whether any of ``values`` is the hash of a decrypted (encrypted-at-rest) file."""
    with _PLAINTEXT_LOCK:
        return any(isinstance(v, str) and v in _SECRET_HASHES for v in values)


def forget_plaintext(root: Path) -> None:
    """Release one hold on the in-memory plaintext under ``root``; the last one drops it."""
    root_key = str(Path(root).absolute())
    prefix = root_key + os.sep
    with _PLAINTEXT_LOCK:
        left = _OPEN.get(root_key, 1) - 1
        if left > 0:
            _OPEN[root_key] = left
            return
        _OPEN.pop(root_key, None)
        for key in [k for k in _PLAINTEXT if k.startswith(prefix)]:
            if key in _SECRET_PATHS:
                _drop_secret(key)
            del _PLAINTEXT[key]


def take_plaintext(path: Path) -> bytes | None:
    """Remove and return the in-memory bytes of ``path`` (a graph built for one session)."""
    with _PLAINTEXT_LOCK:
        hit = _PLAINTEXT.pop(str(Path(path).absolute()), None)
    return hit[0] if hit is not None else None


def is_in_memory(path: Path) -> bool:
    """Whether ``path`` is served decrypted from memory (its model is encrypted)."""
    with _PLAINTEXT_LOCK:
        return str(Path(path).absolute()) in _PLAINTEXT


def hash_bytes(data: bytes) -> str:
    """SHA-256 of bytes read by :func:`read_asset` (one place, so tests can count hashing)."""
    return hashlib.sha256(data).hexdigest()


def read_asset(
    path: str | os.PathLike[str],
    expected: str | None = None,
    cache: VerdictCache | None = None,
    *,
    need_hash: bool = True,
) -> tuple[bytes, str]:
    """The bytes of an asset file and the SHA-256 of exactly those bytes.

    ``expected``: the hash a verification vouched for. It is returned without hashing only
    when a remembered verdict matches the open file's identity before *and* after the read
    (nothing changed it in between); otherwise the bytes read are hashed. ``need_hash=False``:
    the caller keys nothing on the hash (``""`` is returned instead of hashing).
    """
    p = Path(path).absolute()
    with _PLAINTEXT_LOCK:
        hit = _PLAINTEXT.get(str(p))
    if hit is not None:
        return hit
    with open(p, "rb") as fh:
        before = os.fstat(fh.fileno())
        data = fh.read()
        after = os.fstat(fh.fileno())
    if (
        expected
        and stat_identity(before) == stat_identity(after)
        and (cache or VerdictCache()).hit(verdict_key(p, before, expected))
    ):
        return data, expected
    return data, hash_bytes(data) if need_hash else ""


def read_asset_text(path: str | os.PathLike[str]) -> str:
    """A text asset (JSON config, tokenizer) as UTF-8, from disk or from memory."""
    return read_asset(path, need_hash=False)[0].decode("utf-8")


def load_safetensors(
    path: str | os.PathLike[str], expected: str | None = None, *, need_hash: bool = True
) -> tuple[dict[str, np.ndarray], str]:
    """Tensors of a safetensors file (read from bytes) and the SHA-256 of those bytes."""
    from safetensors.numpy import load

    data, digest = read_asset(path, expected, need_hash=need_hash)
    return load(data), digest


class VerdictCache:
    """Remembered "this file had this hash" verdicts (positive ones only).

    A failure is never remembered: a bad file is re-hashed every time until it is fixed, so the
    error can never outlive the fix. The file is rewritten atomically; a corrupt or unreadable
    cache is treated as empty.
    """

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or verdict_cache_path()
        self._entries: dict[str, float] | None = None
        self.dirty = False

    def _load(self) -> dict[str, float]:
        if self._entries is None:
            try:
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                entries = raw.get("verified", {}) if isinstance(raw, dict) else {}
                self._entries = {
                    k: float(v) for k, v in entries.items() if isinstance(v, int | float)
                }
            except (OSError, ValueError, AttributeError):
                self._entries = {}
        return self._entries

    def hit(self, key: str) -> bool:
        return key in self._load()

    def add(self, key: str) -> None:
        self._load()[key] = time.time()
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        entries = self._load()
        if len(entries) > 1000:  # keep the file small: drop the oldest verdicts
            keep = sorted(entries.items(), key=lambda kv: kv[1])[-1000:]
            entries = dict(keep)
            self._entries = entries
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".verified-", suffix=".json", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"version": 1, "verified": entries}, fh)
            os.replace(tmp, self.path)
            self.dirty = False
        except OSError as exc:  # a read-only cache only costs time, never correctness
            log.debug("cannot write the verdict cache %s: %s", self.path, exc)


@dataclass
class VerifyReport:
    """What :func:`verify_files` did: which files were hashed and which came from the cache."""

    hashed: list[str] = field(default_factory=list)
    cached: list[str] = field(default_factory=list)


def verify_files(
    root: Path,
    manifest: Mapping[str, str],
    *,
    force: bool = False,
    cache: VerdictCache | None = None,
    manifest_source: str = "the manifest",
) -> VerifyReport:
    """Check every file of ``manifest`` under ``root``; raise :class:`MixvoxError` on the first
    missing or mismatching one, naming it and saying what to do."""
    cache = cache or VerdictCache()
    report = VerifyReport()
    try:
        for rel, expected in sorted(manifest.items()):
            path = (root / rel).absolute()
            try:
                st = path.stat()
            except OSError:
                raise MixvoxError(
                    f"ChatTTS asset {rel} is missing in {root} (required by {manifest_source}). "
                    "To get the weights, " + get_weights_hint()
                ) from None
            key = verdict_key(path, st, expected)
            with _PLAINTEXT_LOCK:
                in_memory = _PLAINTEXT.get(str(path))
            if in_memory is None and not force and cache.hit(key):
                report.cached.append(rel)
                continue
            # decrypted files were hashed (and authenticated) when they were decrypted
            actual = in_memory[1] if in_memory is not None else sha256_file(path)
            if actual != expected:
                if in_memory is not None:
                    raise MixvoxError(
                        f"ChatTTS asset {rel} in the encrypted model {root} is not the expected "
                        f"file: its SHA-256 is {actual}, {manifest_source} expects {expected}"
                    )
                raise MixvoxError(
                    f"ChatTTS asset {rel} in {root} is damaged or not the expected file: its "
                    f"SHA-256 is {actual}, {manifest_source} expects {expected}. Delete it and "
                    "run `mixvox download` again (or restore the file); for fine-tuned weights, "
                    f"put their own {MANIFEST_NAME} next to asset/."
                )
            if in_memory is None:
                cache.add(key)
            report.hashed.append(rel)
    finally:
        cache.save()
    return report


# ---------------------------------------------------------------------------------------------
# The assets of one model
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelAssets:
    """Paths of a verified model directory (what the loaders of each model need)."""

    root: Path
    manifest: dict[str, str]
    manifest_source: str
    #: True when every file was checked against ``manifest`` (``verify`` not ``False``).
    verified: bool = False
    #: True for an encrypted model: its plaintext is in memory (:func:`read_asset`) only.
    encrypted: bool = False

    def release(self) -> None:
        """Drop the in-memory plaintext of an encrypted model (after its engine closed)."""
        if self.encrypted:
            forget_plaintext(self.root)

    def verified_sha256(self, rel: str) -> str | None:
        """The hash of ``rel`` when it was verified (loaders can skip hashing it again)."""
        return self.manifest.get(rel) if self.verified else None

    @property
    def asset(self) -> Path:
        return self.root / "asset"

    @property
    def gpt_dir(self) -> Path:
        return self.asset / "gpt"

    @property
    def gpt_config(self) -> Path:
        return self.gpt_dir / "config.json"

    @property
    def gpt_weights(self) -> Path:
        return self.gpt_dir / "model.safetensors"

    @property
    def embed(self) -> Path:
        return self.asset / "Embed.safetensors"

    @property
    def decoder(self) -> Path:
        return self.asset / "Decoder.safetensors"

    @property
    def dvae(self) -> Path:
        return self.asset / "DVAE.safetensors"

    @property
    def vocos(self) -> Path:
        return self.asset / "Vocos.safetensors"

    @property
    def tokenizer_dir(self) -> Path:
        return self.asset / "tokenizer"

    @property
    def tokenizer_json(self) -> Path:
        return self.tokenizer_dir / "tokenizer.json"

    def gpt_config_dict(self) -> dict:
        try:
            return json.loads(read_asset_text(self.gpt_config))
        except (OSError, ValueError) as exc:
            raise MixvoxError(f"cannot read {self.gpt_config}: {exc}") from None


def check_no_pickles_needed(root: Path) -> None:
    """Refuse a directory whose weights exist only as pickles; warn about stray pickles."""
    pickles = _pickles(root)
    if not pickles:
        return
    names = ", ".join(str(p.relative_to(root)) for p in pickles[:6])
    if any(not (root / rel).is_file() for rel in REQUIRED_FILES):
        raise MixvoxError(
            f"{root} holds pickled checkpoints ({names}) instead of the safetensors files "
            "mixvox needs. mixvox never loads pickles: unpickling a .pt/.pth/.bin/.ckpt file "
            "runs arbitrary code the file contains. Get the safetensors release with "
            "`mixvox download`."
        )
    log.info("ignoring pickled checkpoints in %s (never loaded): %s", root, names)


def open_encrypted(root: Path, key_file: str | os.PathLike[str] | None = None) -> bool:
    """Decrypt an encrypted model directory (:mod:`mixvox.crypto`) into memory; ``False`` for a
    plain one. The plaintext is served by :func:`read_asset` until :func:`forget_plaintext`."""
    from mixvox import crypto

    if not crypto.is_encrypted(root):
        if key_file is not None:
            log.info("%s is not encrypted; the key file is not needed", root)
        return False
    key = crypto.resolve_key(root, key_file)
    files = crypto.decrypt_files(root, key)
    for rel, (data, digest) in files.items():
        register_plaintext(root / rel, data, digest)
    with _PLAINTEXT_LOCK:
        _OPEN[str(root)] = _OPEN.get(str(root), 0) + 1
    return True


def load_assets(
    model_dir: str | os.PathLike[str] | None = None,
    *,
    verify: VerifyMode = True,
    cache: VerdictCache | None = None,
    key_file: str | os.PathLike[str] | None = None,
) -> ModelAssets:
    """Find the model directory, check its layout and (unless ``verify=False``) every hash.

    ``verify=True`` uses remembered verdicts, ``verify="force"`` re-hashes every file. An
    encrypted directory is decrypted into memory first (key from ``key_file`` or the other
    sources of :func:`mixvox.crypto.resolve_key`); every file is then authenticated, and the
    ChatTTS hashes are checked as well (even with ``verify=False``: they cost nothing then).
    """
    if model_dir is not None:
        root = Path(model_dir).expanduser()
        if root.is_dir():
            check_no_pickles_needed(root)
        problem = layout_problem(root)
        if problem is not None:
            raise MixvoxError(
                f"not a ChatTTS model directory: {problem}. To get the weights, "
                + get_weights_hint()
            )
    else:
        root = resolve_model_dir(None)
    check_no_pickles_needed(root)
    encrypted = open_encrypted(root.absolute(), key_file)
    try:
        manifest, source = load_manifest(root)
        if verify or encrypted:
            verify_files(
                root.absolute(),
                manifest,
                force=(verify == "force"),
                cache=cache,
                manifest_source=source,
            )
    except BaseException:
        if encrypted:
            forget_plaintext(root)
        raise
    return ModelAssets(
        root=root,
        manifest=manifest,
        manifest_source=source,
        verified=bool(verify) or encrypted,
        encrypted=encrypted,
    )


def write_manifest(root: Path, files: Iterable[str] | None = None) -> dict[str, str]:
    """Hash ``files`` (default: every file under ``root/asset``) into ``root/sha256.json``."""
    rels = (
        sorted(files)
        if files is not None
        else sorted(
            p.relative_to(root).as_posix() for p in (root / "asset").rglob("*") if p.is_file()
        )
    )
    manifest = {rel: sha256_file(root / rel) for rel in rels}
    (root / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest
