"""Streaming audio encoders: float pieces in, encoded bytes out, as the audio is made.

Used by ``mixvox serve`` (HTTP responses) and by ``mixvox say`` (``-o x.mp3``, ``-o -``,
``--format pcm``). Every encoder takes float32 mono pieces of any length through
:meth:`StreamEncoder.write` and returns the bytes that are final *now*, so a caller can send
them at once; :meth:`StreamEncoder.close` returns the rest.

Formats (what each one costs a streaming reader):

* ``pcm``: 16-bit signed little-endian mono at 24 kHz (OpenAI's ``pcm``); the engine's own rate
  is resampled to 24 kHz when it differs. Bytes leave with every piece.
* ``wav``: 16-bit PCM at the engine's rate. Streamed with a *streaming header* (RIFF and data
  sizes ``0xFFFFFFFF``: "until the end of the stream"), which libsndfile, ffmpeg and browsers
  read; written to a seekable file the sizes are patched at the end.
* ``mp3``: MPEG Layer III through libsndfile's LAME, constant bit rate, so that a reader that
  estimates the length from the first frame (libsndfile/mpg123 do) gets it right even
  though the streamed copy cannot carry the length header that LAME patches at the end.
* ``opus``: Opus in Ogg through libsndfile's libopus, at 24 kHz (resampled if needed: Opus
  takes 8/12/16/24/48 kHz only). Ogg pages leave about once a second.
* ``flac``: FLAC through libsndfile. Its header holds the length and an MD5 of the audio that
  libsndfile fills in at the end; a FLAC streamed without them is unreadable to libsndfile
  (the most used Python reader), so FLAC is **not streamed**: :meth:`close` returns the
  whole file.

The resampler is a windowed-sinc one with state, so resampled pieces join without clicks.
"""

from __future__ import annotations

import io
import math
import os
import struct
from collections.abc import Iterable, Iterator
from typing import BinaryIO

import numpy as np

from mixvox.interfaces import MixvoxError

#: Formats the server and ``mixvox say`` speak, with their HTTP media types.
MEDIA_TYPES: dict[str, str] = {
    "wav": "audio/wav",
    "mp3": "audio/mpeg",
    "opus": "audio/ogg",
    "flac": "audio/flac",
    "pcm": "audio/pcm",
}
#: Output rate of ``pcm`` (OpenAI documents 24 kHz 16-bit mono little-endian).
PCM_RATE = 24000
#: Sample rates libopus accepts.
OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
#: Formats whose bytes leave while the audio is being made.
STREAMING = frozenset({"wav", "mp3", "opus", "pcm"})
#: File extensions handled by this module (``.wav``/``.flac``/``.ogg`` stay with
#: :mod:`mixvox.audio`, which writes complete files).
EXTENSIONS: dict[str, str] = {".mp3": "mp3", ".opus": "opus", ".pcm": "pcm", ".raw": "pcm"}


def check_format(fmt: str) -> str:
    """The canonical (lower-case) name of ``fmt``, or a clear error naming the valid ones."""
    name = fmt.lower()
    if name not in MEDIA_TYPES:
        raise MixvoxError(f"unknown audio format {fmt!r} (use {', '.join(sorted(MEDIA_TYPES))})")
    return name


