"""Route MLX's CPU matrix products to a fast BLAS on Linux, and say which BLAS is in use.

MLX's Linux CPU wheel links the reference (netlib) BLAS it bundles, which runs a 64x4096x4096 GEMM at
~3 GFLOP/s; an optimised BLAS runs it 30-40x faster. Loading a system ``libblas.so.3`` (OpenBLAS,
BLIS, ...) into the global symbol scope *before* ``mlx.core`` is imported makes the dynamic linker
resolve MLX's ``cblas_sgemm`` to it, because the global scope is searched before a library's own
dependencies. After ``mlx.core`` is imported the binding is fixed, so :func:`ensure_fast_blas` then only
reports what is in use.

Where the system has no optimised BLAS (a fresh Debian or Ubuntu machine, a slim container), the
``claimcheck[cpu-blas]`` extra brings one from the package index: Intel's ``mkl`` wheel, whose
``libmkl_rt`` exports the CBLAS symbols under their plain names. (The ``scipy-openblas32/64`` wheels do
not serve: their symbols carry a ``scipy_`` prefix that MLX's ``cblas_sgemm`` never binds to.) MKL runs
its threads on GNU OpenMP (``MKL_THREADING_LAYER=GNU``, the runtime the system already has), or on
Intel's OpenMP from the ``intel-openmp`` wheel where GNU's is missing, with waiting threads asleep
(``OMP_WAIT_POLICY=PASSIVE``) unless the environment says otherwise.

Every CPU timing depends on this, so the BLAS in use is part of the machine fingerprint.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
import warnings
import functools
from dataclasses import dataclass, replace
from pathlib import Path

from claimcheck.harness import blas_threads

BLAS_ENV = "CLAIMCHECK_BLAS"
MKL_THREADING_ENV = "MKL_THREADING_LAYER"
OMP_WAIT_ENV = "OMP_WAIT_POLICY"
WHEEL_BLAS = (("mkl", "libmkl_rt.so"),)  # (distribution, library name prefix): BLAS shipped on the package index
_DISABLE_VALUES = {"0", "off", "none", "no", "reference", "bundled"}


class ReferenceBlasWarning(UserWarning):
    """MLX runs on the slow reference BLAS; CPU timings will not mean much."""


@dataclass(frozen=True)
class BlasInfo:
    """Which BLAS MLX's CPU GEMMs use.

    Attributes:
        library: path of the library that provides ``cblas_sgemm`` to MLX (``"Accelerate"`` on macOS,
            ``""`` when it cannot be told yet).
        kind: ``"openblas"``, ``"blis"``, ``"mkl"``, ``"flexiblas"``, ``"accelerate"``, ``"reference"``
            or ``"unknown"``.
        loaded: the library :func:`ensure_fast_blas` loaded in this call, else ``None``.
        threads: the library's thread count where it reports one (OpenBLAS, MKL, BLIS), else ``None``.
        note: one line on how this outcome came about.
        thread_policy: how the thread count was chosen (:mod:`claimcheck.harness.blas_threads`).
    """

    library: str
    kind: str
    loaded: str | None = None
    threads: int | None = None
    note: str = ""
    thread_policy: str = ""

    @property
    def fast(self) -> bool:
        return self.kind not in ("reference", "unknown")

    def describe(self) -> str:
        threads = f", {self.threads} threads" if self.threads else ""
        return f"{self.kind} ({self.library or 'not loaded'}{threads})"


def _multiarch() -> str:
    machine = platform.machine()
    return {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "arm64": "aarch64-linux-gnu"}.get(
        machine, f"{machine}-linux-gnu"
    )


def candidate_paths() -> list[str]:
    """Known locations of an optimised CBLAS on common Linux distributions, best first."""
    triple = _multiarch()
    debian = f"/usr/lib/{triple}"
    return [
        # Debian / Ubuntu: libopenblas0-pthread, -openmp, libblis4-*; then the alternatives link.
        f"{debian}/openblas-pthread/libblas.so.3",
        f"{debian}/openblas-openmp/libblas.so.3",
        f"{debian}/blis-pthread/libblas.so.3",
        f"{debian}/blis-openmp/libblas.so.3",
        f"{debian}/libopenblas.so.0",
        f"{debian}/libblas.so.3",
        # Fedora / RHEL: openblas-threads, openblas-openmp, openblas, flexiblas.
        "/usr/lib64/libopenblasp.so.0",
        "/usr/lib64/libopenblaso.so.0",
        "/usr/lib64/libopenblas.so.0",
        "/usr/lib64/libflexiblas.so.3",
        # Arch and others.
        "/usr/lib/libopenblas.so.0",
        "/usr/lib/libblas.so.3",
    ]


def wheel_paths() -> list[str]:
    """Optimised CBLAS libraries that installed wheels provide (the ``cpu-blas`` extra), best first."""
    from importlib import metadata

    found: list[str] = []
    for distribution, prefix in WHEEL_BLAS:
        try:
            files = metadata.files(distribution) or []
        except metadata.PackageNotFoundError:
            continue
        libraries = sorted((Path(os.path.abspath(str(file.locate()))) for file in files if file.name.startswith(prefix)), reverse=True)
        found += [str(path) for path in libraries if path.exists() and str(path) not in found]
    return found


def _loadable(name: str) -> bool:
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def mkl_threading_layer(library: str) -> str:
    """The threading layer MKL at ``library`` should use: the one set, else GNU, Intel or none (sequential)."""
    chosen = os.environ.get(MKL_THREADING_ENV, "").strip()
    if chosen:
        return chosen
    if _loadable("libgomp.so.1"):
        return "GNU"
    if any(Path(library).parent.glob("libiomp5.so*")):
        return "INTEL"
    return "SEQUENTIAL"


def classify(library: str) -> str:
    """Name the BLAS implementation behind a library path (symlinks resolved)."""
    if not library:
        return "unknown"
    if library == "Accelerate":
        return "accelerate"
    resolved = os.path.realpath(library).lower()
    name = library.lower() + " " + resolved
    for kind in ("openblas", "blis", "mkl", "flexiblas", "atlas"):
        if kind in name:
            return kind
    # Debian's netlib package installs under .../blas/; MLX bundles it as mlx_cpu.libs/libblas-<hash>.so.
    if "/blas/" in resolved or "mlx_cpu.libs" in resolved or os.path.basename(resolved).startswith("libblas"):
        return "reference"
    return "unknown"


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _global_provider(symbol: str = "cblas_sgemm") -> str:
    """Library that provides ``symbol`` in the process's global scope, or ``""``."""
    try:
        process = ctypes.CDLL(None)
        function = getattr(process, symbol)
    except (OSError, AttributeError):
        return ""
    info = _DlInfo()
    address = ctypes.cast(function, ctypes.c_void_p)
    if not process.dladdr(address, ctypes.byref(info)) or not info.dli_fname:
        return ""
    return os.fsdecode(info.dli_fname)


