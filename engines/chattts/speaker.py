"""ChatTTS speakers: the vector injected at ``[spk_emb]``, and the string form users share.

The shared form (what ChatTTS WebUIs print and forums paste) is the float16 vector's raw bytes,
compressed with LZMA2 in *raw* format (no container header; preset 9 | extreme), then written as
base16384 text -- CJK-looking characters, ~40 of them for a 32-dim test vector and about 1 200
for a real 768-dim one. Decoding is bit-exact; so is our encoder's round trip.

Random speakers: ``randn(dim) * std + mean`` with the per-dimension statistics of real speakers
(``spk_stat``: row 0 std, row 1 mean, float16 ``[2, 768]``). The reference draws with torch's
RNG; we use numpy's seeded ``Generator`` (PCG64), so ``seed:42`` here is a *different* voice
than seed 42 in the reference -- but the same voice on every machine and every run of mixvox.
The statistics ship with mixvox (``data/spk_stat.npy``); a model directory may bring its own
``asset/spk_stat.npy`` (models with another hidden size). When no statistics of the model's size
exist (tiny test models), a standard normal draw is used: the vector is L2-normalised before it
is injected, so only its direction matters.
"""

from __future__ import annotations

import lzma
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mixvox.interfaces import MixvoxError

_FILTERS = [{"id": lzma.FILTER_LZMA2, "preset": 9 | lzma.PRESET_EXTREME}]
#: Largest vector we accept (float16 values); real ones have 768. Bounds the decompressed size,
#: so a crafted string cannot make us inflate gigabytes.
MAX_DIM = 8192

_PACKAGE_STAT = Path(__file__).with_name("data") / "spk_stat.npy"


def _is_b14_char(ch: str) -> bool:
    o = ord(ch)
    return 0x4E00 <= o <= 0x8DFF or 0x3D01 <= o <= 0x3D06


def encode_speaker(vector: np.ndarray) -> str:
    """The shareable string of a speaker vector (stored as float16)."""
    import pybase16384 as b14

    v = np.asarray(vector)
    if v.ndim != 1 or v.size == 0:
        raise MixvoxError(f"a speaker vector must be 1-D and non-empty, got shape {v.shape}")
    raw = np.ascontiguousarray(v.astype("<f2")).tobytes()
    return b14.encode_to_string(lzma.compress(raw, format=lzma.FORMAT_RAW, filters=_FILTERS))


def decode_speaker(text: str) -> np.ndarray:
    """The float16 vector of a speaker string. Whitespace (line wrapping) is ignored."""
    import pybase16384 as b14

    s = "".join(text.split())
    if not s:
        raise MixvoxError("empty speaker string")
    bad = next((ch for ch in s if not _is_b14_char(ch)), None)
    if bad is not None:
        raise MixvoxError(
            f"not a ChatTTS speaker string: character {bad!r} is not base16384 text "
            "(use seed:N, @file.npy, @file.txt or a string from `mixvox speaker new`)"
        )
    try:
        packed = b14.decode_from_string(s)
        dec = lzma.LZMADecompressor(format=lzma.FORMAT_RAW, filters=_FILTERS)
        raw = dec.decompress(packed, max_length=MAX_DIM * 2 + 1)
    except (lzma.LZMAError, ValueError) as exc:
        raise MixvoxError(f"not a ChatTTS speaker string (cannot decompress: {exc})") from None
    if len(raw) > MAX_DIM * 2:
        raise MixvoxError(f"speaker string too large (more than {MAX_DIM} values)")
    if not raw or len(raw) % 2:
        raise MixvoxError("not a ChatTTS speaker string (odd number of bytes)")
    vec = np.frombuffer(raw, dtype="<f2").astype(np.float16)
    _check_finite(vec, "speaker string")
    return vec


def _check_finite(vec: np.ndarray, what: str) -> None:
    if not np.all(np.isfinite(vec.astype(np.float32))):
        raise MixvoxError(f"{what}: the speaker vector has NaN or infinite values")
    if not np.any(vec):
        raise MixvoxError(f"{what}: the speaker vector is all zeros")


