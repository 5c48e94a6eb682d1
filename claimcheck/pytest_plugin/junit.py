"""The JUnit XML a CI system reads, made to say the final findings.

pytest writes each test case when the item finishes, but a claim's verdict can still change at the
end of the run (the family correction, the cascade, the expected verdicts). After pytest has written
the file, each claim's test case is rewritten from its final finding: properties ``verdict`` (final),
``raw_verdict``, ``expected`` and the estimate, interval and n; then the element the policy names:
``<failure>`` only where the finding fails the run, ``<error>`` for a probe that failed, and
``<skipped message="inconclusive: …">`` for an item that is not decided (so dashboards do not show
it green). The full result record lives in the evidence store, not in the XML, which keeps the file small.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

from claimcheck.outcome import Finding

RECORD_PROPERTY = "claimcheck"
#: Properties the rewrite owns: whatever pytest wrote under these names is replaced.
OWNED = frozenset({RECORD_PROPERTY, "verdict", "raw_verdict", "expected", "agreement", "estimate", "low", "high",
                   "n"})
OUTCOME_TAGS = ("failure", "error", "skipped")


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


def _skip_message(finding: Finding) -> str:
    word = finding.treatment.word.lower()
    return f"{word}: {finding.result.reason}"


def _rewrite(case: ET.Element, finding: Finding, lock: Path | None) -> None:
    properties = _properties(case)
    for prop in list(properties):
        if prop.get("name") in OWNED:
            properties.remove(prop)
    for name, shown in finding.properties():
        ET.SubElement(properties, "property", name=name, value=shown)
    kept = {child.tag: child for child in case if child.tag in OUTCOME_TAGS}
    for child in list(case):
        if child.tag in OUTCOME_TAGS:
            case.remove(child)
    element = finding.treatment.junit
    if element == "passed":
        return
    if element == "skipped":
        message = kept["skipped"].get("message", "") if "skipped" in kept and finding.treatment.skips else \
            _skip_message(finding)
        ET.SubElement(case, "skipped", type="claimcheck." + finding.treatment.category.replace(" ", "-"),
                      message=message[:500])
        return
    text = finding.message(lock)
    made = ET.SubElement(case, element, message=text.splitlines()[0][:500] if text else "")
    made.text = text


def finalize(path: Path, findings: Mapping[str, Finding], lock: Path | None = None) -> int:
    """Rewrite the claim test cases of the JUnit file at ``path`` from ``findings`` (by node id).

    Returns:
        How many test cases were rewritten.
    """
    tree = ET.parse(path)
    by_key = {case_key(nodeid): nodeid for nodeid in findings}
    rewritten = 0
    for suite in tree.getroot().iter("testsuite"):
        for case in suite.iter("testcase"):
            nodeid = by_key.get((case.get("classname", ""), case.get("name", "")))
            if nodeid is not None:
                _rewrite(case, findings[nodeid], lock)
                rewritten += 1
        cases = list(suite.iter("testcase"))
        for tag, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
            suite.set(attribute, str(sum(1 for case in cases for child in case if child.tag == tag)))
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return rewritten
