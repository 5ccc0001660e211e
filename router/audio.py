"""Audio results and safe file output.

Files are written atomically: to a temporary file in the target's directory, flushed and
fsync'd, then renamed over the target. A crash or Ctrl-C leaves either the old file or the
complete new one, never a truncated WAV.

Before anything is written the samples are checked (:func:`check_samples`): NaN/Inf or a
constant signal means a broken model or stage, and a file of it would look like success.
File modes come from the umask read once at import (:data:`UMASK`) and are set with
``os.fchmod`` on the open file: the process umask is never changed, because it is shared by
every thread and flipping it lets other threads create world-writable files.
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


class BadAudioError(MixvoxError):
    """Audio that must not be written: NaN/Inf, a constant signal, or too long for WAV."""


def _read_umask() -> int:
    """The umask at start, read without changing it where the OS allows (Linux /proc)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    # Elsewhere the only way to read it is to set it: done once, at import, before any
    # thread of ours exists.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


#: The process umask, read once at import; new files get ``0o666 & ~UMASK``.
UMASK: int = _read_umask()

#: The largest WAV a RIFF header can describe (its size fields are 32-bit).
WAV_MAX_BYTES = 0xFFFFFFFF
_WAV_HEADER = 44


def check_samples(samples: np.ndarray, stage: str, *, constant: bool = True) -> None:
    """Refuse NaN/Inf (and, with ``constant``, a constant signal of 2+ samples).

    ``stage`` names where the audio came from, so the error points at the culprit.
    """
    if samples.size == 0:
        return
    if not np.isfinite(samples).all():
        bad = int((~np.isfinite(samples)).sum())
        raise BadAudioError(
            f"{stage} produced {bad} NaN/Inf sample(s) of {samples.size}: the model or its "
            "weights are broken (a damaged or wrongly converted checkpoint); nothing written"
        )
    if constant and samples.size > 1 and float(samples.max()) == float(samples.min()):
        raise BadAudioError(
            f"{stage} produced constant audio ({samples.size} samples of "
            f"{float(samples[0]):g}): the model or its weights are broken; nothing written"
        )


def _check_wav_size(frames: int, fmt: str) -> None:
    if fmt == "WAV" and _WAV_HEADER + 2 * frames > WAV_MAX_BYTES:
        raise BadAudioError(
            f"{frames} samples are too long for a WAV file (a RIFF header cannot describe "
            "more than 4 GB): write FLAC instead (-f flac or a .flac name) or split the text"
        )


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


def file_mode() -> int:
    """The mode a new file gets (``0o666`` less the umask read at start)."""
    return 0o666 & ~UMASK


def publish(tmp: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Rename a finished temporary file over ``target`` with normal file permissions.

    ``mkstemp`` creates files readable by their owner only; an audio file should get the
    permissions any other new file gets (``0o666`` less the umask).
    """
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fchmod(fd, file_mode())
    finally:
        os.close(fd)
    os.replace(tmp, target)


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers never see a partial file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), file_mode())
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
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
        """Write a WAV/FLAC/OGG file (format from the extension unless ``fmt`` is given).

        Refuses (:class:`BadAudioError`) NaN/Inf or constant samples and WAV over 4 GB.
        """
        fmt = fmt or format_for(path)
        if len(self.samples) == 0:
            raise BadAudioError(f"no audio to write to {path} (0 samples): nothing was said")
        check_samples(self.samples, "write")
        _check_wav_size(len(self.samples), fmt)
        data = self.to_bytes(fmt)
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


def save_stream(pieces: Iterable[Audio], path: str | os.PathLike[str], fmt: str) -> tuple[int, int]:
    """Write audio pieces to ``path`` as they come; returns ``(frames, sample_rate)``.

    Why: a long text (a 1 MB line is hours of audio, gigabytes as float32) must not be held
    in memory whole. Written to a temporary file next to ``path`` and renamed at the end, so a
    crash or Ctrl-C never leaves a truncated file; no file at all when nothing was said, when
    a piece holds NaN/Inf, when the whole output is constant, or when a WAV would pass 4 GB.
    """
    import soundfile as sf

    it = iter(pieces)
    first = next(it, None)
    if first is None:
        return 0, 0
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    frames, rate = 0, first.sample_rate
    lo, hi = np.inf, -np.inf
    try:
        os.fchmod(fd, file_mode())
        os.close(fd)
        subtype = "VORBIS" if fmt == "OGG" else "PCM_16"
        with sf.SoundFile(tmp, "w", rate, 1, subtype, format=fmt) as fh:
            piece: Audio | None = first
            while piece is not None:
                if piece.sample_rate != rate:
                    raise MixvoxError(f"cannot join audio at {piece.sample_rate} Hz and {rate} Hz")
                check_samples(piece.samples, "write", constant=False)
                _check_wav_size(frames + len(piece), fmt)
                if len(piece):
                    lo = min(lo, float(piece.samples.min()))
                    hi = max(hi, float(piece.samples.max()))
                fh.write(np.clip(piece.samples, -1.0, 1.0))
                frames += len(piece)
                piece = next(it, None)
        if frames > 1 and lo == hi:
            raise BadAudioError(
                f"write produced constant audio ({frames} samples of {lo:g}): the model or "
                "its weights are broken; nothing written"
            )
        if frames:
            with open(tmp, "rb+") as raw:
                os.fsync(raw.fileno())
            os.replace(tmp, target)
    finally:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
    return frames, rate
