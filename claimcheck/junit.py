"""The JUnit XML a CI system reads, made to say the final verdicts.

pytest writes each test case when the item finishes, but a claim's verdict can
still change at the end of the run (the family correction, the cascade, the
expected verdicts). After pytest has written the file, each claim's test case
is rewritten from its final result: properties ``verdict`` (final) and
``raw_verdict`` with the estimate, interval and n; a ``<failure>`` only where the
final verdict fails the run. The full result record lives in the evidence store,
not in the XML, which keeps the file small.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from claimcheck.result import ItemResult

RECORD_PROPERTY = "claimcheck"


def case_key(nodeid: str) -> tuple[str, str]:
    """``(classname, name)`` of a node id, as pytest's junitxml plugin names test cases."""
    names = nodeid.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    return ".".join(names[:-1]), names[-1]


def _properties(case: ET.Element) -> ET.Element:
    found = case.find("properties")
    if found is None:
        found = ET.SubElement(case, "properties")
        case.remove(found)
        case.insert(0, found)
    return found


def _number(value: float) -> str | None:
    return None if not math.isfinite(value) else f"{value:.6g}"


def _rewrite(case: ET.Element, result: ItemResult, failing: bool, message: str) -> None:
    properties = _properties(case)
    for prop in list(properties):
        if prop.get("name") in (RECORD_PROPERTY, "verdict", "raw_verdict", "estimate", "low", "high", "n"):
            properties.remove(prop)
    values: dict[str, str] = {"verdict": result.verdict.value, "raw_verdict": result.raw_verdict.value}
    if result.decision is not None:
        for name, value in (("estimate", result.decision.statistic), ("low", result.decision.low),
                            ("high", result.decision.high)):
            text = _number(value)
            if text is not None:
                values[name] = text
        values["n"] = str(result.decision.n)
    for name, shown in values.items():
        ET.SubElement(properties, "property", name=name, value=shown)
    failures = [child for child in case if child.tag in ("failure", "error")]
    if failing and not failures:
        failure = ET.SubElement(case, "failure", message=message[:500])
        failure.text = message
    elif not failing:
        for child in failures:
            if child.tag == "failure":
                case.remove(child)


def finalize(path: Path, results: Mapping[str, ItemResult], failing: Mapping[str, bool],
             messages: Mapping[str, str]) -> int:
    """Rewrite the claim test cases of the JUnit file at ``path``; returns how many were rewritten.

    Args:
        results: final result by node id.
        failing: whether each node's final verdict fails the run.
        messages: the failure text of each failing node.
    """
    tree = ET.parse(path)
    by_key = {case_key(nodeid): nodeid for nodeid in results}
    rewritten = 0
    for suite in tree.getroot().iter("testsuite"):
        failures = 0
        for case in suite.iter("testcase"):
            nodeid = by_key.get((case.get("classname", ""), case.get("name", "")))
            if nodeid is not None:
                _rewrite(case, results[nodeid], failing.get(nodeid, False), messages.get(nodeid, ""))
                rewritten += 1
            failures += sum(1 for child in case if child.tag == "failure")
        suite.set("failures", str(failures))
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return rewritten
