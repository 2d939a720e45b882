"""The committed notebooks as a person first opens them: untrusted, not run. Every stored picture shows."""

from __future__ import annotations

import json
import shutil

import pytest
from browser_lab import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def stored_pictures(path) -> int:
    """How many pictures the notebook file stores: displays with an SVG (which untrusted JupyterLab hides, and
    shows their PNG instead) or a PNG, and the PNG images in widgets' Markdown summaries (what shows where
    widgets don't)."""
    nb = json.loads(path.read_text())
    outputs = [out.get("data", {}) for cell in nb["cells"] if cell["cell_type"] == "code" for out in cell.get("outputs", ())]
    svgs = sum("image/svg+xml" in data or "image/png" in data for data in outputs)
    widget_images = sum("".join(data.get("text/markdown", "")).count("](data:image/png;base64,") for data in outputs
                        if "application/vnd.jupyter.widget-view+json" in data)
    return svgs + widget_images


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_an_untrusted_notebook_shows_its_pictures(lab, browser, path):
    name = f"untrusted_{path.name}"
    shutil.copy(path, lab.root / name)  # never run, never trusted by this server
    page = browser.new_page()
    page.set_default_timeout(60_000)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(lab.notebook_url(name))
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output').length > 0")
    expected = stored_pictures(path)
    # every stored picture is shown, as its PNG (JupyterLab does not show SVG in an untrusted notebook, nor widgets)
    assert expected > 0, "a notebook the project ships shows pictures"
    page.wait_for_function(
        "(n) => document.querySelectorAll('.jp-OutputArea-output img').length >= n", arg=expected, timeout=60_000)
    images = page.locator(".jp-OutputArea-output img")
    assert images.count() == expected
    widths = images.evaluate_all("imgs => imgs.map(i => i.complete ? i.naturalWidth : -1)")
    assert all(w > 0 for w in widths), widths
    assert page.locator(".jp-RenderedSVG").count() == 0  # the untrusted SVG was not shown
    assert not errors, errors
    page.close()
