"""Fuzzing the claim loader: every input ends in claims or in one ``file:line:`` error line.

The contract checked on every generated input (``load_claims_text`` for text, ``read_claim_file``
for bytes, followed by what collection does next: ``expand_grid``, unique ids, dependencies):

- the result is a list of :class:`Claim` or a single :class:`ClaimError`;
- the error's text is one line that starts with ``<file>:<line>: ``;
- no other exception escapes (no traceback reaches the user);
- one parse takes under :data:`PARSE_LIMIT_S` of CPU time (inputs are kept under ~100 KB: the 1 MiB size cap
  is timed on its own below);
- nothing in the file is executed (``!!python/...`` payloads would create a marker file).

Examples are derandomized so CI is repeatable; set ``CLAIMCHECK_FUZZ_EXPLORE=1`` for fresh
random examples and ten times as many.

Bugs found by this fuzzing are listed in :data:`KNOWN_BUGS` with a canonical input each; each has
a regression test below. Should one reappear, fuzz inputs that fail in that bug's way are counted
(and shown) while its regression test fails the run.
"""

from __future__ import annotations

import gc
import math
import os
import re
import resource
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from claimcheck.claim import Claim
from claimcheck.errors import ClaimError
from claimcheck.claims.loader import check_dependencies, check_unique_ids, expand_grid, load_claims_text, read_claim_file
from claimcheck.claims.schema import SECTIONS
from claimcheck.claims.yamlsafe import MAX_BYTES
from tests.reliability._project import ROOT, table

PATH = "claims/fuzz.yaml"
PARSE_LIMIT_S = 1.0
MEMORY_LIMIT_MIB = 128  # growth of peak RSS over all bomb parses; the node cap keeps one parse near 10 MiB
EXPLORE = os.environ.get("CLAIMCHECK_FUZZ_EXPLORE") == "1"


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples * (10 if EXPLORE else 1),
        # No wall-clock deadline: on a loaded machine a fast parse can wait seconds for a core. The
        # parse's own CPU time is held to PARSE_LIMIT_S by the tally.
        deadline=None,
        derandomize=not EXPLORE,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
                               HealthCheck.large_base_example],
    )


# --------------------------------------------------------------------------- the contract

def one_line_error(error: ClaimError, path: str) -> bool:
    text = str(error)
    return len(text.splitlines()) == 1 and re.match(rf"{re.escape(path)}:\d+: ", text) is not None


def _outcome(run: Callable[[], list[Any]]) -> tuple[Any, float]:
    """The loader's result (claims or the exception) and the CPU seconds it took.

    CPU time, not wall time: a hang or blow-up is work done, and CI shares its cores with other
    jobs whose load must not make a fast parse look slow.
    """
    collecting = gc.isenabled()
    gc.disable()  # a full collection of the test process's heap is not the loader's time (as in timeit)
    started = time.process_time()
    try:
        claims = run()
        for claim in claims:
            assert isinstance(claim, Claim), f"loader returned {type(claim).__name__}, not a Claim"
            expand_grid(claim)
        check_unique_ids(claims)
        check_dependencies(claims)
        result: Any = claims
    except ClaimError as error:
        result = error
    except Exception as error:  # noqa: BLE001 - this is what the contract forbids
        result = error
    elapsed = time.process_time() - started
    if collecting:
        gc.enable()
    return result, elapsed


def _text_load(text: str) -> list[Any]:
    return load_claims_text(text, PATH)


# Bugs that still break the contract: canonical input, and how a fuzz failure caused by it looks.
@dataclass(frozen=True)
class KnownBug:
    name: str
    canonical: str
    looks_like: Callable[[str, Any], bool]


LINE_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"  # what str.splitlines() splits on


def _multiline_with(*needles: str) -> Callable[[str, Any], bool]:
    return lambda text, result: (isinstance(result, ClaimError) and len(str(result).splitlines()) > 1
                                 and any(n in str(result) for n in needles))


