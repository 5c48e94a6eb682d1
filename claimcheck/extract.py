"""Draft claims from a doc: one YAML draft per sentence or table cell that carries a figure.

``claimcheck extract DOC.md [-o FOLDER]`` reads a Markdown write-up and prints (or writes,
one file per draft) claims marked ``draft: true``: the loader accepts them, ``claimcheck
validate`` lists what is still missing, and nothing runs them until a person completes them.

Each draft has its ``source`` filled in (doc, heading path, line, the figure as written), a
``statement`` placeholder to rewrite, ``probe: {name: TODO}``, and a guessed rule:

- ``0 of N``, ``0 exact matches in N`` -> ``zero_rate`` (threshold: the 95% bound on the rate);
- ``implies`` (a derived figure) -> ``exact``, tolerance half its last printed digit;
- ``≥``, ``at least``, ``reaches``, ``above``, ``exceeds`` -> ``at_least`` with the threshold
  (``reaches`` a range is a band, below);
- ``≤``, ``under``, ``at most``, ``below``, ``within`` -> ``at_most`` with the threshold;
- ``≈``, ``±``, ``equals``, ``unchanged``, ``same as`` -> ``equivalent``;
- a range (``74–88%``) -> ``at_least`` its low end and ``at_most`` its high end, two drafts;
- ``N% of ...`` with one of the bounds above -> ``ratio`` (``bound``, the threshold as a fraction);
- a number in a table (not ``~``) -> ``exact``, tolerance half its last printed digit;
- anything else, by the unit: ``at_least`` for bandwidth and throughput, ``at_most`` for time,
  ``exact`` otherwise.

The guess is a starting point; the ``notes`` of each draft say what it was based on.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from claimcheck.figures import UNITS, Cell, Figure, MarkdownDoc, Sentence, read_markdown, unit_of
from claimcheck.claims.loader import DRAFT_PROBE

AT_LEAST_CUES = ("≥", ">=", "at least", "reaches", "reached", "reach", "above", "more than", "exceeds", "exceed",
                 "over", ">", "≳", "minimum of")
WEAK_CUES = ("reaches", "reached", "reach")  # "reaches 74–88%" lands in a range: a band, not a bound
EXACT_CUES = ("implies", "implied", "works out to", "amounts to")
AT_MOST_CUES = ("≤", "<=", "under", "at most", "below", "less than", "no more than", "within", "<", "≲", "up to",
                "maximum of")
EQUIVALENT_CUES = ("≈", "±", "equals", "equal to", "unchanged", "same as", "identical", "matches", "no faster",
                   "no slower", "inside")
_WORD_CUE = re.compile(r"[a-z]")
_HEADER_UNIT_RE = re.compile(
    r"(?<![A-Za-z0-9])(?P<unit>" + "|".join(re.escape(u) for u in sorted(
        (s for s in UNITS if s not in ("ratio", "rate", "fraction", "1", "count", "x", "×", "s", "bit", "bits",
                                       "byte", "nat", "nats")),
        key=len, reverse=True)) + r")(?![A-Za-z0-9])"
)


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One figure (or joined group: ``2.12 ms → 268 GB/s``) worth a draft, with its setting."""

    figures: tuple[Figure, ...]
    primary: Figure
    sentence: Sentence
    cell: Cell | None
    text: str  # the figure as written (group text)


# --------------------------------------------------------------------------- finding figures


def _header_units(header: str) -> list[str]:
    """Units a column header names outside any figure: ``"measured ms (tok/s)"`` -> ``["ms", "tok/s"]``."""
    return [UNITS[m.group("unit")].symbol for m in _HEADER_UNIT_RE.finditer(header)]


def _cell_figures(doc: MarkdownDoc, cell: Cell) -> list[Figure]:
    """Figures of a table cell, unitless ones taking the unit their column header names."""
    figures = doc.figures_in(cell.start, cell.end)
    units = _header_units(cell.header)
    if not units:
        return figures
    text = doc.masked
    out = []
    for figure in figures:
        if figure.unit is None and figure.kind in ("value", "range"):
            inside = text[cell.start:figure.start].count("(") > text[cell.start:figure.start].count(")")
            unit = units[1] if inside and len(units) > 1 else units[0]
            figure = dataclasses.replace(figure, unit=unit, unit_inherited=True)
        out.append(figure)
    return out


def _worth_drafting(figure: Figure, cell_text: str | None) -> bool:
    if figure.kind == "count":
        return figure.low == 0 and figure.high == 0 and not figure.approx
    if figure.unit is not None:
        return unit_of(figure.unit) is not None
    # a table cell holding just a decimal (a ratio column: "0.75") is a figure; bare integers are labels
    return cell_text is not None and figure.decimals > 0 and cell_text.strip(" *_") == figure.text


