"""The fixtures of the browser tests (``lab``: a JupyterLab server; ``browser``: Chromium), from browser_lab.

Every test here carries the ``browser`` marker. ``make test`` runs them on their own (``make browser``),
not among the parallel unit tests.
"""

from pathlib import Path

import pytest
from browser_lab import browser, lab

__all__ = ["browser", "lab"]

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items):
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.browser)