KNOWN_BUGS = [
    KnownBug("reader-error-is-multiline", "id: a\x00b\n", _multiline_with("unacceptable character")),
    KnownBug("bool-tag-on-text-raises-keyerror", "id: !!bool maybe\n",
             lambda text, result: isinstance(result, KeyError) and "!!bool" in text),
    KnownBug("collection-tag-on-scalar-is-multiline", "id: !!map text\n",
             _multiline_with("expected a mapping node", "expected a sequence node")),
    KnownBug("line-break-in-key-is-multiline", '"ti\\ntle": x\n',
             lambda text, result: isinstance(result, ClaimError) and len(str(result).splitlines()) > 1
             and any(ch in result.field for ch in LINE_BREAKS)),
]


def _still_broken(bug: KnownBug) -> bool:
    result, _ = _outcome(lambda: _text_load(bug.canonical))
    return not (isinstance(result, list) or (isinstance(result, ClaimError) and one_line_error(result, PATH)))


OPEN_BUGS = [bug for bug in KNOWN_BUGS if _still_broken(bug)]


@dataclass
class Tally:
    """What the fuzz saw; every input lands in exactly one of claims / errors / known."""

    cases: int = 0
    with_claims: int = 0
    empty: int = 0
    errors: int = 0
    known: Counter = field(default_factory=Counter)
    slowest_s: float = 0.0
    peak_mib: float = 0.0
    error_kinds: Counter = field(default_factory=Counter)

    def check(self, run: Callable[[], list[Any]], text: str, path: str = PATH) -> Any:
        result, elapsed = _outcome(run)
        self.cases += 1
        self.slowest_s = max(self.slowest_s, elapsed)
        assert elapsed < PARSE_LIMIT_S, f"parse took {elapsed:.2f} CPU s (limit {PARSE_LIMIT_S} s) for {text[:200]!r}"
        if isinstance(result, list):
            if result:
                self.with_claims += 1
            else:
                self.empty += 1
            return result
        if isinstance(result, ClaimError) and one_line_error(result, path):
            self.errors += 1
            self.error_kinds[_kind(result)] += 1
            return result
        for bug in OPEN_BUGS:
            if bug.looks_like(text, result):
                self.known[bug.name] += 1
                return result
        if isinstance(result, ClaimError):
            raise AssertionError(f"ClaimError is not one `{path}:line:` line: {str(result)!r}\ninput: {text[:500]!r}")
        raise AssertionError(f"{type(result).__name__} escaped the loader: {result!r}\ninput: {text[:500]!r}")

    def row(self, strategy: str) -> tuple[Any, ...]:
        known = sum(self.known.values())
        return (strategy, self.cases, self.with_claims, self.empty, self.errors, known, 0,
                f"{self.slowest_s * 1000:.0f}", f"{self.peak_mib:.1f}" if self.peak_mib else "-")


HEADER = ("strategy", "cases", "valid", "empty", "ClaimError", "known-bug", "crashes", "slowest CPU ms", "RSS growth MiB")


def _kind(error: ClaimError) -> str:
    message = error.message
    for cue in ("malformed YAML", "unknown key", "missing required", "expected", "duplicate", "tag", "alias bomb",
                "nesting", "merge keys", "non-finite", "out of range", "not UTF-8", "larger than", "rule `", "check.",
                "depends_on", "dependency", "grid"):
        if cue in message or cue in error.field:
            return cue
    return "other"


def _show(report_table, title: str, tally: Tally, strategy: str) -> None:
    text = table(HEADER, [tally.row(strategy)])
    if tally.known:
        text += "\nknown-bug hits: " + ", ".join(f"{k} x{v}" for k, v in sorted(tally.known.items()))
    text += "\nerror kinds: " + ", ".join(f"{k} {v}" for k, v in tally.error_kinds.most_common())
    report_table(title, text)


# --------------------------------------------------------------------------- strategies

REAL_FILES = sorted((ROOT / "claims").rglob("*.yaml"))
REAL_DOCS = [doc for path in REAL_FILES for doc in yaml.safe_load_all(path.read_text()) if isinstance(doc, dict)]
FIELD_NAMES = sorted({name for fields in SECTIONS.values() for name in fields} | set(SECTIONS) - {""})

