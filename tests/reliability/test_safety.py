"""Safety: claim files are data, report file names cannot escape, reports escape all claim text."""

from __future__ import annotations

import ast
import importlib.util
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from claimcheck.errors import ClaimError
from claimcheck.claims.loader import load_claims_text
from claimcheck.report import build_reports
from claimcheck.report.corrections import ReportError, report_path
from claimcheck.report.html_assets import SCRIPT as PAGE_SCRIPT
from claimcheck.engine.result import ItemResult
from claimcheck.store import EvidenceStore
from tests.reliability._project import ROOT, claim_yaml, table

PACKAGE = ROOT / "claimcheck"

_spec = importlib.util.spec_from_file_location("cc_synthetic_safety", ROOT / "tests" / "store" / "synthetic.py")
synth = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(synth)


# --------------------------------------------------------------------------- no eval, no unsafe YAML

SAFE_LOADERS = {"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"}
FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "execfile"}
FORBIDDEN_ATTRS = {
    ("yaml", "unsafe_load"), ("yaml", "unsafe_load_all"), ("yaml", "full_load"), ("yaml", "full_load_all"),
    ("pickle", "load"), ("pickle", "loads"), ("marshal", "load"), ("marshal", "loads"), ("shelve", "open"),
    ("os", "system"), ("os", "popen"), ("dill", "loads"),
}
FORBIDDEN_NAMES = {"FullLoader", "UnsafeLoader", "CFullLoader", "CUnsafeLoader"}
# (file, call) pairs reviewed by hand: module names that come from this package or from files
# on disk that a person installed, never from claim files.
ALLOWED_IMPORTS = {
    ("cli/__init__.py", "importlib.import_module"),  # a fixed dispatch table of claimcheck modules
    ("api.py", "importlib.import_module"),  # one constant name: the shipped op registry, on first use
    ("api/__init__.py", "importlib.import_module"),  # a fixed table of this package's modules, on first use
    ("_moved.py", "importlib.import_module"),  # a fixed table of 0.1.0 module names -> their new homes
    ("probing/registry.py", "importlib.import_module"),  # probes/*.py of the project being run
    ("rules/__init__.py", "importlib.import_module"),  # this package's own rule modules, found by pkgutil
    ("models/_registry.py", "importlib.import_module"),  # built-in model modules and entry points
    ("models/synthetic.py", "importlib.import_module"),  # mlx_lm.models.<model_type> of a model config
}


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def _findings(path: Path) -> list[str]:
    return _scan(path.read_text(), path.relative_to(PACKAGE).as_posix())


def _scan(source: str, relative: str) -> list[str]:
    tree = ast.parse(source, relative)
    found = []
    # A loader class defined here is safe when it derives from a safe loader (checked at the AST level).
    safe = set(SAFE_LOADERS) | {
        node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
        and any(_dotted(base).rsplit(".", 1)[-1] in SAFE_LOADERS for base in node.bases)
    }
    for node in ast.walk(tree):
        where = f"claimcheck/{relative}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call):
            name = _dotted(node.func)
            if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS:
                found.append(f"{where}: {node.func.id}() call")
            if name in ("yaml.load", "yaml.load_all", "yaml.compose", "yaml.compose_all", "yaml.parse"):
                loader = [k.value for k in node.keywords if k.arg == "Loader"] or node.args[1:2]
                if not loader or _dotted(loader[0]).rsplit(".", 1)[-1] not in safe:
                    found.append(f"{where}: {name}() without a safe Loader")
            if any(name.endswith(f"{module}.{attr}") or name == f"{module}.{attr}" for module, attr in FORBIDDEN_ATTRS):
                found.append(f"{where}: {name}()")
            if name.endswith("import_module") and (relative, "importlib.import_module") not in ALLOWED_IMPORTS:
                found.append(f"{where}: {name}() outside the reviewed places")
            for keyword in node.keywords:
                if keyword.arg == "shell" and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
                    found.append(f"{where}: subprocess with shell=")
        if isinstance(node, (ast.Name, ast.Attribute)):
            leaf = node.id if isinstance(node, ast.Name) else node.attr
            if leaf in FORBIDDEN_NAMES:
                found.append(f"{where}: {leaf}")
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
            if any(n.split(".")[0] in ("pickle", "marshal", "shelve", "dill") for n in names):
                found.append(f"{where}: imports {', '.join(n for n in names if n)}")
    return found