def load_spk_stat(model_dir: str | os.PathLike[str] | None = None) -> np.ndarray:
    """Speaker statistics ``[2, dim]`` (std, mean): the model dir's own, else mixvox's copy."""
    candidates = []
    if model_dir is not None:
        candidates.append(Path(model_dir) / "asset" / "spk_stat.npy")
    candidates.append(_PACKAGE_STAT)
    from .assets import is_in_memory, read_asset

    for path in candidates:
        if is_in_memory(path) or path.is_file():
            try:
                import io

                stat = np.load(io.BytesIO(read_asset(path, need_hash=False)[0]), allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise MixvoxError(f"cannot read speaker statistics {path}: {exc}") from None
            if stat.ndim != 2 or stat.shape[0] != 2:
                raise MixvoxError(f"{path}: speaker statistics must have shape [2, dim]")
            return stat
    raise MixvoxError(f"speaker statistics not found (looked in {', '.join(map(str, candidates))})")


def random_speaker(seed: int, dim: int = 768, spk_stat: np.ndarray | None = None) -> np.ndarray:
    """A seeded random speaker vector (float16 ``[dim]``); see the module notes on seeds."""
    if dim <= 0 or dim > MAX_DIM:
        raise MixvoxError(f"bad speaker dimension {dim}")
    rng = np.random.Generator(np.random.PCG64(int(seed) & (2**63 - 1)))
    z = rng.standard_normal(dim, dtype=np.float32)
    if spk_stat is not None and spk_stat.shape[1] == dim:
        std, mean = spk_stat[0].astype(np.float32), spk_stat[1].astype(np.float32)
        z = z * std + mean
    return z.astype(np.float16)


@dataclass(frozen=True)
class Speaker:
    """A speaker vector and where it came from (for messages)."""

    vector: np.ndarray  # float16 [dim]
    source: str = ""

    @property
    def dim(self) -> int:
        return int(self.vector.shape[0])

    def to_string(self) -> str:
        return encode_speaker(self.vector)

    def normalized(self) -> np.ndarray:
        """The L2-normalised float32 vector the GPT sees at the ``[spk_emb]`` position."""
        v = self.vector.astype(np.float32)
        return v / max(float(np.linalg.norm(v)), 1e-12)

    def save_npy(self, path: str | os.PathLike[str]) -> None:
        np.save(path, self.vector.astype(np.float16), allow_pickle=False)

    @classmethod
    def random(cls, seed: int, dim: int = 768, spk_stat: np.ndarray | None = None) -> Speaker:
        if spk_stat is None and dim == 768:
            spk_stat = load_spk_stat()
        return cls(random_speaker(seed, dim, spk_stat), f"seed:{seed}")

    @classmethod
    def parse(
        cls,
        spec: str,
        *,
        dim: int | None = None,
        spk_stat: np.ndarray | None = None,
    ) -> Speaker:
        """``seed:N`` | ``@file.npy`` | ``@file.txt`` (a speaker string) | a speaker string.

        ``dim``: the model's hidden size; a vector of another size is an error (it would not
        fit the embedding), and ``seed:N`` draws a vector of this size.
        """
        spec = spec.strip()
        if not spec:
            raise MixvoxError("empty speaker specification")
        if spec.lower().startswith("seed:"):
            try:
                seed = int(spec[5:].strip())
            except ValueError:
                raise MixvoxError(f"bad speaker seed {spec!r}: use seed:<integer>") from None
            if seed < 0:
                raise MixvoxError(f"bad speaker seed {spec!r}: must be >= 0")
            want = dim or 768
            if spk_stat is None or spk_stat.shape[1] != want:
                stat = load_spk_stat()
                spk_stat = stat if stat.shape[1] == want else spk_stat
            return cls(random_speaker(seed, want, spk_stat), spec)
        if spec.startswith("@"):
            sp = cls._from_file(Path(spec[1:]).expanduser())
        else:
            sp = cls(decode_speaker(spec), "speaker string")
        if dim is not None and sp.dim != dim:
            raise MixvoxError(
                f"speaker from {sp.source} has {sp.dim} values but the model expects {dim}"
            )
        return sp

    @classmethod
    def _from_file(cls, path: Path) -> Speaker:
        from mixvox.safeio import read_bounded

        if not os.path.lexists(path):
            raise MixvoxError(f"speaker file {path} not found")
        # a regular file, size checked before reading (a 4 GB .npy is refused at once)
        limit = 64 * 1024 if path.suffix.lower() == ".npy" else 1 << 20
        data = read_bounded(path, "speaker", limit)
        if path.suffix.lower() == ".npy":
            import io

            try:
                arr = np.load(io.BytesIO(data), allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise MixvoxError(f"cannot read speaker vector {path}: {exc}") from None
            if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.floating) or arr.size > MAX_DIM:
                raise MixvoxError(
                    f"{path}: a speaker vector must be a 1-D float array, got {arr.dtype} "
                    f"{arr.shape}"
                )
            vec = arr.astype(np.float16)
            _check_finite(vec, str(path))
            return cls(vec, str(path))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MixvoxError(f"cannot read speaker file {path}: {exc}") from None
        return cls(decode_speaker(text), str(path))
