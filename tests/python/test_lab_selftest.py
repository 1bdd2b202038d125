"""The lab's own self-tests (lab/test_lab.py), collected here so scripts/test runs them: the
recording sink keeps OTLP bodies byte for byte over a real loopback socket, the committed labels
agree with the committed recordings, and no recording names the machine it was made on.

The lab's file stays runnable on its own (`python3 -m unittest lab/test_lab.py`); this module only
loads it under another name and exposes its TestCase classes to pytest.
"""

from __future__ import annotations

import importlib.util
import sys
import unittest
from pathlib import Path

LAB = Path(__file__).resolve().parents[2] / "lab"
sys.path.insert(0, str(LAB))
_spec = importlib.util.spec_from_file_location("lab_self_tests", LAB / "test_lab.py")
assert _spec is not None and _spec.loader is not None, f"{LAB / 'test_lab.py'} is missing"
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

for _name, _value in vars(_module).items():
    if isinstance(_value, type) and issubclass(_value, unittest.TestCase):
        globals()[_name] = _value