def test_no_eval_exec_or_unsafe_yaml_in_the_package(report_table) -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    findings = [finding for path in files for finding in _findings(path)]
    text = "\n".join(path.read_text() for path in files)
    # A plain-text pass as well, for uses the syntax walk cannot see (strings handed to getattr, etc.).
    for pattern in (r"unsafe_load", r"FullLoader", r"UnsafeLoader", r"pickle\.loads?\b", r"\byaml\.load\("):
        for match in re.finditer(pattern, text):
            findings.append(f"text match {match.group(0)!r}")
    report_table("safety: source scan of claimcheck/",
                 table(("files", "forbidden uses"), [(len(files), len(findings))]))
    assert not findings, "\n".join(findings)


def test_the_scan_finds_what_it_forbids() -> None:
    """The scanner itself must be able to fail."""
    sample = ("import yaml, pickle, subprocess, importlib\nyaml.load(t)\nyaml.load(t, Loader=yaml.FullLoader)\n"
              "eval('1')\npickle.loads(b'')\nsubprocess.run('ls', shell=True)\nimportlib.import_module(name)\n"
              "yaml.safe_load(t)\nyaml.compose_all(t, Loader=yaml.SafeLoader)\n")
    findings = " | ".join(_scan(sample, "sample.py"))
    for expected in ("yaml.load() without a safe Loader", "FullLoader", "eval() call", "pickle.loads()", "shell=",
                     "imports", "import_module() outside the reviewed places"):
        assert expected in findings, (expected, findings)
    assert findings.count("without a safe Loader") == 2
    assert "compose_all" not in findings


# --------------------------------------------------------------------------- ids and report paths

HOSTILE_IDS = ["../x", "a/b", "..", ".", "/etc/passwd", "/tmp/x", "C:\\x", "x\\..\\y", "", " ", "x\x00y", "X", "-x",
               "a" * 81, "x/../../y", "~", "%2e%2e", "..\\..\\x", "x\ny", "corrections/../../x", "\u2215etc", "ａ"]


@pytest.mark.parametrize("claim_id", HOSTILE_IDS, ids=[repr(i)[:24] for i in HOSTILE_IDS])
def test_loader_refuses_ids_that_are_not_slugs(claim_id: str) -> None:
    text = claim_yaml("placeholder", "normal", check={"rule": "at_least", "output": "x", "threshold": 0})
    text = text.replace("id: placeholder", f"id: {yaml.safe_dump(claim_id, default_style=chr(34)).strip()}")
    with pytest.raises(ClaimError) as caught:
        load_claims_text(text, "claims/hostile.yaml")
    assert str(caught.value).startswith("claims/hostile.yaml:1: id: ")


@pytest.mark.parametrize("claim_id", HOSTILE_IDS, ids=[repr(i)[:24] for i in HOSTILE_IDS])
def test_report_path_refuses_hostile_ids(tmp_path: Path, claim_id: str) -> None:
    folder = tmp_path / "reports" / "corrections"
    with pytest.raises(ReportError):
        report_path(folder, claim_id, ".md")


def test_report_path_keeps_slugs_inside_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "reports" / "corrections"
    path = report_path(folder, "qmv-large-bw", ".md")
    assert path.parent == folder and path.name == "qmv-large-bw.md"


# --------------------------------------------------------------------------- escaping in reports

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
SVG = "</code></td><svg onload=alert(1)>"
QUOTE = "' onmouseover='alert(1)"
HOSTILE_TEXT = f"{SCRIPT} {IMG} {SVG} {QUOTE} [link](javascript:alert(1)) `code` **bold** | pipe"


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))

    def handle_data(self, data):
        self.text.append(data)


def _hostile_claim(claim_id: str) -> dict:
    claim = synth.claim_record(claim_id)
    claim.update(title=f"title {HOSTILE_TEXT}", statement=f"statement {HOSTILE_TEXT}", notes=f"notes {HOSTILE_TEXT}",
                 source={"doc": f"{SCRIPT}.md", "section": IMG, "figure": f"figure {HOSTILE_TEXT}"})
    claim["check"] = dict(claim["check"], unit=SVG)
    claim["scope"] = dict(claim["scope"], device=IMG, model=SCRIPT)
    return claim


