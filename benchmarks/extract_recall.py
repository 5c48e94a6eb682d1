"""How many of the claims in claims/ would `claimcheck extract` have drafted from the source docs?

Splits the source diff into its two Markdown docs, drafts claims from each (one per sentence or
cell, and one per figure), and compares with every claim in claims/ that names one of those docs:

* drafted correctly: a draft from the same doc has the claim's rule and its number (the check's
  threshold or expected value, compared in base units so GiB/GB and %/ratio agree; a claim with no
  such number is matched on the figures its ``source.figure`` quotes);
* figure found, other rule: a draft has the number but guessed another rule;
* missed: no draft has the number, split into "parsed but not drafted" and "not among the doc's
  figures" (a number the claim derives, or one measured on another model than the doc's).

Usage: ``python benchmarks/extract_recall.py [--source DIFF] [--claims DIR] [--verbose]``
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from claimcheck.extract import extract, find_candidates  # noqa: E402
from claimcheck.figures import parse_figures, read_markdown, unit_of  # noqa: E402

DIFF_CANDIDATES = (
    ROOT.parent / "shared" / "sources" / "mlx-bun-investigations.diff.txt",
    ROOT / "shared" / "sources" / "mlx-bun-investigations.diff.txt",
)


def split_diff(text: str) -> dict[str, str]:
    """The removed docs of a unified diff, by file name, with the leading '-' stripped."""
    docs: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        header = re.match(r"^(?:\S+/)?([\w.-]+\.md)$", line.strip())
        if header and not line.startswith("-"):
            current = header.group(1)
            docs[current] = []
        elif current and line.startswith("-"):
            docs[current].append(line[1:])
    return {name: "\n".join(lines) + "\n" for name, lines in docs.items()}


def base_value(value: float | None, unit: str | None) -> tuple[float, str] | None:
    """A number in its family's base unit (bytes, seconds, ratio...), with the family; bare = ratio."""
    info = unit_of(unit)
    if value is None or info is None:
        return None
    return value * info.factor, ("fraction" if info.family == "number" else info.family)


def _same(a: tuple[float, str] | None, b: tuple[float, str] | None) -> bool:
    return bool(a and b and a[1] == b[1] and math.isclose(a[0], b[0], rel_tol=1e-6, abs_tol=1e-12))


def check_number(check: dict | object, figure_text: str = "") -> tuple[float, str] | None:
    """The check's threshold or expected value in base units.

    A check without a unit takes it from the figure of ``figure_text`` that prints the same
    number (``threshold: 10`` and ``~10–15 µs/op``), or a fraction when a percentage does
    (``threshold: 0.74`` and ``74–88%``).
    """
    get = check.get if isinstance(check, dict) else (lambda name: getattr(check, name, None))
    value = next((get(name) for name in ("expected", "threshold") if get(name) is not None), None)
    if value is None:
        return None
    unit = get("unit")
    if unit is None:
        for figure in parse_figures(figure_text):
            if figure.unit and value in (figure.low, figure.high):
                unit = figure.full_unit
                break
    return base_value(float(value), unit)


def draft_numbers(draft: dict) -> list[tuple[float, str]]:
    """The draft's threshold/expected value, or (rules without one) the numbers of its figure."""
    number = check_number(draft["check"])
    if number:
        return [number]
    return figure_numbers(draft["source"]["figure"].rpartition(": ")[2])


def _numbers_of(figure) -> list[tuple[float, str]]:
    if figure.unit is None and figure.kind != "value":
        return []
    return [n for n in (base_value(v, figure.unit) for v in {figure.low, figure.high}) if n]


def figure_numbers(text: str) -> list[tuple[float, str]]:
    return [n for figure in parse_figures(text) for n in _numbers_of(figure)]


def load_claims(folder: Path) -> list:
    from claimcheck.claims.loader import iter_claim_files, read_claim_file

    claims = []
    for path in iter_claim_files([folder]):
        try:
            claims.extend(read_claim_file(path))  # drafts are left out
        except Exception as error:  # a broken file elsewhere must not stop the count
            print(f"  (skipped {path}: {error})", file=sys.stderr)
    return claims