WEIRD_VALUES: list[Any] = [
    None, True, False, 0, -1, 2**63, 2**64, -(2**80), 10**30, 1e308, -1e-308, 0.0, -0.0,
    math.nan, math.inf, -math.inf, "", " ", "\t", "é", "\u202e" + "evil", "\U0001f642" * 10, "x" * 5000,
    [], [1, "a"], {}, {"a": 1}, {"rule": "ratio"}, "1e400", "1.0e400", "0x1F", "0o17", "1_000", "1:20", "~", "null",
    "yes", "no", "on", "off", "2001-12-14", "2001-12-14 21:59:43.10 -5", ".inf", "-.inf", ".nan", "<<", "*a", "&a",
    "!!python/object/apply:os.system", "../../etc/passwd", "a/b", "\\x00", "NaN", "Infinity",
]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30), st.sampled_from(WEIRD_VALUES[:45]),
)
keys = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=12), st.integers(-5, 5), st.booleans())
trees = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                       st.dictionaries(keys, inner, max_size=6)), max_leaves=30)


@st.composite
def claim_shaped(draw) -> dict[str, Any]:
    """A top-level mapping with the schema's keys (and a few others) holding random values."""
    names = draw(st.lists(st.sampled_from(list(SECTIONS[""]) + ["extra", "draft"]), unique=True, max_size=12))
    out: dict[Any, Any] = {}
    for name in names:
        if name in SECTIONS and draw(st.booleans()):
            sub = draw(st.lists(st.sampled_from(list(SECTIONS[name]) + ["bogus"]), unique=True, max_size=8))
            out[name] = {k: draw(trees) for k in sub}
        else:
            out[name] = draw(trees)
    return out


def dump(draw, value: Any, *, many: bool = False) -> str:
    options = dict(allow_unicode=draw(st.booleans()), default_flow_style=draw(st.sampled_from([None, True, False])),
                   sort_keys=draw(st.booleans()), width=draw(st.sampled_from([40, 80, 10_000])))
    if many:
        return yaml.safe_dump_all(value, explicit_start=draw(st.booleans()), **options)
    return yaml.safe_dump(value, **options)


@st.composite
def random_documents(draw) -> str:
    kind = draw(st.sampled_from(["tree", "claim-shaped", "several", "yaml-soup", "unicode-text"]))
    if kind == "tree":
        return dump(draw, draw(trees))
    if kind == "claim-shaped":
        return dump(draw, draw(claim_shaped()))
    if kind == "several":
        return dump(draw, draw(st.lists(st.one_of(trees, claim_shaped()), min_size=1, max_size=4)), many=True)
    if kind == "yaml-soup":
        alphabet = st.sampled_from(list(":-[]{},&*!|>'\"#%@`?<= \n\t.0123456789abcdexyz_") + ["---\n", "...\n", "id: ",
                                                                                              "!!", "\\", "\r\n"])
        return "".join(draw(st.lists(alphabet, max_size=200)))
    return draw(st.text(max_size=300))


