"""Start the real ``mixvox serve`` process on a free loopback port, for the server tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

SHARED = Path(__file__).resolve().parents[2] / "shared"
TINY = SHARED / "chattts" / "tiny"


class Server:
    """A ``python -m mixvox serve`` child process; ``url`` once it listens."""

    def __init__(
        self,
        tmp: Path,
        *args: str,
        env: dict[str, str] | None = None,
        wait_ready: bool = True,
        timeout: float = 120.0,
    ) -> None:
        home = tmp / "home"
        home.mkdir(exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("MIXVOX_API_KEYS", None)
        self.env.pop("MIXVOX_CONFIG", None)
        self.env.update(env or {})
        cmd = [sys.executable, "-m", "mixvox", "serve", "--port", "0", *args]
        self.proc = subprocess.Popen(
            cmd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        self.lines: list[str] = []
        self._listening = threading.Event()
        self.url = ""
        self.early: httpx.Response | None = None  # a speech request sent while loading
        threading.Thread(target=self._read, daemon=True).start()
        if wait_ready:
            self.wait_ready(timeout)

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))
            m = re.search(r"serving on (http://\S+?)/ ", line)
            if m:
                self.url = m.group(1)
                self._listening.set()
        self._listening.set()

    def wait_ready(self, timeout: float = 120.0) -> None:
        assert self._listening.wait(timeout), "server did not start"
        assert self.url, "server exited: " + "\n".join(self.lines)
        t_end = time.monotonic() + timeout
        while time.monotonic() < t_end:
            try:
                health = httpx.get(self.url + "/health", timeout=5)
                if health.status_code == 200:
                    return
                if self.early is None and health.json().get("status") == "loading":
                    self.early = httpx.post(
                        self.url + "/v1/audio/speech", json={"input": "hi"}, timeout=5
                    )
            except httpx.TransportError:
                pass
            if self.proc.poll() is not None:
                raise AssertionError("server exited: " + "\n".join(self.lines))
            time.sleep(0.2)
        raise AssertionError("server never became ready: " + "\n".join(self.lines[-20:]))

    def log_records(self) -> list[dict]:
        import json

        out = []
        for line in list(self.lines):
            if line.startswith('{"ts"'):
                out.append(json.loads(line))
        return out

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
