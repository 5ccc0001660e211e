"""``mixvox download``: fetch the official ChatTTS weights from the Hugging Face hub.

Only ``asset/**.json`` and ``asset/**.safetensors`` are fetched (the repository also carries
pickled ``.pt`` checkpoints, which mixvox never loads). Files land directly in the destination
(default: :func:`~.assets.default_model_dir`) through ``huggingface_hub.snapshot_download``
with ``local_dir``, then every file is checked against the pinned SHA-256 -- for the official
repository against mixvox's own copy of the hashes, never against anything the download
brought along, so a tampered mirror is caught.

The hub client honours ``HF_ENDPOINT`` (mirrors) and ``HF_HUB_OFFLINE``; it is an optional
dependency (``pip install 'mixvox[download]'``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from mixvox.engines.chattts.assets import (
    MANIFEST_NAME,
    OFFICIAL_SHA256,
    ModelAssets,
    default_model_dir,
    load_assets,
    parse_manifest,
)
from mixvox.interfaces import MixvoxError

log = logging.getLogger("mixvox.chattts")

OFFICIAL_REPO = "2Noise/ChatTTS"
ALLOW_PATTERNS = [
    "asset/*.json",
    "asset/**/*.json",
    "asset/*.safetensors",
    "asset/**/*.safetensors",
]


def download(
    dest: str | os.PathLike[str] | None = None,
    *,
    repo: str = OFFICIAL_REPO,
    revision: str | None = None,
    force: bool = False,
    manifest: dict[str, str] | None = None,
) -> ModelAssets:
    """Download ``repo`` into ``dest`` and verify it; returns the verified assets.

    ``manifest``: the hashes to check against. Default: the official ones for the official
    repository; for another repository, a ``sha256.json`` it carries at its top level (which
    is then written into ``dest``). Raises :class:`MixvoxError` on any failure, leaving the
    already-downloaded files in place so that a second run resumes.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise MixvoxError(
            "downloading needs huggingface_hub: pip install 'mixvox[download]' "
            "(or fetch the files yourself and use --model-dir)"
        ) from None
    target = Path(dest).expanduser() if dest is not None else default_model_dir()
    target.mkdir(parents=True, exist_ok=True)
    official = repo == OFFICIAL_REPO
    patterns = list(ALLOW_PATTERNS)
    if not official and manifest is None:
        patterns.append(MANIFEST_NAME)
    log.info("downloading %s%s into %s", repo, f"@{revision}" if revision else "", target)
    try:
        snapshot_download(
            repo_id=repo,
            revision=revision,
            allow_patterns=patterns,
            local_dir=str(target),
            force_download=force,
        )
    except Exception as exc:  # hub errors have many types (HTTP, offline, auth, disk)
        raise MixvoxError(
            f"download of {repo} failed: {type(exc).__name__}: {str(exc).rstrip('.')}. "
            "Check the network (or "
            "HF_ENDPOINT for a mirror) and run `mixvox download` again; finished files are kept."
        ) from None
    if official and manifest is None:
        manifest = dict(OFFICIAL_SHA256)
        stray = target / MANIFEST_NAME
        if stray.is_file():  # a manifest left in dest must not override the official hashes
            stray.unlink()
    if manifest is not None:
        manifest = parse_manifest(manifest, "the expected manifest")
        if not official or manifest != OFFICIAL_SHA256:
            import json

            (target / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return load_assets(target, verify="force")
