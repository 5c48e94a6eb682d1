"""The prompt set of the curve probes (``probes/data/curve-prompts.yaml``) and how claims select from it.

Five prompts per pole (creative, advice, factual); a claim names ``all``, a pole, an id, or a list of
those. A fourth pole, ``copy`` (the model asked to repeat a given text), serves positive controls
only: ``all`` leaves it out, so no claim's data changes with it. The file is read and checked here,
so a bad entry is one line naming the file, the entry and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from claimcheck.api import ProbeError

PROMPT_SET = Path(__file__).resolve().parents[1] / "data" / "curve-prompts.yaml"  # the package's data/, shared by families
POLES = ("creative", "advice", "factual")
CONTROL_POLES = ("copy",)  # prompts whose continuation is given: selected by name only, never by `all`
ALL_POLES = POLES + CONTROL_POLES


@dataclass(frozen=True)
class CurvePrompt:
    """One prompt of the set: an id, its pole and the user turn."""

    id: str
    pole: str
    text: str
    origin: str = "added"


def load_prompt_set(path: Path = PROMPT_SET) -> list[CurvePrompt]:
    """Read and validate the prompt set (unique ids, known poles, non-empty text)."""
    import yaml

    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle)
    if not isinstance(data, dict) or not isinstance(data.get("prompts"), list):
        raise ProbeError(f"{path}: expected a mapping with a `prompts` list")
    prompts, seen = [], set()
    for index, entry in enumerate(data["prompts"]):
        where = f"{path}: prompts[{index}]"
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry.get(k) for k in ("id", "pole", "text")):
            raise ProbeError(f"{where}: expected `id`, `pole` and `text` strings, got {entry!r}")
        if entry["pole"] not in ALL_POLES:
            raise ProbeError(f"{where}: `pole` must be one of {', '.join(ALL_POLES)}, got {entry['pole']!r}")
        if entry["id"] in seen:
            raise ProbeError(f"{where}: duplicate id `{entry['id']}`")
        seen.add(entry["id"])
        prompts.append(CurvePrompt(entry["id"], entry["pole"], entry["text"], str(entry.get("origin", "added"))))
    return prompts


def select_prompts(selection: str | Sequence[str], prompt_set: Sequence[CurvePrompt] | None = None) -> list[CurvePrompt]:
    """Prompts by ``all`` (the three claim poles), a pole name, an id, or a list of those."""
    prompt_set = list(prompt_set if prompt_set is not None else load_prompt_set())
    names = [selection] if isinstance(selection, str) else list(selection)
    chosen: list[CurvePrompt] = []
    for name in names:
        if name == "all":
            matches = [p for p in prompt_set if p.pole in POLES]
        elif name in ALL_POLES:
            matches = [p for p in prompt_set if p.pole == name]
        else:
            matches = [p for p in prompt_set if p.id == name]
        if not matches:
            known = ", ".join(["all", *ALL_POLES, *(p.id for p in prompt_set)])
            raise ProbeError(f"no prompt matches `{name}`; expected one of: {known}")
        chosen += [p for p in matches if p not in chosen]
    return chosen


def one_prompt(selection: str) -> CurvePrompt:
    """The single prompt a probe about one prompt names (by id; not ``all`` nor a pole)."""
    matches = select_prompts(selection)
    if not isinstance(selection, str) or selection == "all" or selection in ALL_POLES or len(matches) != 1:
        raise ProbeError(f"`prompt` must name one prompt id, got {selection!r}")
    return matches[0]