def _mapped_blas_libraries() -> list[str]:
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()
    except OSError:
        return []
    found: list[str] = []
    for line in lines:
        fields = line.split(maxsplit=5)
        if len(fields) < 6:
            continue
        path = fields[5].strip()
        base = os.path.basename(path).lower()
        if ("blas" in base or "blis" in base or "mkl_rt" in base) and path not in found:
            found.append(path)
    return found


def blas_in_use() -> str:
    """Path of the library whose ``cblas_sgemm`` MLX calls (``"Accelerate"`` on macOS, ``""`` if none yet).

    A library in the global scope (loaded with ``RTLD_GLOBAL`` or ``LD_PRELOAD``) wins over the one MLX
    links; otherwise MLX uses its own dependency, found in ``/proc/self/maps``.
    """
    if sys.platform == "darwin":
        return "Accelerate"
    provider = _global_provider()
    if provider:
        return provider
    mapped = _mapped_blas_libraries()
    bundled = [path for path in mapped if "mlx" in path]
    if bundled:
        return bundled[0]
    return mapped[0] if mapped else ""


def _threads(library: str) -> int | None:
    """The library's own thread count (what its GEMMs will use), where it reports one."""
    if not library or library == "Accelerate":
        return None
    try:
        handle = ctypes.CDLL(library)
    except OSError:
        return None
    for name in ("openblas_get_num_threads", "mkl_get_max_threads", "bli_thread_get_num_threads"):
        get = getattr(handle, name, None)
        if get is not None:
            get.restype = ctypes.c_int
            return int(get())
    return None


def _is_mkl(path: str) -> bool:
    return "mkl" in os.path.basename(path).lower()


def _try_load(path: str) -> str | None:
    """Load ``path`` globally if it provides CBLAS; return the reason it was refused, else None."""
    if not Path(path).exists():
        return "not found"
    if classify(path) == "reference":
        return "is the reference BLAS"
    if _is_mkl(path):
        os.environ[MKL_THREADING_ENV] = mkl_threading_layer(path)  # read by MKL when it loads
        # OpenMP threads that spin while they wait starve the other thread on a shared 2-core machine:
        # a SmolLM2 batch-64 step measured 11.9 s spinning, 1.6 s sleeping (benchmarks/blas.py).
        os.environ.setdefault(OMP_WAIT_ENV, "PASSIVE")
    try:
        library = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as error:
        return f"cannot load ({error})"
    if not hasattr(library, "cblas_sgemm"):
        return "has no cblas_sgemm"
    return None


