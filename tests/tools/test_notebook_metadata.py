"""The committed notebooks' metadata is what JupyterLab would write, so they open unmodified.

JupyterLab writes the running kernel's ``kernelspec`` and ``language_info`` into a notebook when its kernel
starts; a stored display name that differs ("Python 3" against ipykernel's "Python 3 (ipykernel)") marked
every notebook modified on open. With widget state saved (the project's setting), restoring stored widget
models marks a notebook modified too. ``tools/notebook_metadata.py`` sets the kernel metadata and drops
the stored widget state; this checks both.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "notebook_metadata.py"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def tool(*args: str) -> subprocess.CompletedProcess:
    """Run the tool in its own process (it imports ipykernel, which changes how widgets' comms work here)."""
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def wanted() -> dict:
    pytest.importorskip("ipykernel")
    code = ("import json, runpy; "
            f"print(json.dumps(runpy.run_path({str(TOOL)!r}, run_name='notebook_metadata')['kernel_metadata']()))")
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                     timeout=120).stdout)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_committed_notebook_names_the_installed_kernel(path, wanted):
    metadata = json.loads(path.read_text())["metadata"]
    fix = "run: .venv/bin/python tools/notebook_metadata.py notebooks/*.ipynb"
    assert metadata["kernelspec"] == wanted["kernelspec"], fix
    assert wanted["kernelspec"]["display_name"] == "Python 3 (ipykernel)"  # ipykernel's name for python3
    assert metadata["language_info"]["name"] == "python"
    assert "widgets" not in metadata, fix


def test_the_tool_changes_only_the_kernel_metadata(tmp_path, wanted):
    source = ROOT / "notebooks" / "06_graph_view.ipynb"
    nb = json.loads(source.read_text())
    nb["metadata"]["kernelspec"]["display_name"] = "Python 3"
    nb["metadata"]["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                             "version_minor": 0}}
    copy = tmp_path / "copy.ipynb"
    copy.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    checked = tool("--check", str(copy))
    assert checked.returncode == 1 and "differs" in checked.stdout
    assert tool(str(copy)).returncode == 0 and tool("--check", str(copy)).returncode == 0
    fixed = json.loads(copy.read_text())
    assert fixed["metadata"]["kernelspec"] == wanted["kernelspec"]
    assert fixed["cells"] == nb["cells"]  # outputs (nbval compares them) and sources untouched
    assert "widgets" not in fixed["metadata"]
    assert set(fixed["metadata"]) == set(nb["metadata"]) - {"widgets"}
    nb["metadata"]["kernelspec"]["display_name"] = "Python 3"
    copy.write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    assert tool("--keep-widget-state", str(copy)).returncode == 0
    assert json.loads(copy.read_text())["metadata"]["widgets"] == nb["metadata"]["widgets"]
