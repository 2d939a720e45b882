"""Browser tests: a real JupyterLab, driven in Debian's Chromium by the PyPI playwright package.

The tests start their own server (a free local port, a random token, Jupyter, IPython and XDG
directories in a temporary folder, a copy of the notebooks as its root) and stop it at the end.
Chromium is the system's (``/usr/bin/chromium``, or ``SYMLAB_CHROMIUM``); ``playwright install`` is
never run. ``make test`` runs these tests (``tests/browser``, apart from the parallel unit tests)
unless ``BROWSER=0``. This module holds the server, the page helpers and the fixtures; ``conftest.py``
makes the fixtures available to the tests here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The Jupyter settings the project ships (``make lab`` installs them into the venv).
SETTINGS = ROOT / "jupyter" / "settings"
CHROMIUM = os.environ.get("SYMLAB_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: its URL, token, root folder and the environment it was started with."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.root = base / "notebooks"
        self.port = _free_port()
        self.token = uuid.uuid4().hex
        self.url = f"http://127.0.0.1:{self.port}"
        env = dict(os.environ)
        for name, sub in [("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                          ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                          ("XDG_CONFIG_HOME", "xdg-config"), ("XDG_CACHE_HOME", "xdg-cache"),
                          ("XDG_DATA_HOME", "xdg-data"), ("HOME", "home")]:
            (base / sub).mkdir(parents=True, exist_ok=True)
            env[name] = str(base / sub)
        env["JUPYTER_PLATFORM_DIRS"] = "1"
        # the project's server configuration (jupyter/README.md: websockets without Nagle's delay)
        server_config = base / "config" / "jupyter_server_config.d"
        server_config.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "jupyter" / "jupyter_server_config.d" / "symlab.json", server_config / "symlab.json")
        env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
        self.env = env
        settings = base / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        log = (self.base / "lab.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root", "--ip", "127.0.0.1",
             "--port", str(self.port), f"--ServerApp.token={self.token}", "--ServerApp.password=",
             "--LabApp.expose_app_in_browser=True", "--JupyterNotebookApp.expose_app_in_browser=True", f"--ServerApp.root_dir={self.root}",
             f"--LabApp.user_settings_dir={self.base / 'settings'}",
             # the project's Jupyter defaults (jupyter/README.md: widget state saved with the notebook)
             f"--LabApp.app_settings_dir={SETTINGS}", f"--JupyterNotebookApp.app_settings_dir={SETTINGS}",
             f"--JupyterNotebookApp.user_settings_dir={self.base / 'settings'}",
             f"--LabApp.workspaces_dir={self.base / 'workspaces'}", "--LabApp.news_url=",
             "--ServerApp.disable_check_xsrf=True", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
            cwd=self.root, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab exited at start:\n{(self.base / 'lab.log').read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise RuntimeError(f"JupyterLab did not answer in 90 s:\n{(self.base / 'lab.log').read_text()[-3000:]}")

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"


def write_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook of code cells without outputs (so that every output the test sees is fresh)."""
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                   "source": source} for source in cells],
        "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1))
    return path


def stripped_copy(source: Path, target: Path) -> Path:
    """A copy of a committed notebook without its outputs."""
    nb = json.loads(source.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    nb.get("metadata", {}).pop("widgets", None)
    target.write_text(json.dumps(nb, indent=1))
    return target


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("lab")
    server = Lab(base)
    server.root.mkdir()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: `apt-get install chromium` (make test does it as "
                    "root), set SYMLAB_CHROMIUM, or run `make test BROWSER=0` to skip the browser tests")
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS,
            reduced_motion="reduce", viewport={"width": 1400, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()


class NotebookPage:
    """A notebook open in JupyterLab: run cells, run code "from another cell", wait for widgets."""

    def __init__(self, page: Any, lab: Lab) -> None:
        self.page = page
        self.lab = lab
        self.errors: list[str] = []
        page.on("pageerror", lambda err: self.errors.append(f"{err}\n{err.stack or ''}"))
        page.on("dialog", lambda dialog: (self.errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))

    def wait_for_kernel(self, timeout: float = 60_000) -> None:
        self.page.wait_for_function(
            """() => {
                const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
                const s = w && w.sessionContext && w.sessionContext.session;
                const k = s && s.kernel;
                return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
            }""",
            timeout=timeout,
        )

    def run_all(self, timeout: float = 120_000) -> None:
        self.page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        self.page.wait_for_function(
            """() => {
                const w = window.jupyterapp.shell.currentWidget;
                const cells = w.content.widgets.filter((c) => c.model.type === 'code');
                const k = w.sessionContext.session.kernel;
                return cells.length > 0 && cells.every((c) => c.model.executionCount !== null)
                    && k.status === 'idle';
            }""",
            timeout=timeout,
        )

    def execute(self, code: str) -> None:
        """Run ``code`` in the notebook's kernel as another cell would (IPython's post_run_cell fires)."""
        self.page.evaluate(
            """async (code) => {
                const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
                await k.requestExecute({ code, store_history: true }).done;
            }""",
            code,
        )

    def kernel_value(self, expression: str) -> str:
        """The ``text/plain`` of ``expression`` evaluated in the notebook's kernel (a silent request: no cell runs)."""
        reply = self.page.evaluate(
            """async (expression) => {
                const k = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
                const future = k.requestExecute({ code: '', silent: true, user_expressions: { value: expression } });
                const reply = await future.done;
                return reply.content.user_expressions.value;
            }""",
            expression,
        )
        if reply.get("status") != "ok":
            raise RuntimeError(f"{expression!r} failed in the kernel: {reply.get('ename')}: {reply.get('evalue')}")
        return reply["data"]["text/plain"]

    def outputs_text(self) -> str:
        return self.page.locator(".jp-OutputArea-output").all_inner_texts().__str__()


def open_notebook(browser: Any, lab: Lab, name: str) -> NotebookPage:
    page = browser.new_page()
    page.set_default_timeout(60_000)
    page.goto(lab.notebook_url(name))
    nb = NotebookPage(page, lab)
    page.wait_for_selector(".jp-NotebookPanel", timeout=90_000)
    nb.wait_for_kernel()
    return nb


def drawn(view: Any) -> int:
    """How many answers from Python a widget has drawn (its ``data-drawn``; -1 before the first)."""
    return int(view.get_attribute("data-drawn") or "-1")


def wait_drawn(nb: NotebookPage, view: Any, before: int) -> None:
    """Wait until ``view`` has drawn an answer after the ``before``-th (Python answered the last interaction)."""
    nb.page.wait_for_function("([el, b]) => Number(el.dataset.drawn) > b", arg=[view.element_handle(), before])
