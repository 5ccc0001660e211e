"""The web page in headless Chromium (Debian's package) against a real ``mixvox serve``."""

from __future__ import annotations

import os
import shutil

import pytest

pytest.importorskip("fastapi")
sync_api = pytest.importorskip("playwright.sync_api")

from server_util import Server  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
]


@pytest.mark.skipif(
    not (os.path.exists(CHROMIUM) or shutil.which("chromium")), reason="no chromium"
)
@pytest.mark.parametrize("fmt", ["mp3", "pcm"])
def test_page_speaks_a_mixed_sentence(tmp_path, fmt):
    with Server(tmp_path, "--engine", "espeak") as srv, sync_api.sync_playwright() as pw:
        profile = tmp_path / "profile"
        ctx = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
        )
        try:
            page = ctx.new_page()
            page.goto(srv.url + "/")
            page.wait_for_function("document.querySelector('#voice').options.length > 3")
            page.fill("#text", "今天的 meeting 改到 3:30 PM，RTX 4070 跑 TensorRT 只要 22ms。")
            page.select_option("#format", fmt)
            page.click("#speak")
            page.wait_for_function(
                "window.mixvoxState.done || window.mixvoxState.error", timeout=60000
            )
            state = page.evaluate("window.mixvoxState")
            assert state["error"] is None, state
            assert state["bytes"] > 10000 and state["playing"] and state["firstChunkMs"] is not None
            # the player holds the audio: a duration of several seconds
            page.wait_for_function(
                "(() => { const a = document.querySelector('#player');"
                " return a.buffered.length > 0 && a.buffered.end(0) > 2 || a.duration > 2 })()",
                timeout=30000,
            )
            # the analysis shows coloured zh and en spans with readings
            assert page.locator("#analysis .lang-zh").count() >= 1
            assert page.locator("#analysis .lang-en").count() >= 1
            assert "jin1" in page.inner_text("#analysis")
            assert page.inner_text("#status").startswith("done")
            shot = tmp_path / f"page-{fmt}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10000
            shutil.copy(shot, f"/tmp/mixvox-page-{fmt}.png") if os.environ.get(
                "MIXVOX_KEEP_SHOT"
            ) else None
        finally:
            ctx.close()
