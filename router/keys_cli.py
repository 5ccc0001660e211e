"""``mixvox keygen``, ``mixvox encrypt-model``, ``mixvox decrypt-model`` (see :mod:`.crypto`).

Kept out of :mod:`mixvox.cli` so the main CLI module only registers them. Errors about keys and
encrypted files exit with status 2 and name the file, never the key.
"""

from __future__ import annotations

from pathlib import Path

import click

from . import crypto


def _fail(exc: crypto.CryptoError | crypto.MixvoxError) -> click.ClickException:
    from mixvox.cliflags import click_error

    return click_error(str(exc), getattr(exc, "exit_code", 1))


@click.command("keygen")
@click.argument("keyfile", type=click.Path(dir_okay=False))
def keygen(keyfile: str) -> None:
    """Write a new random 256-bit model key to KEYFILE (mode 0600; never overwrites)."""
    try:
        path = crypto.write_key_file(keyfile)
    except crypto.MixvoxError as exc:
        raise _fail(exc) from None
    click.echo(f"mixvox: wrote a new model key to {path} (keep it private; back it up)", err=True)


@click.command("encrypt-model")
@click.argument("src", type=click.Path(file_okay=False, exists=True))
@click.argument("dst", type=click.Path(file_okay=False))
@click.option("--key-file", required=True, type=click.Path(dir_okay=False), help="Key file.")
def encrypt_model(src: str, dst: str, key_file: str) -> None:
    """Write an AES-256-GCM encrypted copy of the model folder SRC into the new folder DST."""
    try:
        key = crypto.load_key_file(key_file)
        manifest = crypto.encrypt_model(Path(src), Path(dst), key)
    except crypto.MixvoxError as exc:
        raise _fail(exc) from None
    except OSError as exc:
        raise _fail(crypto.CryptoError(f"{exc.strerror or exc} ({exc.filename})")) from None
    click.echo(f"mixvox: encrypted {len(manifest['files'])} file(s) into {dst}", err=True)


@click.command("decrypt-model")
@click.argument("src", type=click.Path(file_okay=False, exists=True))
@click.argument("dst", type=click.Path(file_okay=False))
@click.option("--key-file", required=True, type=click.Path(dir_okay=False), help="Key file.")
def decrypt_model(src: str, dst: str, key_file: str) -> None:
    """Write the plaintext of the encrypted model SRC into the new folder DST (files 0600)."""
    try:
        key = crypto.load_key_file(key_file)
        files = crypto.decrypt_model(Path(src), Path(dst), key)
    except crypto.MixvoxError as exc:
        raise _fail(exc) from None
    except OSError as exc:
        raise _fail(crypto.CryptoError(f"{exc.strerror or exc} ({exc.filename})")) from None
    click.echo(f"mixvox: decrypted {len(files)} file(s) into {dst}", err=True)


def register(group: click.Group) -> None:
    """Add the key commands to the ``mixvox`` group."""
    for cmd in (keygen, encrypt_model, decrypt_model):
        group.add_command(cmd)
