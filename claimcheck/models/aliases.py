"""Model aliases: a claim's model name mapped to where this project keeps that model.

Claims name a model the way their source does (``gemma-4-e4b``); which weights that is on a given
machine is the project's business, written in ``<rootdir>/pyproject.toml``::

    [tool.claimcheck.models]
    gemma-4-e4b = "~/models/gemma-4-e4b-it-4bit"                         # an mlx-lm directory
    gemma-4-e4b-it-optiq-4bit = "mlx-community/gemma-4-e4b-it-OptiQ-4bit"  # a repo in the local HF cache
    cpm5-1b = { path = "models/cpm5" }        # say which, when a relative path looks like a repo id
    tiny = { repo = "someorg/tiny-model" }

A string is a directory when it starts with ``.``, ``/`` or ``~`` or names an existing folder
(relative to the pyproject.toml), otherwise a Hugging Face repo id. Repos are looked up in the local
cache only (``huggingface_hub.try_to_load_from_cache``); nothing is ever downloaded. So the claims, their
item ids and the verdicts lock stay the same whichever machine runs them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from claimcheck.errors import NotApplicable
from claimcheck.models._spec import ModelSpec
from claimcheck.suggest import closest

TABLE = "tool.claimcheck.models"
Kind = Literal["directory", "huggingface"]


@dataclass(frozen=True)
class ModelAlias:
    """One ``[tool.claimcheck.models]`` entry.

    Attributes:
        name: the model name claims use.
        target: the value as written (a path or a repo id).
        kind: ``directory`` or ``huggingface``.
        path: the directory, absolute (``None`` for a repo).
        declared_at: ``pyproject.toml:<line>``, for messages.
    """

    name: str
    target: str
    kind: Kind
    path: Path | None
    declared_at: str

    def describe(self) -> str:
        """``alias -> directory /abs/path`` or ``alias -> Hugging Face repo org/name``."""
        where = f"directory {self.path}" if self.kind == "directory" else f"Hugging Face repo {self.target}"
        return f"alias ({self.declared_at}) -> {where}"


def _key_line(text: str, name: str) -> int:
    """The line of ``name = ...`` inside ``[tool.claimcheck.models]`` (0 when it cannot be found)."""
    section = ""
    key = re.compile(rf"""^\s*(?:{re.escape(name)}|"{re.escape(name)}"|'{re.escape(name)}')\s*=""")
    for number, line in enumerate(text.splitlines(), 1):
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            section = header.group(1).replace('"', "").replace(" ", "")
            continue
        if section == TABLE and key.match(line):
            return number
    return 0


def _directory(target: str, base: Path) -> Path:
    """``target`` as an absolute path: ``~`` expanded, a relative path taken from the pyproject.toml's folder."""
    return (base / Path(target).expanduser()).resolve()


def _looks_like_path(target: str, base: Path) -> bool:
    return target.startswith((".", "/", "~")) or _directory(target, base).is_dir()


def _entry(name: str, value: object, base: Path, where: str) -> ModelAlias:
    from claimcheck.models import local
    from claimcheck.project_config import ProjectConfigError

    def bad(why: str) -> ProjectConfigError:
        return ProjectConfigError(f"{where}: [{TABLE}] {name}: {why}")

    kind: Kind
    if isinstance(value, str):
        target = value.strip()
        kind = "directory" if _looks_like_path(target, base) else "huggingface"
    elif isinstance(value, dict) and len(value) == 1 and set(value) <= {"path", "repo"}:
        ((field, raw),) = value.items()
        if not isinstance(raw, str):
            raise bad(f"`{field}` must be a string, got {raw!r}")
        target, kind = raw.strip(), "directory" if field == "path" else "huggingface"
    else:
        raise bad(f"expected a directory or Hugging Face repo id (a string), or {{path = ...}} / {{repo = ...}}; "
                  f"got {value!r}")
    if not target:
        raise bad("empty target")
    if kind == "huggingface" and not local.looks_like_hf_id(target):
        raise bad(f"`{target}` is neither an existing directory nor a Hugging Face repo id (org/name)")
    path = _directory(target, base) if kind == "directory" else None
    return ModelAlias(name=name, target=target, kind=kind, path=path, declared_at=where)


