"""``junit.xml``: one test case per cell and check; failures and errors carry the numbers.

NO-GO / FAIL -> <failure>; undecided (INCONCLUSIVE, MISSING, FAILED cell, no baseline, error)
-> <error>; UNSUPPORTED and NO REFERENCE -> <skipped>; the rest pass. One test suite per GPU,
and ``mtp-eval.gate`` when something was not judged: an <error> when nothing was (exit 2).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from pipeline.report.assemble.build import Report
from pipeline.report.assemble.gate import NOTHING_JUDGED, judged
from pipeline.report.judge.check_numbers import numbers_json
from pipeline.report.judge.verdicts import FAILING, NO_REFERENCE, UNDECIDED, UNSUPPORTED, Check
from pipeline.report.write.section import sort_key

SKIPPED = (UNSUPPORTED, NO_REFERENCE)


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool | int | float | str):
        return str(value)
    return None


def _testcase(
    parent: ET.Element, check: Check, classname: str, report: Report, simulated: bool
) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        classname=classname,
        name=check.title(report.tolerance.baseline),
        time="0",
    )
    props = ET.SubElement(case, "properties")
    for key, value in {
        "verdict": check.verdict,
        "simulated": simulated,
        **numbers_json(check.numbers, check.adjusted),
    }.items():
        text = _scalar(value)
        if text is not None:
            ET.SubElement(props, "property", name=key, value=text)
    if check.verdict in FAILING:
        ET.SubElement(
            case, "failure", type=check.verdict, message=f"{check.verdict}: {check.message}"
        ).text = check.message
    elif check.verdict in UNDECIDED:
        ET.SubElement(
            case, "error", type=check.verdict, message=f"{check.verdict}: {check.message}"
        ).text = check.message
    elif check.verdict in SKIPPED:
        ET.SubElement(case, "skipped", message=f"{check.verdict}: {check.message}")
    else:
        ET.SubElement(case, "system-out").text = f"{check.verdict}: {check.message}"


def _gate(root: ET.Element, report: Report) -> None:
    """A ``mtp-eval.gate`` suite listing what was not judged: an error when nothing was."""
    found = report.not_judged
    if not found:
        return
    nothing = not judged(report.checks)
    counts = {"tests": "1", "failures": "0", "errors": str(int(nothing)),
              "skipped": str(int(not nothing))}  # fmt: skip
    suite = ET.SubElement(root, "testsuite", {"name": "mtp-eval.gate", **counts})
    case = ET.SubElement(suite, "testcase", classname="gate", name="what was not judged", time="0")
    if nothing:
        message = f"{NOTHING_JUDGED}: {found[0]}"
        ET.SubElement(case, "error", type="NOT JUDGED", message=message).text = "\n".join(found)
    else:
        ET.SubElement(case, "skipped", message=f"not judged: {'; '.join(found)}")


def render_junit(report: Report) -> bytes:
    """The JUnit XML document."""
    root = ET.Element(
        "testsuites", name="mtp-eval sign-off" + (" (SIMULATED)" if report.simulated else "")
    )
    cells = sorted(report.cells, key=sort_key)
    for gpu in dict.fromkeys(c.gpu for c in cells):
        suite = ET.SubElement(root, "testsuite", name=f"mtp-eval.{gpu}")
        checks = [(c, k) for c in cells if c.gpu == gpu for k in report.checks_of(c)]
        counts = {
            "tests": len(checks),
            "failures": sum(k.verdict in FAILING for _, k in checks),
            "errors": sum(k.verdict in UNDECIDED for _, k in checks),
            "skipped": sum(k.verdict in SKIPPED for _, k in checks),
        }
        for key, value in counts.items():
            suite.set(key, str(value))
        for cell, check in checks:
            _testcase(suite, check, cell.label, report, cell.simulated)
    _gate(root, report)
    for key in ("tests", "failures", "errors", "skipped"):
        root.set(key, str(sum(int(s.get(key, "0")) for s in root)))
    ET.indent(root)
    xml: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return xml