def _info(loaded: str | None, note: str) -> BlasInfo:
    library = blas_in_use()
    return BlasInfo(library=library, kind=classify(library), loaded=loaded, threads=_threads(library), note=note)


def _warn_if_slow(info: BlasInfo) -> None:
    if sys.platform.startswith("linux") and info.kind == "reference" and not _gpu_wheel_installed():
        warnings.warn(
            f"MLX uses the reference BLAS ({info.library or 'bundled'}; {info.note}); CPU matrix products run ~30x "
            f"slower. Install an optimised BLAS (pip install 'claimcheck[cpu-blas]', or apt-get install libopenblas0-pthread) "
            f"or set {BLAS_ENV}=/path/to/libblas.so.3",
            ReferenceBlasWarning,
            stacklevel=3,
        )


def _gpu_wheel_installed() -> bool:
    from importlib import metadata

    return any((dist.metadata["Name"] or "").lower().startswith("mlx-cuda") for dist in metadata.distributions())


@functools.cache
def thread_choice() -> blas_threads.ThreadChoice:
    """This process's BLAS thread policy, chosen once, at the first call (before the work starts)."""
    return blas_threads.choose_threads()


def ensure_fast_blas() -> BlasInfo:
    """Make MLX's CPU GEMMs use an optimised BLAS with a thread count the machine can give; report it.

    The thread count is :func:`thread_choice`'s, exported to the thread variables before a library
    loads and set through the library's own call after (OpenBLAS, MKL and BLIS change it at run
    time), so it holds however the library came to be loaded. numpy's own BLAS follows through
    threadpoolctl where that is installed.
    """
    choice = thread_choice()
    blas_threads.export(choice)
    info = _ensure_fast_blas()
    if choice.threads is not None and blas_threads.apply_to_library(info.library, choice.threads):
        info = replace(info, threads=_threads(info.library))
    blas_threads.apply_to_numpy(choice.threads)
    return replace(info, thread_policy=choice.describe())


def _ensure_fast_blas() -> BlasInfo:
    """Make MLX's CPU GEMMs use an optimised BLAS if one is installed; report what is in use.

    Order: ``$CLAIMCHECK_BLAS`` (a library path; ``off``/``reference`` keeps the bundled one), then the
    known distribution paths (a system OpenBLAS), then a BLAS from an installed wheel (``mkl``). A no-op on macOS (MLX uses Accelerate) and once ``mlx.core`` is imported
    (the binding is then fixed; the function only reports). Warns with :class:`ReferenceBlasWarning`
    when Linux ends up on the reference BLAS.
    """
    if sys.platform == "darwin":
        return BlasInfo(library="Accelerate", kind="accelerate", note="macOS: MLX uses Accelerate")
    if "mlx.core" in sys.modules:
        info = _info(None, "mlx.core was already imported; BLAS binding left as it was")
        _warn_if_slow(info)
        return info
    provider = _global_provider()
    if provider and classify(provider) not in ("reference", "unknown"):
        return _info(None, f"a fast BLAS was already in the global scope ({provider})")

    requested = os.environ.get(BLAS_ENV, "").strip()
    if requested.lower() in _DISABLE_VALUES:
        # An explicit opt-out (e.g. to measure the bundled BLAS) is not worth a warning.
        return BlasInfo(library="", kind="reference", note=f"{BLAS_ENV}={requested}: keeping MLX's bundled BLAS")
    refusals: list[str] = []
    candidates = [requested] if requested else candidate_paths() + wheel_paths()
    for path in candidates:
        reason = _try_load(path)
        if reason is None:
            layer = (f", {MKL_THREADING_ENV}={os.environ.get(MKL_THREADING_ENV)} {OMP_WAIT_ENV}={os.environ.get(OMP_WAIT_ENV)}"
                     if _is_mkl(path) else "")
            return _info(path, f"loaded {path} before mlx.core{layer}")
        if requested:
            refusals.append(f"{BLAS_ENV}={path}: {reason}")
    note = "; ".join(refusals) or "no optimised BLAS found at the known paths nor in installed wheels"
    info = BlasInfo(library="", kind="reference", note=note)
    _warn_if_slow(info)
    return info