def _paths(tree: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(tree, dict):
        for key, value in tree.items():
            out += _paths(value, prefix + (key,))
    elif isinstance(tree, list):
        for index, value in enumerate(tree):
            out += _paths(value, prefix + (index,))
    return out


def _get(tree: Any, path: tuple) -> Any:
    for step in path:
        tree = tree[step]
    return tree


def _typo(draw, key: str) -> str:
    if not key:
        return "x"
    i = draw(st.integers(0, len(key) - 1))
    op = draw(st.sampled_from(["drop", "double", "swap", "case", "char"]))
    if op == "drop":
        return key[:i] + key[i + 1:]
    if op == "double":
        return key[:i] + key[i] + key[i:]
    if op == "swap" and i + 1 < len(key):
        return key[:i] + key[i + 1] + key[i] + key[i + 2:]
    if op == "case":
        return key.upper()
    return key[:i] + draw(st.characters()) + key[i + 1:]


def mutate_tree(draw, doc: dict[str, Any]) -> dict[str, Any]:
    import copy

    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent, last = _get(doc, path[:-1]), path[-1]
        op = draw(st.sampled_from(["drop", "rename", "retype", "retype", "wrap-list", "wrap-map", "hoist", "move",
                                   "add-unknown"]))
        if op == "drop":
            del parent[last]
        elif op == "rename" and isinstance(parent, dict):
            how = draw(st.sampled_from(["typo", "field", "text", "special"]))
            if how == "typo":
                new = _typo(draw, str(last))
            elif how == "field":
                new = draw(st.sampled_from(FIELD_NAMES))
            elif how == "text":
                new = draw(st.text(max_size=10))
            else:
                new = draw(st.sampled_from(["<<", "", " ", "id", "ID", "\u0130d"]))
            value = parent.pop(last)
            parent[new] = value
        elif op in ("retype", "rename"):
            parent[last] = draw(st.one_of(st.sampled_from(WEIRD_VALUES), scalars, trees))
        elif op == "wrap-list":
            parent[last] = [parent[last]]
        elif op == "wrap-map":
            parent[last] = {draw(st.sampled_from(FIELD_NAMES + ["value"])): parent[last]}
        elif op == "hoist" and isinstance(parent[last], dict) and parent[last]:
            parent[last] = next(iter(parent[last].values()))
        elif op == "move" and isinstance(parent, dict):
            value = parent.pop(last)
            target = draw(st.sampled_from([doc] + [v for v in doc.values() if isinstance(v, dict)]))
            target[last] = value
        elif op == "add-unknown" and isinstance(parent, dict):
            parent[draw(st.sampled_from(FIELD_NAMES + ["unknown", "Title"]))] = draw(scalars)
    return doc


TAGS = ["!!python/object/apply:os.system", "!!python/name:os.system", "!!python/object/new:os.system",
        "!!python/module:os", "!!binary", "!!set", "!!omap", "!!pairs", "!!str", "!!int", "!!float", "!!bool",
        "!!null", "!!map", "!!seq", "!!timestamp", "!custom", "!<tag:yaml.org,2002:python/object/apply:os.system>",
        "!!merge", "!!value", "!"]


def payloads(marker: Path) -> list[str]:
    """Documents that create ``marker`` if anything in them were ever executed."""
    cmd = f"touch {marker}"
    return [
        f"id: !!python/object/apply:os.system [{cmd!r}]\n",
        f"!!python/object/apply:os.system [{cmd!r}]\n",
        f"id: !!python/object/apply:subprocess.call [[touch, {str(marker)!r}]]\n",
        f"notes: !!python/object/new:os.system [{cmd!r}]\n",
        f"%TAG !p! tag:yaml.org,2002:python/\n---\nid: !p!object/apply:os.system [{cmd!r}]\n",
        f"id: !<tag:yaml.org,2002:python/object/apply:os.system> [{cmd!r}]\n",
        f"? !!python/object/apply:os.system [{cmd!r}]\n: 1\n",
        f"- &x !!python/object/apply:os.system [{cmd!r}]\n- *x\n",
        f"id: !!python/object/apply:builtins.exec [\"open({str(marker)!r}, 'w').close()\"]\n",
        f"id: !!python/object/apply:builtins.eval [\"open({str(marker)!r}, 'w').close()\"]\n",
    ]


def mutate_text(draw, text: str, marker: Path) -> str:
    for _ in range(draw(st.integers(0, 3))):
        lines = text.split("\n")
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        op = draw(st.sampled_from(["tag", "anchor-alias", "merge", "dup-line", "del-line", "swap-lines", "indent",
                                   "insert-char", "truncate", "tab", "payload", "crlf"]))
        line = lines[i] if lines else ""
        if op == "tag" and ": " in line:
            head, _, tail = line.partition(": ")
            lines[i] = f"{head}: {draw(st.sampled_from(TAGS))} {tail}"
        elif op == "anchor-alias" and ": " in line:
            head, _, tail = line.partition(": ")
            lines[i] = f"{head}: &anc {tail}"
            j = draw(st.integers(0, len(lines) - 1))
            if ": " in lines[j] and j != i:
                lines[j] = lines[j].partition(": ")[0] + ": *anc"
        elif op == "merge":
            lines.insert(i, draw(st.sampled_from(["<<: *anc", "<<: {id: x}", "  <<: [*anc]", "<<: 1"])))
        elif op == "dup-line" and lines:
            lines.insert(i, line)
        elif op == "del-line" and lines:
            del lines[i]
        elif op == "swap-lines" and len(lines) > 1:
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "indent" and lines:
            lines[i] = " " * draw(st.integers(1, 5)) + line
        elif op == "payload":
            lines.insert(i, draw(st.sampled_from(payloads(marker))).rstrip("\n"))
        elif op == "crlf":
            return "\r\n".join(lines)
        else:
            text = "\n".join(lines)
            if not text:
                continue
            k = draw(st.integers(0, len(text) - 1))
            if op == "insert-char":
                text = text[:k] + draw(st.text(alphabet=st.sampled_from(list(":-[]{},&*!|>'\"#%@` \t\n") + ["\u2028"]),
                                               min_size=1, max_size=3)) + text[k:]
            elif op == "truncate":
                text = text[:k]
            elif op == "tab":
                text = text[:k] + "\t" + text[k + 1:]
            continue
        text = "\n".join(lines)
    return text


@st.composite
def mutated_claims(draw, marker: Path) -> str:
    docs = draw(st.lists(st.sampled_from(REAL_DOCS), min_size=1, max_size=3))
    docs = [mutate_tree(draw, doc) if draw(st.integers(0, 9)) else doc for doc in docs]
    text = dump(draw, docs, many=True) if len(docs) > 1 else dump(draw, docs[0])
    return mutate_text(draw, text, marker)


def laughs(width: int, depth: int) -> str:
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for level in range(1, depth):
        lines.append(f"l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


@st.composite
def hostile_constructs(draw, marker: Path) -> str:
    """Expansion bombs, deep nesting, huge scalars and many keys, alone or inside a real claim."""
    kind = draw(st.sampled_from(["laughs", "laughs-in-claim", "flow-depth", "block-depth", "seq-depth", "wide-map",
                                 "long-scalar", "many-docs", "recursive-alias", "merge-bomb", "payload",
                                 "huge-number", "many-aliases"]))
    if kind == "laughs":
        return laughs(draw(st.integers(2, 15)), draw(st.integers(2, 12)))
    if kind == "laughs-in-claim":
        base = yaml.safe_dump(draw(st.sampled_from(REAL_DOCS)), sort_keys=False)
        depth = draw(st.integers(2, 8))
        bomb = "x0: &n0 [a, a, a, a, a, a, a, a, a, a]\n" + "".join(
            f"x{i}: &n{i} [{', '.join([f'*n{i - 1}'] * 10)}]\n" for i in range(1, depth))
        return bomb + base + f"tags: *n{depth - 1}\n"
    if kind == "flow-depth":  # capped at 400 here; 2,000 levels are covered by a regression test below
        depth = draw(st.integers(1, 400))
        opener = draw(st.sampled_from(["[", "{a: ", "[{b: "]))
        closer = {"[": "]", "{a: ": "}", "[{b: ": "}]"}[opener]
        return "id: " + opener * depth + "x" + closer * depth + "\n"
    if kind == "block-depth":
        depth = draw(st.integers(1, 300))
        return "".join(" " * i + f"k{i}:\n" for i in range(depth)) + " " * depth + "v\n"
    if kind == "seq-depth":
        return "- " * draw(st.integers(1, 1000)) + "x\n"
    if kind == "wide-map":
        n = draw(st.integers(1, 6000))
        if draw(st.booleans()):
            return "{" + ", ".join(f"k{i}: {i}" for i in range(n)) + "}\n"
        return "".join(f"k{i}: {i}\n" for i in range(n))
    if kind == "long-scalar":
        size = draw(st.integers(1, 30_000))
        style = draw(st.sampled_from(["plain", "double", "single", "block"]))
        body = draw(st.sampled_from(["x", "é", "\\\\", "ab "])) * size
        if style == "double":
            return f'notes: "{body.replace(chr(92), "/")}"\n'
        if style == "single":
            return f"notes: '{body}'\n"
        if style == "block":
            return "notes: |\n  " + body[:100_000] + "\n"
        return f"notes: {body}\n"
    if kind == "many-docs":
        doc = yaml.safe_dump(draw(st.sampled_from(REAL_DOCS)), sort_keys=False)
        return "---\n".join([doc] * draw(st.integers(1, 12)))
    if kind == "recursive-alias":
        return draw(st.sampled_from(["&a [*a]", "&a {x: *a}", "a: &a [b, *a]", "&a [&b [*a, *b]]"])) + "\n"
    if kind == "merge-bomb":
        lines = ["a0: &a0 {k: v}"] + [f"a{i}: &a{i}\n  <<: [{', '.join(f'*a{j}' for j in range(i))}]"
                                      for i in range(1, draw(st.integers(2, 30)))]
        return "\n".join(lines) + "\n"
    if kind == "payload":
        return draw(st.sampled_from(payloads(marker)))
    if kind == "huge-number":
        digits = draw(st.integers(1, 10_000))
        number = draw(st.sampled_from(["1" * digits, "-" + "9" * digits, "0x" + "f" * digits, "1." + "1" * digits,
                                       "1e" + "9" * min(digits, 30), "0b" + "1" * digits, "1_" * digits + "1"]))
        doc = yaml.safe_dump(REAL_DOCS[0], sort_keys=False)
        return re.sub(r"(tolerance|threshold|expected|margin): [^,}\n]+", rf"\1: {number}", doc, count=1)
    n = draw(st.integers(1, 12_000))
    return "a: &a x\nb: [" + ", ".join(["*a"] * n) + "]\n"


@st.composite
def claim_bytes(draw) -> bytes:
    kind = draw(st.sampled_from(["binary", "encoded", "flipped", "bom"]))
    text = yaml.safe_dump(draw(st.sampled_from(REAL_DOCS)), sort_keys=False, allow_unicode=True)
    if kind == "binary":
        return draw(st.binary(max_size=2000))
    if kind == "encoded":
        encoding = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-32", "latin-1", "cp1252", "utf-8-sig"]))
        return (text + "notes: café ☕\n").encode(encoding, errors="replace")
    if kind == "bom":
        return draw(st.sampled_from([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b""])) + text.encode()
    data = bytearray(text.encode())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data) - 1))
        data[at:at] = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x00",
                                            b"\xc0\xaf", b"\x80", b"\xe2\x80\xa8", b"\x1b[31m"]))
    return bytes(data)


