"""``mixvox download``: fetch the ChatTTS weights from the Hugging Face hub, file by file.

What is fetched is a list of explicit file names, never a glob: for the official repository
the keys of mixvox's own pinned manifest (:data:`~.assets.OFFICIAL_SHA256`); for another
repository the keys of the manifest given (or of the ``sha256.json`` it carries, fetched first
by that exact name). Every name is checked to be relative and inside ``asset/``
(:func:`~.assets.parse_manifest`), and every target path is resolved and checked to stay inside
``--dest`` (so neither ``..`` nor a symlinked folder can make a file land elsewhere). Why:
with allow patterns an older hub client matched ``asset/*.json`` against a listed
``asset/../../evil.json`` and wrote outside the destination.

Each file's size is asked for first and refused above :data:`MAX_FILE_BYTES`; a file already
in place with the expected hash is kept (a rerun resumes where the last one stopped, and the
hub client itself resumes a half-downloaded file). At the end every file is checked against
the pinned SHA-256 -- for the official repository against mixvox's own copy of the hashes,
never against anything the download brought along, so a tampered mirror is caught.

The hub client (``huggingface_hub>=1.26``) honours ``HF_ENDPOINT`` (mirrors) and
``HF_HUB_OFFLINE``; it is an optional dependency (``pip install 'mixvox[download]'``).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from mixvox.engines.chattts.assets import (
    MANIFEST_NAME,
    OFFICIAL_SHA256,
    ModelAssets,
    default_model_dir,
    load_assets,
    parse_manifest,
    sha256_file,
)
from mixvox.interfaces import MixvoxError

log = logging.getLogger("mixvox.chattts")

OFFICIAL_REPO = "2Noise/ChatTTS"

#: The largest single file accepted (the official GPT weights are about 0.9 GB).
MAX_FILE_BYTES = 4 * 1024**3
#: The largest manifest accepted from a repository.
MAX_MANIFEST_BYTES = 1024**2


def _hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise MixvoxError(
            "downloading needs huggingface_hub: pip install 'mixvox[download]' "
            "(or fetch the files yourself and use --model-dir)"
        ) from None
    return huggingface_hub


def remote_size(repo: str, rel: str, revision: str | None) -> int | None:
    """The size the hub reports for ``rel`` (``None`` when it does not say)."""
    hub = _hub()
    meta = hub.get_hf_file_metadata(hub.hf_hub_url(repo, rel, revision=revision))
    return getattr(meta, "size", None)


def fetch_file(repo: str, rel: str, revision: str | None, dest: Path, force: bool) -> Path:
    """Download one file by its exact name into ``dest`` (the hub client resumes partials)."""
    hub = _hub()
    return Path(
        hub.hf_hub_download(
            repo_id=repo, filename=rel, revision=revision, local_dir=str(dest), force_download=force
        )
    )


def target_path(dest: Path, rel: str) -> Path:
    """``dest/rel`` resolved, refused unless it stays inside ``dest`` (``..``, symlinks)."""
    root = dest.resolve()
    path = (root / rel).resolve()
    if path != root and root not in path.parents:
        raise MixvoxError(
            f"refusing to download {rel!r}: it would be written to {path}, outside {root}"
        )
    return path


def _fetch(repo: str, rel: str, revision: str | None, dest: Path, force: bool, cap: int) -> Path:
    path = target_path(dest, rel)
    size = remote_size(repo, rel, revision)
    if size is not None and size > cap:
        raise MixvoxError(
            f"refusing to download {rel!r} from {repo}: the hub says it has {size} bytes, more "
            f"than the {cap}-byte limit for one file"
        )
    got = fetch_file(repo, rel, revision, dest, force).resolve()
    if got != path:
        raise MixvoxError(f"the hub client wrote {rel!r} to {got}, not to {path}")
    actual = got.stat().st_size
    if actual > cap or (size is not None and actual != size):
        got.unlink()
        raise MixvoxError(
            f"download of {rel!r} has {actual} bytes (expected {size}, limit {cap}); removed"
        )
    return got


def download(
    dest: str | os.PathLike[str] | None = None,
    *,
    repo: str = OFFICIAL_REPO,
    revision: str | None = None,
    force: bool = False,
    manifest: dict[str, str] | None = None,
    max_file_bytes: int | None = None,
) -> ModelAssets:
    """Download ``repo`` into ``dest`` and verify it; returns the verified assets.

    ``manifest``: the hashes to check against (and the files to fetch). Default: the official
    ones for the official repository; for another repository, a ``sha256.json`` it carries at
    its top level (which is then written into ``dest``). Raises :class:`MixvoxError` on any
    failure, leaving the finished files in place so that a second run resumes.
    """
    _hub()
    target = Path(dest).expanduser() if dest is not None else default_model_dir()
    target.mkdir(parents=True, exist_ok=True)
    cap = MAX_FILE_BYTES if max_file_bytes is None else max_file_bytes
    official = repo == OFFICIAL_REPO
    log.info("downloading %s%s into %s", repo, f"@{revision}" if revision else "", target)
    try:
        if manifest is None and official:
            manifest = dict(OFFICIAL_SHA256)
        elif manifest is None:
            path = _fetch(repo, MANIFEST_NAME, revision, target, force, MAX_MANIFEST_BYTES)
            try:
                manifest = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                raise MixvoxError(f"{repo}: cannot read its {MANIFEST_NAME}: {exc}") from None
        manifest = parse_manifest(manifest, f"the manifest of {repo}")
        for rel in sorted(manifest):
            path = target_path(target, rel)
            if not force and path.is_file() and sha256_file(path) == manifest[rel]:
                log.info("%s is already complete", rel)
                continue
            _fetch(repo, rel, revision, target, force, cap)
    except MixvoxError:
        raise
    except Exception as exc:  # hub errors have many types (HTTP, offline, auth, disk)
        raise MixvoxError(
            f"download of {repo} failed: {type(exc).__name__}: {str(exc).rstrip('.')}. "
            "Check the network (or "
            "HF_ENDPOINT for a mirror) and run `mixvox download` again; finished files are kept."
        ) from None
    own = target / MANIFEST_NAME
    if official and manifest == OFFICIAL_SHA256:
        if own.is_file():  # a manifest left in dest must not override the official hashes
            own.unlink()
    else:
        own.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    return load_assets(target, verify="force")
