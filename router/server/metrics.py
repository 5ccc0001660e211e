"""Prometheus text metrics of ``mixvox serve`` (no client library needed for five series)."""

from __future__ import annotations

import threading
from collections import Counter

#: First-byte latency histogram buckets (seconds).
BUCKETS = (0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """Counters and a histogram, safe to update from the worker threads and the event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: Counter[tuple[str, int]] = Counter()
        self.errors: Counter[str] = Counter()
        self.cancelled = 0
        self.audio_seconds = 0.0
        self.first_byte = [0] * len(BUCKETS)
        self.first_byte_sum = 0.0
        self.first_byte_count = 0

    def request(self, endpoint: str, status: int) -> None:
        with self._lock:
            self.requests[(endpoint, status)] += 1
            if status >= 400:
                self.errors[str(status)] += 1

    def cancel(self) -> None:
        with self._lock:
            self.cancelled += 1

    def audio(self, seconds: float) -> None:
        with self._lock:
            self.audio_seconds += seconds

    def first_byte_latency(self, seconds: float) -> None:
        with self._lock:
            self.first_byte_sum += seconds
            self.first_byte_count += 1
            for i, b in enumerate(BUCKETS):
                if seconds <= b:
                    self.first_byte[i] += 1

    def render(self, queue_depth: int, in_flight: int) -> str:
        with self._lock:
            lines = [
                "# HELP mixvox_requests_total Requests answered, by endpoint and status.",
                "# TYPE mixvox_requests_total counter",
            ]
            for (ep, st), n in sorted(self.requests.items()):
                lines.append(f'mixvox_requests_total{{endpoint="{ep}",status="{st}"}} {n}')
            lines += [
                "# HELP mixvox_errors_total Requests answered with an error, by status.",
                "# TYPE mixvox_errors_total counter",
            ]
            for code, n in sorted(self.errors.items()):
                lines.append(f'mixvox_errors_total{{status="{code}"}} {n}')
            lines += [
                "# HELP mixvox_cancelled_total Syntheses stopped because the client went away.",
                "# TYPE mixvox_cancelled_total counter",
                f"mixvox_cancelled_total {self.cancelled}",
                "# HELP mixvox_queue_depth Requests waiting for the engine.",
                "# TYPE mixvox_queue_depth gauge",
                f"mixvox_queue_depth {queue_depth}",
                "# HELP mixvox_in_flight Requests being answered.",
                "# TYPE mixvox_in_flight gauge",
                f"mixvox_in_flight {in_flight}",
                "# HELP mixvox_audio_seconds_total Seconds of audio synthesized.",
                "# TYPE mixvox_audio_seconds_total counter",
                f"mixvox_audio_seconds_total {self.audio_seconds:.3f}",
                "# HELP mixvox_first_byte_seconds Time from request to the first audio byte.",
                "# TYPE mixvox_first_byte_seconds histogram",
            ]
            for b, n in zip(BUCKETS, self.first_byte, strict=True):
                lines.append(f'mixvox_first_byte_seconds_bucket{{le="{b}"}} {n}')
            lines.append(f'mixvox_first_byte_seconds_bucket{{le="+Inf"}} {self.first_byte_count}')
            lines.append(f"mixvox_first_byte_seconds_sum {self.first_byte_sum:.6f}")
            lines.append(f"mixvox_first_byte_seconds_count {self.first_byte_count}")
        return "\n".join(lines) + "\n"
