"""Subtitles from the IR: timed segments, and SRT / WebVTT writers.

A segment is one synthesized chunk (the prosody plugin's cut, never inside a word): its start
and end in seconds come from the audio the engine produced for it, and ``input_start`` /
``input_end`` are offsets into the user's text from the IR, so the caption shows exactly what
the user wrote (not the normalized spoken form). Engines report no word timings today, so
segments are chunk level.

The same two steps serve the CLI and the server: :func:`prepare` (route and chunk the text:
CPU work that may run while the engine is busy with something else) and :func:`render`
(engine audio for the prepared pieces, each tagged with its chunk).
"""

from __future__ import annotations

import os
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mixvox.interfaces import AudioChunk, SynthesisOptions
from mixvox.ir import Chunk, Utterance
from mixvox.pipeline import Router, Synthesizer, text_blocks


@dataclass
class Prepared:
    """One routed block of the input: its utterance, numbered chunks and offset in the input."""

    utterance: Utterance
    chunks: list[Chunk]
    offset: int


@dataclass
class Segment:
    """A caption: seconds in the audio and code-point offsets into the input text."""

    start: float
    end: float
    text: str
    input_start: int
    input_end: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "start": round(self.start, 3),
            "end": round(self.end, 3),
            "text": self.text,
            "input_start": self.input_start,
            "input_end": self.input_end,
        }


def prepare(
    tts: Synthesizer, text: str | Utterance, *, raw: bool = False, router: Router | None = None
) -> Iterator[Prepared]:
    """Route ``text`` block by block, as :meth:`Synthesizer.stream_chunks` does, keeping chunks.

    ``router`` replaces the synthesizer's (a server request naming extra lexicons); an
    :class:`Utterance` (already routed) is only chunked.
    """
    rt = router or tts.router
    if isinstance(text, Utterance):
        chunks = rt.chunks(text, tts.max_chunk_chars)
        if chunks:
            yield Prepared(text, chunks, 0)
        return
    if raw:
        utt = rt.raw(text)
        if text.strip():
            yield Prepared(utt, [Chunk(0, utt.words)], 0)
        return
    index = 0
    offset = 0
    for block in _blocks(text):
        utt = rt.route(block)
        chunks = rt.chunks(utt, tts.max_chunk_chars)
        if chunks:
            numbered = [Chunk(index + i, c.words) for i, c in enumerate(chunks)]
            index += len(numbered)
            yield Prepared(utt, numbered, offset)
        offset += len(block)


def _blocks(text: str) -> Iterator[str]:
    """Routing blocks; an SSML document (where this build reads SSML) stays one block."""
    from mixvox.ssml import is_ssml  # SSML support is part of this build now

    if is_ssml(text):
        yield text
    else:
        yield from text_blocks(text)


def options_for(tts: Synthesizer, overrides: dict[str, object]) -> SynthesisOptions:
    """Per-call options as :meth:`Synthesizer.stream_chunks` builds them (validated by the
    engine's per-call options, the request's per-call defaults included)."""
    return tts.synthesis_options(overrides)


def render(
    tts: Synthesizer, prepared: Prepared, options: SynthesisOptions
) -> Generator[tuple[AudioChunk, Chunk | None], None, None]:
    """The engine's audio for one prepared block, each piece with the chunk it belongs to."""
    by_index = {c.index: c for c in prepared.chunks}
    for piece in tts.engine.stream(prepared.utterance, prepared.chunks, options):
        yield piece, by_index.get(piece.chunk)


class Timeline:
    """Collects segments while audio pieces go by (``add`` for every piece, in order)."""

    def __init__(self, text: str, sample_rate: int) -> None:
        self.text = text
        self.rate = sample_rate
        self.frames = 0
        self.segments: list[Segment] = []
        self._open: tuple[int, int, int, int] | None = None  # (chunk id, start frame, s, e)

    def add(self, piece: AudioChunk, chunk: Chunk | None, offset: int) -> None:
        n = len(piece.samples)
        if chunk is not None and (self._open is None or self._open[0] != id(chunk)):
            self._close()
            s, e = offset + chunk.start, offset + chunk.end
            self._open = (id(chunk), self.frames, s, e)
        self.frames += n
        if piece.final:
            self._close()

    def _close(self) -> None:
        if self._open is None:
            return
        _, f0, s, e = self._open
        self._open = None
        if self.frames <= f0:
            return  # a chunk with no audio gets no caption
        caption = " ".join(self.text[s:e].split())
        if not caption:
            return
        self.segments.append(Segment(f0 / self.rate, self.frames / self.rate, caption, s, e))

    def finish(self) -> list[Segment]:
        self._close()
        return self.segments


def timed_stream(
    tts: Synthesizer, text: str | Utterance, timeline: Timeline | None = None, **overrides: object
) -> Iterator[AudioChunk]:
    """Like :meth:`Synthesizer.stream_chunks`, also filling ``timeline`` with segments."""
    opts = options_for(tts, dict(overrides))
    for prep in prepare(tts, text, raw=bool(overrides.get("raw"))):
        for piece, chunk in render(tts, prep, opts):
            if timeline is not None:
                timeline.add(piece, chunk, prep.offset)
            yield piece


# ---------------------------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------------------------


def _stamp(seconds: float, sep: str) -> str:
    ms = max(0, int(round(seconds * 1000)))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


def _clean(text: str) -> str:
    # A blank line ends a cue in both formats; "-->" would read as a timing line in WebVTT.
    return " ".join(text.split()).replace("-->", "->")


def to_srt(segments: Iterable[Segment]) -> str:
    out = []
    for n, seg in enumerate(segments, 1):
        out.append(
            f"{n}\n{_stamp(seg.start, ',')} --> {_stamp(seg.end, ',')}\n{_clean(seg.text)}\n"
        )
    return "\n".join(out)


def to_vtt(segments: Iterable[Segment]) -> str:
    out = ["WEBVTT\n"]
    for seg in segments:
        out.append(f"{_stamp(seg.start, '.')} --> {_stamp(seg.end, '.')}\n{_clean(seg.text)}\n")
    return "\n".join(out)


#: Subtitle formats by file extension.
SUBTITLE_FORMATS = {".srt": to_srt, ".vtt": to_vtt}


def subtitle_writer(path: str | os.PathLike[str]) -> Any:
    """The writer for ``path``'s extension, or a clear error."""
    from mixvox.interfaces import MixvoxError

    ext = Path(path).suffix.lower()
    if ext not in SUBTITLE_FORMATS:
        raise MixvoxError(f"subtitles file {str(path)!r} must end in .srt or .vtt")
    return SUBTITLE_FORMATS[ext]


def write_subtitles(path: str | os.PathLike[str], segments: list[Segment]) -> Path:
    """Write ``segments`` as SRT or WebVTT (from the extension), atomically."""
    from mixvox.audio import atomic_write_bytes

    text = subtitle_writer(path)(segments)
    atomic_write_bytes(path, text.encode("utf-8"))
    return Path(path)
