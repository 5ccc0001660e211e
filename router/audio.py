"""Audio results and safe file output.

Files are written atomically: to a temporary file in the target's directory, flushed and
fsync'd, then renamed over the target. A crash or Ctrl-C leaves either the old file or the
complete new one, never a truncated WAV.
"""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mixvox.interfaces import MixvoxError

#: Container formats by file extension (soundfile format names).
FORMATS = {".wav": "WAV", ".flac": "FLAC", ".ogg": "OGG"}


def format_for(path: str | os.PathLike[str]) -> str:
    ext = Path(path).suffix.lower()
    try:
        return FORMATS[ext]
    except KeyError:
        raise MixvoxError(
            f"cannot tell the audio format of {str(path)!r}: use one of "
            f"{', '.join(sorted(FORMATS))}"
        ) from None


def encode(samples: np.ndarray, sample_rate: int, fmt: str = "WAV") -> bytes:
    """Encode float samples as a complete audio file in memory (16-bit PCM for WAV/FLAC)."""
    import soundfile as sf

    buf = io.BytesIO()
    subtype = "VORBIS" if fmt == "OGG" else "PCM_16"
    sf.write(buf, np.clip(samples, -1.0, 1.0), sample_rate, format=fmt, subtype=subtype)
    return buf.getvalue()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def publish(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Rename a finished temporary file over ``target`` with normal file permissions.

    ``mkstemp`` creates files readable by their owner only; an audio file should get the
    permissions any other new file gets (``0o666`` less the umask).
    """
    os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, target)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers never see a partial file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        publish(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


@dataclass
class Audio:
    """Mono float32 samples in [-1, 1] and their sample rate."""

    samples: np.ndarray
    sample_rate: int

    def __post_init__(self) -> None:
        self.samples = np.ascontiguousarray(self.samples, dtype=np.float32).reshape(-1)

    @property
    def duration(self) -> float:
        """Length in seconds."""
        return len(self.samples) / float(self.sample_rate) if self.sample_rate else 0.0

    def __len__(self) -> int:
        return len(self.samples)

    def to_bytes(self, fmt: str = "WAV") -> bytes:
        return encode(self.samples, self.sample_rate, fmt)

    def save(self, path: str | os.PathLike[str], fmt: str | None = None) -> Path:
        """Write a WAV/FLAC/OGG file (format from the extension unless ``fmt`` is given)."""
        data = self.to_bytes(fmt or format_for(path))
        atomic_write_bytes(path, data)
        return Path(path)

    @classmethod
    def concat(cls, pieces: Iterable[Audio], sample_rate: int | None = None) -> Audio:
        pieces = list(pieces)
        sr = sample_rate or (pieces[0].sample_rate if pieces else 24000)
        for p in pieces:
            if p.sample_rate != sr:
                raise MixvoxError(f"cannot join audio at {p.sample_rate} Hz and {sr} Hz")
        if not pieces:
            return cls(np.zeros(0, np.float32), sr)
        return cls(np.concatenate([p.samples for p in pieces]), sr)