def _to_int16(samples: np.ndarray) -> bytes:
    x = np.asarray(samples, dtype=np.float32)
    x = np.nan_to_num(x, nan=0.0, posinf=1.0, neginf=-1.0)
    return (np.clip(x, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()


# ---------------------------------------------------------------------------------------------
# Resampling
# ---------------------------------------------------------------------------------------------


class Resampler:
    """Band-limited sample-rate conversion of a stream, piece by piece.

    Why not per-piece resampling: each piece's edges would ring and clicks would mark every
    join. Here output sample ``n`` sits at input time ``n * src / dst`` (exact integer maths,
    no drift over hours) and is a Hann-windowed sinc sum over ``2 * half_width`` neighbours;
    input is kept until no later output needs it.
    """

    def __init__(self, src: int, dst: int, half_width: int = 16) -> None:
        if src <= 0 or dst <= 0:
            raise MixvoxError(f"bad sample rates for resampling: {src} -> {dst}")
        g = math.gcd(src, dst)
        self.src, self.dst = src // g, dst // g
        self.hw = half_width
        self.cutoff = min(1.0, dst / src) * 0.94  # of the input Nyquist; a little below it
        self.buf = np.zeros(half_width, np.float64)  # leading zeros: output 0 sees silence
        self.offset = -half_width  # input index of buf[0]
        self.n_out = 0
        self.n_in = 0
        self.taps = np.arange(-half_width + 1, half_width + 1)

    def _emit(self, upto_index: int) -> np.ndarray:
        """All outputs whose window ends at or before input index ``upto_index`` (exclusive)."""
        # Output n needs input floor(t_n) + hw; t_n = n * src / dst.
        # the largest n with floor(n * src / dst) + hw < upto_index
        last = ((upto_index - self.hw) * self.dst - 1) // self.src
        n = np.arange(self.n_out, max(self.n_out, last + 1), dtype=np.int64)
        if n.size == 0:
            return np.zeros(0, np.float32)
        base = (n * self.src) // self.dst
        frac = ((n * self.src) % self.dst) / self.dst
        idx = base[:, None] + self.taps[None, :]
        d = frac[:, None] - self.taps[None, :]  # distance in input samples (t - idx)
        w = self.cutoff * np.sinc(self.cutoff * d) * (0.5 + 0.5 * np.cos(np.pi * d / self.hw))
        vals = self.buf[idx - self.offset]
        out = (vals * w).sum(axis=1)
        self.n_out = int(n[-1]) + 1
        keep_from = (self.n_out * self.src) // self.dst - self.hw + 1
        drop = max(0, keep_from - self.offset)
        if drop:
            self.buf = self.buf[drop:]
            self.offset += drop
        return out.astype(np.float32)

    def process(self, samples: np.ndarray) -> np.ndarray:
        x = np.asarray(samples, dtype=np.float64).reshape(-1)
        if self.src == self.dst:
            return x.astype(np.float32)
        self.buf = np.concatenate([self.buf, x])
        self.n_in += len(x)
        return self._emit(self.offset + len(self.buf))

    def flush(self) -> np.ndarray:
        """The last outputs (the input is taken to end with silence)."""
        if self.src == self.dst:
            return np.zeros(0, np.float32)
        total = (self.n_in * self.dst + self.src - 1) // self.src  # outputs that cover the input
        self.buf = np.concatenate([self.buf, np.zeros(self.hw + 1)])
        out = self._emit(self.offset + len(self.buf))
        return out[: max(0, total - (self.n_out - len(out)))]


# ---------------------------------------------------------------------------------------------
# Encoders
# ---------------------------------------------------------------------------------------------


class _Sink(io.RawIOBase):
    """A seekable in-memory file that hands out bytes once they are behind libsndfile.

    libsndfile seeks back only to patch headers at close (MP3's LAME tag, WAV/FLAC sizes);
    bytes already handed out stay as they were, which the formats above tolerate.
    """

    def __init__(self) -> None:
        super().__init__()
        self.buf = bytearray()
        self.pos = 0
        self.sent = 0

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    def write(self, b: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        data = bytes(b)
        self.buf[self.pos : self.pos + len(data)] = data
        self.pos += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = 0) -> int:
        base = {0: 0, 1: self.pos, 2: len(self.buf)}[whence]
        self.pos = base + offset
        return self.pos

    def tell(self) -> int:
        return self.pos

    def drain(self) -> bytes:
        out = bytes(self.buf[self.sent :])
        self.sent = len(self.buf)
        return out

    def whole(self) -> bytes:
        return bytes(self.buf)


class StreamEncoder:
    """Encode one stream of float pieces as ``fmt`` (see the module notes for each format).

    ``rate`` is the engine's sample rate. ``write()`` returns the bytes ready now;
    ``close()`` the rest. ``output_rate`` tells the rate of the encoded audio.
    """

    def __init__(self, fmt: str, rate: int, *, streaming_header: bool = True) -> None:
        self.fmt = check_format(fmt)
        self.media_type = MEDIA_TYPES[self.fmt]
        self.in_rate = int(rate)
        self.frames_in = 0
        self._closed = False
        self._header_sent = False
        self._streaming_header = streaming_header
        out_rate = self.in_rate
        if self.fmt == "pcm":
            out_rate = PCM_RATE
        elif self.fmt == "opus" and self.in_rate not in OPUS_RATES:
            out_rate = 24000
        self.output_rate = out_rate
        self._resampler = Resampler(self.in_rate, out_rate) if out_rate != self.in_rate else None
        self._sf = None
        self._sink: _Sink | None = None
        if self.fmt in ("mp3", "opus", "flac"):
            import soundfile as sf

            self._sink = _Sink()
            kwargs: dict[str, object] = {}
            if self.fmt == "mp3":
                container, subtype = "MP3", "MPEG_LAYER_III"
                kwargs = {"bitrate_mode": "CONSTANT", "compression_level": 0.5}
            elif self.fmt == "opus":
                container, subtype = "OGG", "OPUS"
            else:
                container, subtype = "FLAC", "PCM_16"
            try:
                self._sf = sf.SoundFile(
                    self._sink, "w", out_rate, 1, subtype, format=container, **kwargs
                )
            except (sf.LibsndfileError, TypeError, ValueError) as exc:
                raise MixvoxError(
                    f"this libsndfile cannot write {self.fmt} ({exc}); "
                    "soundfile >= 0.13 with libsndfile >= 1.1 is needed"
                ) from None

    def _wav_header(self) -> bytes:
        size = 0xFFFFFFFF
        rate = self.output_rate
        fmt = struct.pack("<HHIIHH", 1, 1, rate, rate * 2, 2, 16)
        return (
            b"RIFF"
            + struct.pack("<I", size)
            + b"WAVEfmt "
            + struct.pack("<I", 16)
            + fmt
            + b"data"
            + struct.pack("<I", size)
        )

    def header(self) -> bytes:
        """Bytes that can leave before any audio exists (WAV header; empty for the rest)."""
        if self.fmt == "wav" and not self._header_sent and self._streaming_header:
            self._header_sent = True
            return self._wav_header()
        return b""

    def write(self, samples: np.ndarray) -> bytes:
        if self._closed:
            raise MixvoxError("the encoder is closed")
        x = np.asarray(samples, dtype=np.float32).reshape(-1)
        self.frames_in += len(x)
        if self._resampler is not None:
            x = self._resampler.process(x)
        return self.header() + self._encode(x)

    def _encode(self, x: np.ndarray) -> bytes:
        if self.fmt in ("pcm", "wav"):
            return _to_int16(x)
        assert self._sf is not None and self._sink is not None
        if len(x):
            x = np.clip(np.nan_to_num(x, nan=0.0), -1.0, 1.0)
            self._sf.write(x)
        return b"" if self.fmt == "flac" else self._sink.drain()

    def close(self) -> bytes:
        """The remaining bytes (for FLAC, the whole file)."""
        if self._closed:
            return b""
        tail = b""
        if self._resampler is not None:
            tail = self._encode(self._resampler.flush())
        self._closed = True
        head = self.header()
        if self._sf is not None and self._sink is not None:
            self._sf.close()
            if self.fmt == "flac":
                return self._sink.whole()
            return head + tail + self._sink.drain()
        return head + tail

    @property
    def duration(self) -> float:
        """Seconds of audio written so far."""
        return self.frames_in / self.in_rate if self.in_rate else 0.0


def encode_all(pieces: Iterable[np.ndarray], rate: int, fmt: str) -> bytes:
    """A complete file of ``fmt`` from float pieces."""
    enc = StreamEncoder(fmt, rate)
    out = [enc.header()]
    for p in pieces:
        out.append(enc.write(p))
    out.append(enc.close())
    return b"".join(out)


def write_stream(
    pieces: Iterator[np.ndarray], rate: int, fmt: str, out: BinaryIO, *, flush: bool = True
) -> int:
    """Encode ``pieces`` into the byte stream ``out`` as they come; returns the frames written.

    For ``mixvox say -o -``: a player reading the pipe starts with the first piece. Nothing at
    all is written when there are no pieces (the caller reports "nothing to speak").
    """
    first = next(pieces, None)
    if first is None:
        return 0
    enc = StreamEncoder(fmt, rate)
    piece: np.ndarray | None = first
    while piece is not None:
        data = enc.write(piece)
        if data:
            out.write(data)
            if flush:
                out.flush()
        piece = next(pieces, None)
    out.write(enc.close())
    if flush:
        out.flush()
    return enc.frames_in


def save_encoded(
    pieces: Iterator[np.ndarray], rate: int, fmt: str, path: str | os.PathLike[str]
) -> int:
    """Write ``pieces`` as a ``fmt`` file at ``path``, atomically; returns the frames written.

    Encoded piece by piece into a temporary file beside ``path`` (memory stays bounded for long
    texts), renamed over ``path`` at the end; no file at all when there was nothing to say.
    """
    import contextlib
    import tempfile
    from pathlib import Path

    from mixvox.audio import publish

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            frames = write_stream(pieces, rate, fmt, fh, flush=False)
            fh.flush()
            os.fsync(fh.fileno())
        if frames:
            publish(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return frames


def format_for_path(path: str | os.PathLike[str]) -> str | None:
    """The encoder format named by ``path``'s extension (``.mp3``/``.opus``/...), else ``None``."""
    from pathlib import Path

    return EXTENSIONS.get(Path(path).suffix.lower())