def _groups(figures: Sequence[Figure]) -> list[tuple[Figure, ...]]:
    groups: dict[int, list[Figure]] = {}
    for figure in figures:
        groups.setdefault(figure.group, []).append(figure)
    return [tuple(g) for g in groups.values()]


def _primary(group: Sequence[Figure]) -> Figure:
    """The figure a group states: the arrow's result, the bold member, or the last of a list."""
    for figure in group:
        if figure.role == "to":
            return figure
    for figure in group:
        if figure.bold:
            return figure
    return group[-1]


def find_candidates(doc: MarkdownDoc, *, per: str = "sentence") -> list[Candidate]:
    """Figures to draft claims from: one per sentence/cell (``per="sentence"``) or every group (``"figure"``)."""
    out: list[Candidate] = []
    for sentence in doc.sentences:
        units: list[tuple[Cell | None, list[Figure]]] = []
        if sentence.kind == "table":
            for table_cell in sentence.cells[1:]:
                units.append((table_cell, _cell_figures(doc, table_cell)))
        else:
            units.append((None, doc.figures_in(sentence.start, sentence.end)))
        for cell, figures in units:
            cell_text = doc.masked[cell.start:cell.end] if cell is not None else None
            groups = [g for g in _groups(figures) if any(_worth_drafting(f, cell_text) for f in g)]
            if not groups:
                continue
            if per == "sentence":
                bold = [g for g in groups if any(f.bold and _worth_drafting(f, cell_text) for f in g)]
                groups = [bold[0] if bold else groups[0]]
            if per == "figure":  # each member of a list ("299 / 320 / 337 GB/s") is its own figure
                groups = [part for g in groups for part in ([(f,) for f in g] if g[0].role == "list" else [g])]
            for group in groups:
                primary = _primary([f for f in group if _worth_drafting(f, cell_text)])
                text = doc.text[min(f.start for f in group):max(f.end for f in group)].strip()
                out.append(Candidate(tuple(group), primary, sentence, cell, text))
    return out


# --------------------------------------------------------------------------- guessing the rule


def _last_cue(window: str, cues: Iterable[str]) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for cue in cues:
        pattern = re.escape(cue)
        if _WORD_CUE.match(cue[0]):
            pattern = r"(?<![a-z])" + pattern + r"(?![a-z])"
        for match in re.finditer(pattern, window):
            if best is None or match.end() > best[0]:
                best = (match.end(), cue)
    return best


def _sample_count(doc: MarkdownDoc, sentence: Sentence, figure: Figure) -> int | None:
    """N of a zero count: its own ``of N``, else a count of samples/runs/seeds in the same sentence."""
    if figure.count_of:
        return figure.count_of
    for other in doc.figures_in(sentence.start, sentence.end):
        if other.kind == "count" and other.noun and other.low > 0 and re.search(
                r"sample|run|trial|seed|generation|draw|attempt|prompt", other.noun):
            return int(other.low)
    return None


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(float(value), 10)


def guess_checks(doc: MarkdownDoc, candidate: Candidate, *, exact_context: bool = False) -> list[tuple[dict, str]]:
    """``[(check, why)]`` for a candidate: usually one check, two for a range (low and high bounds)."""
    figure = candidate.primary
    lowered = doc.masked.lower()
    scope_start = candidate.cell.start if candidate.cell else candidate.sentence.start
    scope_end = candidate.cell.end if candidate.cell else candidate.sentence.end
    group_start = min(f.start for f in candidate.figures)
    group_end = max(f.end for f in candidate.figures)
    before = lowered[max(scope_start, group_start - 40):group_start]
    after = lowered[group_end:min(scope_end, group_end + 30)]

    if figure.kind == "count" and figure.low == 0:
        n = _sample_count(doc, candidate.sentence, figure)
        check = {"rule": "zero_rate", "output": "TODO"}
        if n:
            check["threshold"] = round(1 - 0.05 ** (1 / n), 6)
            return [(check, f"'0 in {n}': zero observed; threshold = the 95% upper bound on the rate, 1-0.05^(1/{n})")]
        return [(check, "a zero count: zero_rate; the sample count was not found, set check.threshold")]
    checks = _guess(figure, in_table=candidate.cell is not None, before=before, after=after,
                    exact_context=exact_context)
    share_of = figure.unit in ("%", "x") and re.match(r"^[*_]*\s*of\b", after)
    if share_of and all(check["rule"] in ("at_least", "at_most") for check, _ in checks):
        # "74–88% of raw bandwidth": a bound on the ratio of two outputs
        scale = 0.01 if figure.unit == "%" else 1.0
        return [({"rule": "ratio", "output": "TODO", "reference": "TODO", "bound": check["rule"],
                  "threshold": _number(round(check["threshold"] * scale, 10))},
                 f"{why}; '{figure.unit} of' makes it a ratio of two outputs (set check.reference)")
                for check, why in checks]
    return checks