# --------------------------------------------------------------------------- fuzz tests

def test_fuzz_random_documents(tmp_path: Path, report_table) -> None:
    tally = Tally()

    @fuzz_settings(300)
    @given(random_documents())
    def run(text: str) -> None:
        tally.check(lambda: _text_load(text), text)

    run()
    assert tally.cases >= 300
    _show(report_table, "loader fuzz: random YAML documents", tally, "random-documents")


def test_fuzz_mutated_real_claims(tmp_path: Path, report_table) -> None:
    marker = tmp_path / "executed"
    tally = Tally()

    @fuzz_settings(300)
    @given(mutated_claims(marker))
    def run(text: str) -> None:
        tally.check(lambda: _text_load(text), text)

    run()
    assert not marker.exists(), "a claim file made the loader execute code"
    assert tally.cases >= 300
    assert tally.with_claims > 0, "no mutation left a claim valid: the mutations never reach deep validation"
    assert tally.errors > tally.cases // 2
    _show(report_table, f"loader fuzz: mutated real claims ({len(REAL_DOCS)} docs from claims/)", tally,
          "mutated-claims")


def test_fuzz_bombs_nesting_and_payloads(tmp_path: Path, report_table) -> None:
    """Expansion bombs, nesting, huge scalars and payloads: bounded time and memory, nothing executed.

    Memory is the growth of this process's peak RSS over the whole run (a high-water mark, so any
    single parse that blew up would show); the worst bombs also run under RLIMIT_AS below.
    """
    marker = tmp_path / "executed"
    tally = Tally()

    @fuzz_settings(300)
    @given(hostile_constructs(marker))
    def run(text: str) -> None:
        tally.check(lambda: _text_load(text), text)

    before = _peak_rss_mib()
    run()
    tally.peak_mib = _peak_rss_mib() - before
    assert not marker.exists(), "a claim file made the loader execute code"
    assert tally.cases >= 300
    assert tally.peak_mib < MEMORY_LIMIT_MIB, f"peak RSS grew by {tally.peak_mib:.0f} MiB while parsing bombs"
    _show(report_table, "loader fuzz: bombs, nesting, huge values, payloads", tally, "hostile")


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def test_fuzz_bytes_through_read_claim_file(tmp_path: Path, report_table) -> None:
    folder = tmp_path / "claims"
    folder.mkdir()
    target = folder / "fuzz.yaml"
    tally = Tally()

    @fuzz_settings(300)
    @given(claim_bytes())
    def run(data: bytes) -> None:
        target.write_bytes(data)
        tally.check(lambda: read_claim_file(target), data.decode("utf-8", "replace"), path=str(target))

    run()
    assert tally.cases >= 300
    _show(report_table, "loader fuzz: raw bytes via read_claim_file (binary, UTF-16/32, Latin-1, bad UTF-8)", tally,
          "bytes")