def _hostile_store(path: Path) -> tuple[EvidenceStore, str]:
    store = EvidenceStore(path)
    machine = dict(synth.MACHINE_A, device=SCRIPT, cpu=IMG, blas=SVG)
    run_id = store.begin_run(machine=machine, machine_class=f"cpu/{SCRIPT}", options={"args": [IMG]})
    verdicts = ["refuted", "inconclusive", "holds", "not-applicable", "error"]
    for index, verdict in enumerate(verdicts):
        claim_id = f"hostile-{verdict}"
        record = synth.outcome_record(claim_id, item=f"size={index}", verdict=verdict, reason=f"reason {HOSTILE_TEXT}",
                               claim=_hostile_claim(claim_id), machine=machine, params={"size": index, "note": SCRIPT},
                               info={"model": SCRIPT, "variant": IMG, "weights_hash": SVG})
        if record["decision"]:
            record["decision"]["estimate_label"] = IMG
        store.record(run_id, ItemResult.from_record(record))
    # An id that never passed the loader (e.g. a store merged from elsewhere).
    escape = synth.outcome("../../escaped", item=None, verdict="refuted", reason=SCRIPT,
                           claim=_hostile_claim("../../escaped"))
    store.record(run_id, escape)
    store.finish_run(run_id)
    return store, run_id


def test_reports_escape_claim_text_and_refuse_hostile_ids(tmp_path: Path, report_table) -> None:
    out = tmp_path / "deep" / "reports"
    store, run_id = _hostile_store(tmp_path / "ev.sqlite")
    # A planted link: a report written through it would land outside the report folder.
    outside = tmp_path / "outside.md"
    outside.write_text("untouched\n")
    (out / "corrections").mkdir(parents=True)
    (out / "corrections" / "hostile-refuted.md").symlink_to(outside)
    try:
        result = build_reports(store, run_id, out, plots=False)
    finally:
        store.close()

    assert outside.read_text() == "untouched\n", "a report was written through a planted symlink"
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert all(p.startswith("deep/reports/") or p in ("ev.sqlite", "ev.sqlite-wal", "ev.sqlite-shm", "outside.md")
               for p in written), written
    assert not (tmp_path / "escaped.md").exists() and not (tmp_path / "deep" / "escaped.md").exists()
    assert any("../../escaped" in w for w in result.warnings), result.warnings

    page = (out / "index.html").read_text()
    parsed = _Elements()
    parsed.feed(page)
    tags = {tag for tag, _ in parsed.tags}
    assert not tags & {"iframe", "object", "embed"}, tags
    svgs = [dict(attrs) for tag, attrs in parsed.tags if tag == "svg"]
    assert all(a.get("class") == "history-chart" or a.get("aria-hidden") == "true" for a in svgs), \
        "the only SVG is the report's own history charts and their legend"
    scripts = [tag for tag, _ in parsed.tags if tag == "script"]
    assert len(scripts) == 1 and page.count(f"<script>{PAGE_SCRIPT}</script>") == 1, "only the page's own script"
    handlers = [(tag, name) for tag, attrs in parsed.tags for name, _ in attrs if name.lower().startswith("on")]
    assert not handlers, handlers
    images = [dict(attrs).get("src", "") for tag, attrs in parsed.tags if tag == "img"]
    assert all(src.startswith("data:image/png;base64,") for src in images), images
    links = [dict(attrs).get("href", "") for tag, attrs in parsed.tags if tag == "a"]
    assert all(href.startswith("#") for href in links), links
    shown = "".join(parsed.text)
    assert SCRIPT in shown and IMG in shown, "hostile text was dropped instead of shown escaped"

    markdown = [p for p in out.rglob("*.md")]
    raw_tags = [p.name for p in markdown if re.search(r"<(script|img|svg)\b", p.read_text())]
    assert not raw_tags, f"raw HTML tags in markdown reports: {raw_tags}"
    report_table("safety: hostile claim text through build_reports",
                 table(("html tags", "event handlers", "non-data images", "markdown files", "with raw tags",
                        "files outside reports/", "id refused"),
                       [(len(parsed.tags), len(handlers), 0, len(markdown), len(raw_tags), 0, "../../escaped")]))
