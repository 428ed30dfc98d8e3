"""Runs every test here (python3 -m unittest, verbosely) and ends with a
line "python: N passed, N failed, N skipped"; exits non-zero on a failure."""

from __future__ import annotations

import os
import sys
import unittest

here = os.path.dirname(os.path.abspath(__file__))
suite = unittest.defaultTestLoader.discover(here, top_level_dir=here)
result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
skipped = len(result.skipped)
print(f"python: {result.testsRun - failed - skipped} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or result.testsRun == 0 else 0)