def _guess(figure: Figure, *, in_table: bool, before: str, after: str, exact_context: bool) -> list[tuple[dict, str]]:
    """The rule table of the module docstring, for everything but zero counts."""
    unit = {"unit": figure.full_unit} if figure.full_unit else {}

    def bound(rule: str, value: float, why: str) -> tuple[dict, str]:
        return {"rule": rule, "output": "TODO", "threshold": _number(value), **unit}, why

    def exact(tolerance: float, why: str) -> tuple[dict, str]:
        check = {"rule": "exact", "output": "TODO", "expected": _number(figure.low),
                 "tolerance": _number(round(tolerance, 10)), **unit}
        return check, why

    at_least = _last_cue(before, AT_LEAST_CUES)
    if at_least and figure.is_range and at_least[1] in WEAK_CUES:
        at_least = None
    at_most = _last_cue(before, AT_MOST_CUES)
    equivalent = _last_cue(before + " " + after, EQUIVALENT_CUES)
    derived = _last_cue(before, EXACT_CUES)
    if derived and not figure.is_range:
        return [exact(figure.rounding, f"'{derived[1]}': a derived figure, exact to its printed rounding")]
    if figure.kind == "plusminus":
        check = {"rule": "equivalent", "output": "TODO", "reference": "TODO", "margin": _number(figure.high), **unit}
        return [(check, f"'±{figure.high:g}': equivalence within that margin")]
    if at_most and (not at_least or at_least[0] <= at_most[0]):  # the cue nearer the figure wins
        return [bound("at_most", figure.high, f"'{at_most[1]}' before the figure")]
    if at_least:
        return [bound("at_least", figure.low, f"'{at_least[1]}' before the figure")]
    if equivalent:
        check = {"rule": "equivalent", "output": "TODO", "reference": "TODO", **unit}
        return [(check, f"'{equivalent[1]}' next to the figure: set check.reference and check.margin")]
    if figure.is_range:
        return [bound("at_least", figure.low, f"the range {figure.text}: its low end (another draft: the high end)"),
                bound("at_most", figure.high, f"the range {figure.text}: its high end (another draft: the low end)")]
    if (in_table or exact_context) and not figure.approx:
        where = "a table number" if in_table else "an exact figure"
        return [exact(figure.rounding, f"{where}: exact, tolerance half the last printed digit")]
    better = figure.unit_info.higher_is_better
    if better is True:
        return [bound("at_least", figure.low, f"no wording cue; {figure.unit} is higher-is-better")]
    if better is False:
        return [bound("at_most", figure.high, f"no wording cue; {figure.unit} is lower-is-better")]
    slack = figure.rounding + (0.1 * abs(figure.low) if figure.approx else 0.0)
    return [exact(slack, "no wording cue: exact, tolerance from the printed rounding")]


# --------------------------------------------------------------------------- drafts


def _slug(text: str, limit: int = 40) -> str:
    text = text.replace("%", " pct ").replace("µ", "u").replace("μ", "u").replace("×", "x").replace("/", " per ")
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:limit].strip("-")


def _one_line(text: str, limit: int = 300) -> str:
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    text = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", text)
    text = " ".join(text.replace("**", "").replace("`", "").split())
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _section_tag(section: str) -> str:
    last = section.split(" > ")[-1] if section else ""
    number = re.match(r"^§?\s*(\d+(?:\.\d+)*)", last)
    if number:
        return "s" + number.group(1).replace(".", "-")
    return _slug(last, 16)


def _scope(doc: MarkdownDoc) -> dict[str, Any]:
    """``as-stated`` on the machine the doc names first (Apple chips -> metal), else portable."""
    from claimcheck.gate import machines_named

    names = [n for n in machines_named(doc.masked) if n.upper() != "CPU"]
    if not names:
        return {"kind": "portable", "backend": "any"}
    name = names[0].removeprefix("Apple ").strip()
    backend = "metal" if re.match(r"M\d", name) else ("cuda" if re.match(r"(?:GH|GB)?[ABHL]\d|RTX", name) else "any")
    return {"kind": "as-stated", "backend": backend, "device": f"*{name}*"}


