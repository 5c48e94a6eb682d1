"""Typed views of the few MLX calls whose stubs return a union of shapes.

``mx.load`` and ``mlx.utils.tree_flatten`` are annotated with every shape they can return, whichever
arguments were passed; these wrappers call them the one way this project does and say what comes
back, so callers need neither casts nor ignores. MLX is imported only when one is called.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import mlx.core as mx


def named_parameters(module: Any) -> list[tuple[str, mx.array]]:
    """``tree_flatten(module.parameters())``: ``(dotted name, array)`` per parameter, in module order."""
    from mlx.utils import tree_flatten

    return cast("list[tuple[str, mx.array]]", tree_flatten(module.parameters()))


def load_with_metadata(path: str | Path) -> tuple[dict[str, mx.array], dict[str, Any]]:
    """``mx.load(path, return_metadata=True)``: the tensors by name and the file's metadata."""
    import mlx.core as mx

    return cast("tuple[dict[str, mx.array], dict[str, Any]]", mx.load(str(path), return_metadata=True))


def mlx_version() -> str:
    """The MLX version string recorded in manifests."""
    import mlx.core as mx

    return str(mx.__version__)  # type: ignore[attr-defined]  # mlx's stubs omit __version__
