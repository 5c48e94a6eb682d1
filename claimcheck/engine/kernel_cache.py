"""Where MLX's CUDA backend keeps the kernels it compiles, and how a warm-up process hands them over.

On CUDA, MLX compiles a kernel (NVRTC) the first time an op of its kind runs and keeps the result in
a folder, ``$MLX_PTX_CACHE_DIR`` (by default under the system's temporary folder): per module a
``<module>.ptx`` file (the compiled code) and a ``<module>.txt`` file (its kernels' names). A later
process that finds both loads the module instead of compiling it. MLX writes both files in place,
so a process that read a module another was still writing would load part of it. The warm-up
processes (:mod:`claimcheck.warm_start`) therefore compile into folders of their own, and
:func:`hand_over` copies each finished module into the run's folder by rename, names before code:
a reader sees no module or a whole one.

claimcheck points MLX at ``<claimcheck cache>/kernels/mlx-<version>`` unless ``$MLX_PTX_CACHE_DIR``
is set (:func:`use_kernel_dir`), so the kernels are kept, and emptied, with the converted models.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import MutableMapping
from pathlib import Path

from claimcheck.engine.cache import cache_root

KERNEL_ENV = "MLX_PTX_CACHE_DIR"


def kernel_dir() -> Path:
    """``<claimcheck cache>/kernels/mlx-<version>``: a module compiled by one MLX version is not another's."""
    from importlib import metadata

    try:
        version = metadata.version("mlx")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return cache_root() / "kernels" / f"mlx-{version}"


def use_kernel_dir(environ: MutableMapping[str, str] | None = None) -> Path:
    """Point MLX at claimcheck's kernel folder unless ``$MLX_PTX_CACHE_DIR`` names one; the folder MLX uses.

    It must run before the process compiles its first kernel: MLX reads the variable once.
    """
    environ = os.environ if environ is None else environ
    chosen = environ.get(KERNEL_ENV)
    if chosen:
        return Path(chosen)
    folder = kernel_dir()
    folder.mkdir(parents=True, exist_ok=True)
    environ[KERNEL_ENV] = str(folder)
    return folder


def hand_over(private: Path, shared: Path) -> int:
    """Copy every whole module in ``private`` that ``shared`` lacks into ``shared``; how many were copied.

    A module is whole when both its files exist; each file arrives by rename, the names first, so
    MLX in another process (which looks for the code file first) never finds code without names.
    """
    shared.mkdir(parents=True, exist_ok=True)
    copied = 0
    for code in sorted(private.glob("*.ptx")):
        names = code.with_suffix(".txt")
        if not names.is_file() or (shared / code.name).exists():
            continue
        for source in (names, code):
            partial = shared / f".{source.name}.{os.getpid()}.part"
            shutil.copyfile(source, partial)
            os.replace(partial, shared / source.name)
        copied += 1
    return copied