def evaluate(docs: dict[str, str], claims: list, per: str) -> dict:
    drafts = {name: extract(text, name, per=per) for name, text in docs.items()}
    parsed = {name: [n for f in read_markdown(text).figures for n in _numbers_of(f)] for name, text in docs.items()}
    correct, other_rule, parsed_only, unparsed = [], [], [], []
    for claim in claims:
        doc = Path(claim.source.doc).name
        wanted = check_number(claim.check, claim.source.figure)
        family = unit_of(claim.check.unit).family if claim.check.unit and unit_of(claim.check.unit) else None
        numbers = [wanted] if wanted else [n for n in figure_numbers(claim.source.figure)
                                           if family is None or n[1] == family]
        matches = [d for d in drafts.get(doc, []) if any(_same(m, n) for m in draft_numbers(d) for n in numbers)]
        if any(d["check"]["rule"] == claim.check.rule for d in matches):
            correct.append(claim)
        elif matches:
            other_rule.append((claim, sorted({d["check"]["rule"] for d in matches})))
        elif any(_same(p, n) for p in parsed.get(doc, []) for n in numbers):
            parsed_only.append(claim)
        else:
            unparsed.append(claim)
    return {"drafts": drafts, "correct": correct, "other_rule": other_rule, "parsed_only": parsed_only,
            "unparsed": unparsed}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=next((p for p in DIFF_CANDIDATES if p.exists()), None))
    parser.add_argument("--claims", type=Path, default=ROOT / "claims")
    parser.add_argument("--verbose", action="store_true", help="list every missed claim")
    args = parser.parse_args(argv)
    if args.source is None or not args.source.exists():
        print("source diff not found; pass --source", file=sys.stderr)
        return 2
    docs = split_diff(args.source.read_text(encoding="utf-8"))
    print(f"source docs: {', '.join(f'{n} ({t.count(chr(10))} lines)' for n, t in docs.items())}")
    for name, text in docs.items():
        doc = read_markdown(text)
        figures = doc.figures
        with_unit = [f for f in figures if f.unit is not None]
        counts = Counter(f.kind for f in figures)
        print(f"{name}: {len(doc.sentences)} sentences/rows, {len(figures)} figures parsed "
              f"({len(with_unit)} with a unit, {counts['range'] + counts['plusminus']} ranges, "
              f"{counts['count']} counts); candidates: {len(find_candidates(doc, per='figure'))} figure groups in "
              f"{len(find_candidates(doc, per='sentence'))} sentences/cells")
    all_claims = load_claims(args.claims)
    claims = [c for c in all_claims if Path(c.source.doc).name in docs]
    by_doc = Counter(Path(c.source.doc).name for c in claims)
    print(f"claims in {args.claims.name}/: {len(all_claims)}, of which {len(claims)} name a source doc "
          f"({', '.join(f'{n}: {k}' for n, k in sorted(by_doc.items()))})")
    if not claims:
        return 0
    for per in ("sentence", "figure"):
        result = evaluate(docs, claims, per)
        n_drafts = sum(len(d) for d in result["drafts"].values())
        rules = Counter(d["check"]["rule"] for ds in result["drafts"].values() for d in ds)
        total = len(claims)
        print(f"\nper {per}: {n_drafts} drafts ({', '.join(f'{r} {k}' for r, k in rules.most_common())})")
        print(f"  drafted correctly (rule and figure): {len(result['correct'])}/{total} "
              f"({100 * len(result['correct']) / total:.0f}%)")
        print(f"  figure drafted, other rule:          {len(result['other_rule'])}/{total}")
        print(f"  figure parsed, not drafted:          {len(result['parsed_only'])}/{total}")
        print(f"  number not among the doc's figures:  {len(result['unparsed'])}/{total} (derived, or another model's)")
        wrong_rules = Counter(f"{c.check.rule} <- guessed {'/'.join(r)}" for c, r in result["other_rule"])
        if wrong_rules:
            print("  rule confusions: " + "; ".join(f"{k} x{v}" for k, v in wrong_rules.most_common()))
        if args.verbose:
            for claim, rules_found in result["other_rule"]:
                print(f"    other rule  {claim.id}: {claim.check.rule} vs {rules_found} | {claim.source.figure}")
            for claim in result["parsed_only"]:
                print(f"    not drafted {claim.id}: {claim.check.rule} | {claim.source.figure}")
            for claim in result["unparsed"]:
                print(f"    not in doc  {claim.id}: {claim.check.rule} | {claim.source.figure}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