# --------------------------------------------------------------------------- targeted cases

def test_every_payload_is_refused_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    for text in payloads(marker):
        result, _ = _outcome(lambda: _text_load(text))
        assert isinstance(result, ClaimError) and one_line_error(result, PATH), (text, result)
        assert any(cue in str(result) for cue in ("not allowed", "malformed", "must be plain scalars")), str(result)
    assert not marker.exists()


def test_size_cap_and_a_maximal_document(report_table) -> None:
    """Over 1 MiB is refused before parsing; a document just under the cap is timed and shown.

    Pure-Python PyYAML composes roughly 0.25-2.5 MB per CPU second depending on the shape (one
    long scalar is fast, a flow map of 60,000 small keys takes ~4-5 CPU s), so the cap is
    also what bounds the parse time of a legitimate but enormous file. This test holds the long
    scalar to 5 s; the per-document 1 s limit of the fuzz applies to inputs under ~100 KB.
    """
    over = "notes: " + "x" * MAX_BYTES + "\n"
    started = time.process_time()
    with pytest.raises(ClaimError, match=r"^claims/fuzz\.yaml:1: file is larger than 1024 KiB$"):
        load_claims_text(over, PATH)
    refused = time.process_time() - started
    base = yaml.safe_dump({k: v for k, v in REAL_DOCS[0].items() if k != "notes"}, sort_keys=False)
    filler = MAX_BYTES - len(base.encode()) - 20
    near = base + "notes: " + "y" * filler + "\n"
    started = time.process_time()
    claims = load_claims_text(near, PATH)
    parsed = time.process_time() - started
    assert len(claims) == 1 and len(claims[0].notes) == filler
    report_table("loader: size cap", table(("input", "bytes", "CPU seconds"), [
        ("over the cap (refused)", len(over.encode()), f"{refused:.3f}"),
        ("one claim just under the cap", len(near.encode()), f"{parsed:.3f}"),
    ]))
    assert refused < 0.5
    assert parsed < 5.0


