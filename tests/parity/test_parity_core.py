"""The reference's core unit tests, ported by public names into ``core/ported``, stay what the porter writes.

The ported tests themselves run as ordinary tests (``core/ported``); this file checks the port: every file
restores to the reference's original and ports back to itself byte for byte, the list of left-out tests is
the porter's, and every recorded failure names a test that exists.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from port_core_tests import CORE, EXCLUDED, HEADER, MANIFEST, PORTS, XFAIL, check  # noqa: E402


def test_the_ports_are_what_the_porter_writes() -> None:
    assert check() == []


def test_every_port_keeps_the_reference_license_header() -> None:
    files = json.loads(MANIFEST.read_text(encoding="utf-8"))["files"]
    assert len(files) >= 70
    for rel in files:
        assert (PORTS / rel).read_text(encoding="utf-8").startswith(HEADER), rel


def test_every_recorded_failure_names_a_ported_test() -> None:
    reasons: dict[str, str] = json.loads(XFAIL.read_text(encoding="utf-8"))
    for nodeid, reason in reasons.items():
        rel, _, name = nodeid.partition("::")
        assert reason.strip(), nodeid
        text = (PORTS / rel).read_text(encoding="utf-8")
        function = name.split("::")[-1].split("[")[0]
        assert function == "<import>" or f"def {function}(" in text, nodeid


def test_left_out_tests_are_listed_with_a_reason() -> None:
    lines = [line for line in EXCLUDED.read_text(encoding="utf-8").splitlines() if line.startswith("- `")]
    assert lines and all("`: " in line and line.split("`: ", 1)[1].strip() for line in lines)
    assert (CORE / "conftest.py").exists()