def read_aliases(rootdir: str | Path) -> dict[str, ModelAlias]:
    """The aliases of the project at ``rootdir`` (empty without a pyproject.toml or the table).

    Raises:
        ProjectConfigError: the table or one of its entries is malformed (one line with file and line).
    """
    from claimcheck.project_config import ProjectConfigError, pyproject_path, read_tool_table

    table = read_tool_table(rootdir).get("models", {})
    path = pyproject_path(rootdir)
    if not isinstance(table, dict):
        raise ProjectConfigError(f"{path}: [{TABLE}] must be a table of model name -> directory or repo id")
    text = path.read_text(encoding="utf-8") if table else ""
    base = path.parent.resolve()
    return {str(name): _entry(str(name), value, base, f"{path}:{_key_line(text, str(name))}")
            for name, value in table.items()}


_LOCK = threading.Lock()
_active: dict[str, ModelAlias] = {}
_active_root: Path | None = None


def use_project(rootdir: str | Path) -> dict[str, ModelAlias]:
    """Make ``rootdir``'s aliases the ones model ids resolve through (the plugin and CLI call this).

    Raises:
        ProjectConfigError: as :func:`read_aliases`; the previous table stays active then.
    """
    global _active, _active_root
    aliases = read_aliases(rootdir)
    with _LOCK:
        _active, _active_root = aliases, Path(rootdir).resolve()
    return dict(aliases)


def clear() -> None:
    """Forget the active aliases (tests; a library user who wants none)."""
    global _active, _active_root
    with _LOCK:
        _active, _active_root = {}, None


def active() -> Mapping[str, ModelAlias]:
    """The aliases model ids resolve through now, by name."""
    with _LOCK:
        return dict(_active)


def lookup(name: str) -> ModelAlias | None:
    with _LOCK:
        return _active.get(name)


def cached_repo_ids() -> list[str]:
    """Model repos in the local Hugging Face cache (empty when huggingface_hub or the cache is missing)."""
    try:
        from huggingface_hub import scan_cache_dir
    except ImportError:
        return []
    from claimcheck.models.local import hub_cache

    try:
        info = scan_cache_dir(hub_cache())
    except Exception:  # CacheNotFound, a corrupt cache folder: nothing cached that can be used
        return []
    return sorted(repo.repo_id for repo in info.repos if repo.repo_type == "model")


def spec(alias: ModelAlias) -> ModelSpec:
    """How the aliased model would load, under the alias's name (scopes and records keep the claim's name).

    Raises:
        NotApplicable: the directory or the cached repo is not there (one line naming what was looked for).
    """
    from claimcheck.models import local

    if alias.kind == "directory":
        assert alias.path is not None
        return local.spec_for(alias.name, alias.path, alias.describe())
    snapshot = local.hf_cache_path(alias.target)
    if snapshot is None:
        raise NotApplicable(f"model {alias.name} not installed: {alias.describe()}, {_why_not_cached(alias.target)}")
    return local.spec_for(alias.name, snapshot, f"{alias.describe()}, cached at {snapshot}")


def _why_not_cached(repo_id: str) -> str:
    from claimcheck.models import local

    if not local.huggingface_hub_installed():
        return "but huggingface_hub is not installed, so its cache cannot be read"
    match = closest(repo_id, cached_repo_ids())
    hint = f" (cached: did you mean `{match}`?)" if match else ""
    return f"not in the local Hugging Face cache {_cache_folder()}{hint}; nothing is downloaded"


def _cache_folder() -> str:
    from claimcheck.models import local

    folder = local.hub_cache()
    if folder is None:
        from huggingface_hub import constants

        folder = str(constants.HF_HUB_CACHE)
    return folder