def extract(text: str, doc_name: str, *, per: str = "sentence") -> list[dict[str, Any]]:
    """Draft claims (plain dicts, in YAML field order) for every figure-bearing sentence or cell of a doc.

    Args:
        text: the Markdown document.
        doc_name: its file name, written to ``source.doc``.
        per: ``"sentence"`` (one draft per sentence or table cell, its leading figure) or
            ``"figure"`` (one draft per figure or joined group of figures).
    """
    if per not in ("sentence", "figure"):
        raise ValueError(f"per must be 'sentence' or 'figure', got {per!r}")
    doc = read_markdown(text)
    scope = _scope(doc)
    stem = _slug(Path(doc_name).stem, 28)
    drafts: list[dict[str, Any]] = []
    used: set[str] = set()
    for candidate in find_candidates(doc, per=per):
        sentence = candidate.sentence
        sentence_text = _one_line(doc.text[sentence.start:sentence.end])
        exact_context = "exact" in sentence.section.lower() or bool(re.search(r"\bexact\b", sentence_text.lower()))
        if candidate.cell is not None:
            row_label = _one_line(doc.text[sentence.cells[0].start:sentence.cells[0].end], 80)
            header = candidate.cell.header
            figure_text = f"{row_label} | {header}: {_one_line(candidate.text, 120)}"
            summary = f"{row_label}, {header}"
        else:
            figure_text = _one_line(candidate.text, 120)
            summary = sentence_text
        checks = guess_checks(doc, candidate, exact_context=exact_context)
        line = doc.position(candidate.primary.start)[0]
        others = [f.text for f in doc.figures_in(sentence.start, sentence.end)
                  if f.unit is not None and f not in candidate.figures]
        for check, why in checks:
            suffix = ("-min" if check.get("bound", check["rule"]) == "at_least" else "-max") if len(checks) > 1 else ""
            parts = (stem, _section_tag(sentence.section), _slug(candidate.primary.text, 24))
            base_id = "-".join(p for p in parts if p)
            claim_id = (base_id[: 80 - len(suffix) - 3].strip("-") + suffix)
            unique, n = claim_id, 2
            while unique in used:
                unique = f"{claim_id[:76]}-{n}"
                n += 1
            used.add(unique)
            notes = f"Drafted from {doc_name}:{line}. Rule guessed: {why}."
            if others and per == "sentence":
                notes += f" Other figures in the sentence: {', '.join(others[:8])}."
            drafts.append({
                "id": unique,
                "draft": True,
                "title": _one_line(f"TODO: {summary}", 78),
                "statement": f"TODO: restate in this project's own words: {sentence_text}",
                "source": {"doc": doc_name, "section": sentence.section or "(top)", "figure": figure_text,
                           "line": line},
                "scope": dict(scope),
                "probe": {"name": DRAFT_PROBE},
                "check": check,
                "notes": notes,
            })
    return drafts


def dump_drafts(drafts: Sequence[dict[str, Any]]) -> str:
    """Drafts as one multi-document YAML text."""
    import yaml

    return "---\n".join(yaml.safe_dump(d, sort_keys=False, allow_unicode=True, width=110) for d in drafts)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="claimcheck extract",
                                     description="Draft claim YAML (draft: true) from the figures of a Markdown doc.")
    parser.add_argument("docs", nargs="+", metavar="DOC.md", help="Markdown documents")
    parser.add_argument("-o", "--output", metavar="FOLDER", default=None,
                        help="write one <id>.yaml per draft into FOLDER (existing files are kept) instead of stdout")
    parser.add_argument("--per", choices=("sentence", "figure"), default="sentence",
                        help="one draft per sentence/table cell (default) or per figure")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``claimcheck extract``: print or write drafts; exit 2 when a doc cannot be read."""
    args = _parser().parse_args(argv)
    all_drafts: list[dict[str, Any]] = []
    for name in args.docs:
        path = Path(name)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            print(f"claimcheck extract: {path}: cannot read ({error})", file=sys.stderr)
            return 2
        all_drafts.extend(extract(text, path.name, per=args.per))
    if args.output is None:
        sys.stdout.write(dump_drafts(all_drafts))
    else:
        folder = Path(args.output)
        folder.mkdir(parents=True, exist_ok=True)
        written = kept = 0
        for draft in all_drafts:
            target = folder / f"{draft['id']}.yaml"
            if target.exists():
                kept += 1
                continue
            target.write_text(dump_drafts([draft]), encoding="utf-8")
            written += 1
        print(f"claimcheck extract: {written} draft(s) written to {folder}"
              + (f", {kept} existing file(s) kept" if kept else ""), file=sys.stderr)
    print(f"claimcheck extract: {len(all_drafts)} draft(s) from {len(args.docs)} doc(s)", file=sys.stderr)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