BOMB_CHILD = textwrap.dedent(
    """
    import resource, sys, time
    limit = int(sys.argv[1]) << 20
    from claimcheck.errors import ClaimError
    from claimcheck.claims.loader import load_claims_text
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))  # after the imports: only parsing is limited
    sys.path.insert(0, sys.argv[2])
    from test_loader_fuzz_bombs import BOMBS
    for name, text in BOMBS:
        started = time.process_time()
        try:
            load_claims_text(text, "bomb.yaml")
            outcome = "loaded"
        except ClaimError as error:
            outcome = "ClaimError " + str(error).splitlines()[0][:80]
        print(f"{name}\\t{time.process_time() - started:.3f}\\t{outcome}", flush=True)
    """
)


def test_bombs_under_an_address_space_limit(tmp_path: Path, report_table) -> None:
    """The worst expansion bombs parsed in a child whose address space is capped (RLIMIT_AS)."""
    bombs = {
        "billion laughs 9x9": laughs(9, 9),
        "laughs 20 wide x 20 deep": laughs(20, 20),
        "quadratic alias list (20k aliases of a 10 KB scalar)": "a: &a " + "x" * 10_000 + "\nb: [" + ", ".join(["*a"] * 20_000) + "]\n",
        "merge-key chain": "\n".join(["a0: &a0 {k: v}"] + [f"a{i}: &a{i}\n  <<: [{', '.join(f'*a{j}' for j in range(i))}]"
                                                          for i in range(1, 40)]) + "\n",
        "flow map of 10,000 keys (130 KB)": "{" + ", ".join(f"k{i}: {i}" for i in range(10_000)) + "}\n",
    }
    (tmp_path / "test_loader_fuzz_bombs.py").write_text("BOMBS = " + repr(list(bombs.items())) + "\n")
    limit_mib = 1024
    done = subprocess.run([sys.executable, "-c", BOMB_CHILD, str(limit_mib), str(tmp_path)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split("\t") for line in done.stdout.splitlines()]
    assert [r[0] for r in rows] == list(bombs)
    report_table(f"loader: bombs in a child with RLIMIT_AS = {limit_mib} MiB",
                 table(("bomb", "CPU seconds", "outcome"), [tuple(r) for r in rows]))
    for name, seconds, outcome in rows:
        assert outcome.startswith("ClaimError bomb.yaml:"), (name, outcome)
        assert float(seconds) < 10.0, (name, seconds)


# --------------------------------------------------------------------------- former bugs, now regression tests

@pytest.mark.parametrize("bug", KNOWN_BUGS, ids=[bug.name for bug in KNOWN_BUGS])
def test_known_bug_inputs_give_one_line_errors(bug: KnownBug) -> None:
    result, _ = _outcome(lambda: _text_load(bug.canonical))
    assert isinstance(result, ClaimError), f"{type(result).__name__} escaped: {result!r}"
    assert one_line_error(result, PATH), repr(str(result))


def test_unknown_probe_name_with_line_break_is_one_line() -> None:
    from claimcheck.claims.loader import check_probe

    text = yaml.safe_dump(REAL_DOCS[0], sort_keys=False).replace(f"name: {REAL_DOCS[0]['probe']['name']}",
                                                                 'name: "no\\nsuch-probe"')
    claim = load_claims_text(text, PATH)[0]
    with pytest.raises(ClaimError) as caught:
        check_probe(claim)
    assert one_line_error(caught.value, PATH), repr(str(caught.value))


def test_deep_flow_nesting_is_refused_fast() -> None:
    started = time.process_time()
    with pytest.raises(ClaimError):
        load_claims_text("[" * 2000, PATH)
    assert time.process_time() - started < PARSE_LIMIT_S


GRID_CPU_LIMIT_S = 4  # CPU seconds the expansion may take, counted after the imports
GRID_CHILD = textwrap.dedent(
    f"""
    import resource, sys
    from claimcheck.errors import ClaimError
    from claimcheck.claims.loader import expand_grid, load_claims_text
    resource.setrlimit(resource.RLIMIT_AS, (768 << 20, 768 << 20))
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (spent + {GRID_CPU_LIMIT_S}, spent + {GRID_CPU_LIMIT_S} + 5))
    try:
        claims = load_claims_text(sys.stdin.read(), "grid.yaml")
        print("items", len(expand_grid(claims[0])))
    except ClaimError as error:
        print("ClaimError", error)
    """
)


def test_grid_cardinality_is_bounded() -> None:
    axes = {f"a{k}": list(range(60)) for k in range(4)}  # 240 YAML values, 12,960,000 combinations
    doc = dict(REAL_DOCS[0])
    doc["probe"] = {"name": doc["probe"]["name"], "grid": axes}
    # CPU time, not wall time, bounds the expansion (RLIMIT_CPU stops the child with SIGXCPU): a
    # loaded machine must not fail a fast expansion. The wall-clock timeout only catches a hang.
    done = subprocess.run([sys.executable, "-c", GRID_CHILD], input=yaml.safe_dump(doc), capture_output=True,
                          text=True, timeout=900, cwd=ROOT)
    assert done.returncode != -signal.SIGXCPU, f"expanding the grid used more than {GRID_CPU_LIMIT_S} s of CPU"
    assert done.stdout.startswith("ClaimError grid.yaml:"), (done.stdout[-300:], done.stderr[-300:])
