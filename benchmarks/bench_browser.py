"""How fast the views answer in the browser (issue 30): JupyterLab in Chromium, from the action to the painted picture.

Run alone: ``.venv/bin/python benchmarks/bench_browser.py [--quick]`` (it saves its rows as
``benchmarks/results/<date>-<host>-browser.json``); ``make bench`` runs it after the in-process views' benchmarks
and saves its rows under ``browser`` in its JSON (``--no-browser`` skips it). Without Chromium (``/usr/bin/chromium``
or ``SYMLAB_CHROMIUM``), Playwright or JupyterLab it says so and measures nothing.

It starts the JupyterLab server of the browser tests (``tests/browser/browser_lab.py``), opens one notebook in the
system's Chromium (reduced motion, a 1400x1000 window) and measures, on the teaching graphs (``a + a ** 10`` and
micrograd's neuron ``tanh(x1*w1 + x2*w2 + b)``), the MLP gradient of ``tests/real_size.py`` (raw: ``symlab.view``
of its outputs, 93 nodes; compiled: ``symlab.view(f)``, 44 nodes; its 83 rewrite steps: ``symlab.view(f.trace)``)
and the 1,000-node ``layered_graph(1000)`` (its view, and its rewrite steps with attempts recorded):

- **first display**: the cell that makes the view is run (``notebook:run-cell``) until its picture is painted (the
  new widget's ``svg g.node`` is in the page, then two animation frames); the first run of each cell is reported
  apart (``cold``: the widget's script loads), the figure is the median of the re-runs;
- **click**: a node of a graph view clicked with the mouse (``pointerdown``) until the answer is painted (the view's
  ``data-drawn`` changes, then two animation frames), over distinct nodes; ``answer``, beside it, is the median
  time until ``data-drawn`` changed (Python answered and the browser updated the page, before painting);
- **step**: the stepper's next step by the arrow key (``keydown``) until painted, the same way;
- **export**: ``RewriteStepper(mlp_function()).export_html(path)`` of the MLP's steps, in this process: its time
  and the page's size;
- **grad stepper** (issue 35): ``GradStepper`` on the MLP loss at the issue's real size (``bench_views.mlp_loss``:
  784-256-128-10, tanh, softmax, mean negative log-likelihood, batch 32, with values): its first display, and its
  next-step button clicked (``pointerdown``) until the answer is painted, over its steps from the first (every
  one, at most 30; 10 with ``--quick``): the median and the slowest.

Targets (issue 30; the grad stepper's are the MLP's, issue 35 asks a step under 100 ms): click < 50 ms; step
< 100 ms (teaching graphs and MLP) and < 150 ms (1,000 nodes); first display < 0.5 s (teaching graphs and MLP)
and < 1.5 s (1,000 nodes); export < 3 s and < 2 MB. The compiled MLP is compiled with ``mode="NUMPY"`` (the same
rewrites and trace as the default, without a Numba compile in the background of the kernel while it is measured).
Each row holds the median, the largest sample and the count.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
for _path in (ROOT, ROOT / "tests", ROOT / "tests" / "browser"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))


class BrowserUnavailable(RuntimeError):
    """What the browser benchmarks need is missing (Chromium, Playwright or JupyterLab): nothing was measured."""


SETUP = f"""\
import sys
sys.path.insert(0, {str(ROOT / "tests")!r})
import real_size
import symlab
import symlab.tensor as T
from symlab.notebook import RewriteStepper
from symlab.rewriting import rewrite_graph

a = T.dvector("a")
teaching = a + a ** 10
x1, x2, w1, w2, b = (T.dscalar(name) for name in ("x1", "x2", "w1", "w2", "b"))
neuron = T.tanh(x1 * w1 + x2 * w2 + b)
neuron.name = "o"
mlp_inputs, mlp_outputs = real_size.mlp_gradient()
f = real_size.mlp_function(mode="NUMPY")
big_inputs, big_outputs = real_size.layered_graph(1000)
_, big_trace = rewrite_graph(big_outputs, record_attempts=True)
sys.path.insert(0, {str(HERE)!r})
from bench_views import mlp_loss
from symlab.notebook import GradStepper

loss, loss_values, loss_wrt = mlp_loss()
"""

#: (row name, graph size class, kind, the cell's code): size class picks the targets; kind what is measured.
CASES = [
    ("a + a ** 10: graph view", "teaching", "view", "symlab.view(teaching)"),
    ("a + a ** 10: stepper", "teaching", "stepper", "RewriteStepper(teaching)"),
    ("neuron: graph view", "teaching", "view", "symlab.view(neuron)"),
    ("neuron: stepper", "teaching", "stepper", "RewriteStepper(neuron)"),
    ("MLP gradient (raw, 93 nodes): graph view", "mlp", "view", "symlab.view(mlp_outputs)"),
    ("MLP gradient (compiled, 44 nodes): graph view", "mlp", "view", "symlab.view(f)"),
    ("MLP gradient: stepper, symlab.view(f.trace)", "mlp", "stepper", "symlab.view(f.trace)"),
    ("1,000 nodes: graph view", "big", "view", "symlab.view(big_outputs)"),
    ("1,000 nodes: stepper", "big", "stepper", "RewriteStepper(big_trace)"),
]

#: The grad stepper's cases (issue 35), after :data:`CASES` in the notebook: (row name, size class, the cell's code).
GRAD_CASES = [
    ("MLP loss 784-256-128-10: grad stepper", "mlp", "GradStepper(loss, loss_wrt, values=loss_values)"),
]

#: The grad stepper's next-step button.
GRAD_NEXT = "button.sl-gw-next"

#: Targets in seconds, by size class.
FIRST_DISPLAY = {"teaching": 0.5, "mlp": 0.5, "big": 1.5}
STEP = {"teaching": 0.1, "mlp": 0.1, "big": 0.15}
CLICK = 0.05
EXPORT_SECONDS, EXPORT_BYTES = 3.0, 2_000_000

#: Arms the page: the next pointerdown or keydown starts the clock, the next change of the widget's data-drawn
#: stops it two animation frames later (the frame that shows the answer has been painted).
ARM_JS = """([root]) => {
    window.__t0 = null;
    window.__ta = null;
    window.__t1 = null;
    const before = root.dataset.drawn;
    const start = () => {
        if (window.__t0 === null) window.__t0 = performance.now();
        window.removeEventListener("pointerdown", start, true);
        window.removeEventListener("keydown", start, true);
    };
    window.addEventListener("pointerdown", start, true);
    window.addEventListener("keydown", start, true);
    const watch = new MutationObserver(() => {
        if (root.dataset.drawn === before) return;
        window.__ta = performance.now();
        watch.disconnect();
        requestAnimationFrame(() => requestAnimationFrame(() => { window.__t1 = performance.now(); }));
    });
    watch.observe(root, {attributes: true, attributeFilter: ["data-drawn"]});
}"""

#: Runs cell ``index`` and resolves with the milliseconds until a new view in its output has painted its picture.
RUN_CELL_JS = """async ([index]) => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cell = panel.content.widgets[index];
    cell.node.scrollIntoView({block: "start"});
    for (const view of cell.node.querySelectorAll(".sl-view")) view.dataset.stale = "1";
    panel.content.activeCellIndex = index;
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    const ready = () => {
        const view = cell.node.querySelector(".sl-view:not([data-stale])");
        return Boolean(view && view.querySelector("svg g.node"));
    };
    const start = performance.now();
    const painted = new Promise((resolve, reject) => {
        setTimeout(() => reject(new Error(`cell ${index}: no picture painted within 120 s`)), 120000);
        const finish = () => requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - start)));
        const watch = new MutationObserver(() => {
            if (!ready()) return;
            watch.disconnect();
            finish();
        });
        watch.observe(cell.node, {subtree: true, childList: true, attributes: true});
    });
    await window.jupyterapp.commands.execute("notebook:run-cell");
    return await painted;
}"""

#: Runs the first cell (the set-up) and waits for its end.
RUN_SETUP_JS = """async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    panel.content.activeCellIndex = 0;
    await window.jupyterapp.commands.execute("notebook:run-cell");
}"""

#: The keys of up to ``n`` clickable nodes (not folded groups) in the part of the picture on screen.
CLICKABLE_JS = """([root, n]) => {
    const picture = root.querySelector(".sl-picture");
    const r = picture.getBoundingClientRect();
    const keys = [];
    for (const g of picture.querySelectorAll("svg g.node[data-key]")) {
        if (g.classList.contains("group")) continue;
        const b = g.getBoundingClientRect();
        const cx = b.left + b.width / 2, cy = b.top + b.height / 2;
        if (b.width > 4 && cx > r.left + 4 && cx < r.right - 20 && cy > r.top + 4 && cy < r.bottom - 20) keys.push(g.dataset.key);
    }
    return keys.slice(0, n);
}"""


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


class Session:
    """A JupyterLab server of the browser tests, Chromium, and the benchmark's notebook open in it."""

    def __init__(self, base: Path) -> None:
        from browser_lab import CHROMIUM

        if not Path(CHROMIUM).exists():
            raise BrowserUnavailable(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium, or set "
                                     "SYMLAB_CHROMIUM)")
        self.base = base
        self.lab = None
        self.playwright = None
        self.context = None

    def __enter__(self) -> Session:
        from browser_lab import CHROMIUM, CHROMIUM_FLAGS, Lab
        from playwright.sync_api import sync_playwright

        self.lab = Lab(self.base)
        self.lab.root.mkdir()
        self.lab.start()
        self.playwright = sync_playwright().start()
        self.context = self.playwright.chromium.launch_persistent_context(
            str(self.base / "chromium-profile"), executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS,
            reduced_motion="reduce", viewport={"width": 1400, "height": 1000},
        )
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.context is not None:
            self.context.close()
        if self.playwright is not None:
            self.playwright.stop()
        if self.lab is not None:
            self.lab.stop()

    def open(self, cells: list[str]) -> Any:
        from browser_lab import open_notebook, write_notebook

        write_notebook(self.lab.root / "bench.ipynb", cells)
        return open_notebook(self.context, self.lab, "bench.ipynb")


def _wait_idle(nb: Any) -> None:
    nb.page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status "
                              "=== 'idle'")


def _timed(nb: Any, root: Any, act: Any, answers: list[float] | None = None) -> float:
    """Seconds from the action's pointerdown or keydown to the painted answer of the widget ``root``; the time to
    the answer itself (``data-drawn`` changed: Python answered and the browser drew the DOM) goes to ``answers``."""
    nb.page.evaluate(ARM_JS, [root.element_handle()])
    act()
    nb.page.wait_for_function("() => window.__t1 !== null && window.__t0 !== null", timeout=60_000)
    painted, answered = nb.page.evaluate("() => [window.__t1 - window.__t0, window.__ta - window.__t0]")
    if answers is not None:
        answers.append(answered / 1e3)
    return painted / 1e3


def _view_of(nb: Any, index: int) -> Any:
    return nb.page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".sl-view").first


def first_display(nb: Any, index: int, reps: int) -> tuple[float, list[float]]:
    """The first run of cell ``index`` (cold) and ``reps`` re-runs, each until its picture is painted; seconds."""
    times = []
    for _ in range(reps + 1):
        _wait_idle(nb)
        times.append(nb.page.evaluate(RUN_CELL_JS, [index]) / 1e3)
    _wait_idle(nb)
    return times[0], times[1:]


def clicks(nb: Any, view: Any, count: int, answers: list[float]) -> list[float]:
    """Click ``count`` distinct nodes of the graph view (the clickable ones on screen, in turn)."""
    view.scroll_into_view_if_needed()
    keys = nb.page.evaluate(CLICKABLE_JS, [view.element_handle(), count])
    if not keys:
        raise RuntimeError("no clickable node on screen")
    times = []
    for k in range(count):
        node = view.locator(f'.sl-picture svg g.node[data-key="{keys[k % len(keys)]}"]').first
        if node.count() == 0:  # a selection may redraw the picture without that node (focus): take another
            keys = nb.page.evaluate(CLICKABLE_JS, [view.element_handle(), count]) or keys
            node = view.locator(f'.sl-picture svg g.node[data-key="{keys[k % len(keys)]}"]').first
        times.append(_timed(nb, view, lambda node=node: node.click(), answers))
    return times


def steps(nb: Any, stepper: Any, count: int, answers: list[float]) -> tuple[list[float], int]:
    """``count`` steps with the arrow keys from step 0 (back and forth over a short trace); seconds, and the total."""
    stepper.scroll_into_view_if_needed()
    stepper.focus()
    if stepper.get_attribute("data-step") != "0":
        _timed(nb, stepper, lambda: nb.page.keyboard.press("Home"))
    total = int(nb.page.evaluate("(el) => el.querySelector('.sl-position').textContent.split('/').pop()",
                                 stepper.element_handle()))
    times, step, direction = [], 0, 1
    for _ in range(count):
        if not 0 <= step + direction <= total:
            direction = -direction
        key = "ArrowRight" if direction > 0 else "ArrowLeft"
        times.append(_timed(nb, stepper, lambda key=key: nb.page.keyboard.press(key), answers))
        step += direction
    return times, total


def grad_steps(nb: Any, stepper: Any, count: int, answers: list[float]) -> tuple[list[float], int]:
    """Click the grad stepper's next-step button ``count`` times from step 0 (at most to its last step); seconds,
    and the number of steps."""
    stepper.scroll_into_view_if_needed()
    total = int(nb.page.evaluate("(el) => el.querySelector('.sl-position').textContent.split('/').pop()",
                                 stepper.element_handle()))
    if stepper.get_attribute("data-step") != "0":
        stepper.focus()
        _timed(nb, stepper, lambda: nb.page.keyboard.press("Home"))
    button = stepper.locator(GRAD_NEXT).first
    times = [_timed(nb, stepper, button.click, answers) for _ in range(min(count, total))]
    return times, total


def export_figures(reps: int) -> tuple[list[float], int]:
    """Export the MLP's steps ``reps`` times; the seconds of each and the page's size in bytes."""
    import real_size

    from symlab.notebook.stepper import RewriteStepper

    times, size = [], 0
    with tempfile.TemporaryDirectory(prefix="symlab-export-") as directory:
        for k in range(reps):
            stepper = RewriteStepper(real_size.mlp_function(mode="NUMPY"))
            path = Path(directory) / f"mlp_steps_{k}.html"
            started = time.perf_counter()
            stepper.export_html(path)
            times.append(time.perf_counter() - started)
            size = path.stat().st_size
            stepper.close()
    return times, size


def _row(name: str, samples: list[float], limit: float | None, **more: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"name": name, "seconds": _median(samples), "max": max(samples) if samples else None,
                           "count": len(samples), **more}
    if limit is not None:
        row["limit"] = limit
        row["status"] = "PASS" if row["seconds"] is not None and row["seconds"] < limit else "FAIL"
    return row


def measure(quick: bool = False, log: Any = None) -> list[dict[str, Any]]:
    """Every row of the browser benchmarks; raises :class:`BrowserUnavailable` when it cannot run."""
    log = log or (lambda text: print(text, file=sys.stderr, flush=True))
    try:
        import jupyterlab  # noqa: F401
        import playwright  # noqa: F401
    except ImportError as err:
        raise BrowserUnavailable(f"{err.name} is not installed (pip install -e '.[dev]')") from None
    display_reps, click_count = (2, 5) if quick else (5, 20)
    step_counts = {"teaching": 6 if quick else 12, "mlp": 20 if quick else 83, "big": 15 if quick else 60}
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="symlab-bench-browser-") as directory, Session(Path(directory)) as session:
        nb = session.open([SETUP] + [code for _, _, _, code in CASES] + [code for _, _, code in GRAD_CASES])
        _wait_idle(nb)
        nb.page.evaluate(RUN_SETUP_JS)  # the setup cell only: each view's first run below is its first display
        _wait_idle(nb)
        for index, (name, size, kind, _) in enumerate(CASES, start=1):
            cold, warm = first_display(nb, index, display_reps)
            rows.append(_row(f"{name}: first display", warm, FIRST_DISPLAY[size], cold=cold))
            log(f"{name}: first display {_ms(rows[-1]['seconds'])} (cold {_ms(cold)})")
            view = _view_of(nb, index)
            answers: list[float] = []
            if kind == "view":
                times = clicks(nb, view, click_count, answers)
                rows.append(_row(f"{name}: click to paint", times, CLICK, answer=_median(answers)))
            else:
                times, total = steps(nb, view, step_counts[size], answers)
                what = f"{len(times)} steps of {total}" if len(times) <= total else f"{len(times)} moves over {total} steps"
                rows.append(_row(f"{name}: step to paint ({what})", times, STEP[size], answer=_median(answers)))
            log(f"{name}: {rows[-1]['name'].split(': ')[-1]} {_ms(rows[-1]['seconds'])} (max {_ms(rows[-1]['max'])})")
        for index, (name, size, _) in enumerate(GRAD_CASES, start=len(CASES) + 1):
            cold, warm = first_display(nb, index, display_reps)
            rows.append(_row(f"{name}: first display", warm, FIRST_DISPLAY[size], cold=cold))
            log(f"{name}: first display {_ms(rows[-1]['seconds'])} (cold {_ms(cold)})")
            answers = []
            times, total = grad_steps(nb, _view_of(nb, index), 10 if quick else 30, answers)
            rows.append(_row(f"{name}: next step to paint ({len(times)} steps of {total})", times, STEP[size],
                             answer=_median(answers)))
            log(f"{name}: next step {_ms(rows[-1]['seconds'])} (max {_ms(rows[-1]['max'])})")
        if nb.errors:
            raise RuntimeError(f"the page reported errors: {nb.errors[:3]}")
    times, size = export_figures(1 if quick else 3)
    rows.append(_row("MLP's 83 steps: export_html", times, EXPORT_SECONDS))
    rows.append({"name": "MLP's 83 steps: exported page size", "bytes": size, "limit_bytes": EXPORT_BYTES,
                 "status": "PASS" if size < EXPORT_BYTES else "FAIL"})
    log(f"export: {times} s, {size} bytes")
    return rows


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.0f} ms"


def report(rows: list[dict[str, Any]]) -> str:
    """The rows as a table: median, largest sample, count, target, PASS/FAIL."""
    lines = ["Views in the browser (JupyterLab in Chromium, action to painted; median, max of n)"]
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        if "bytes" in r:
            figure = f"{r['bytes'] / 1e6:9.2f} MB"
            target = f"  target < {r['limit_bytes'] / 1e6:g} MB  {r['status']}"
            lines.append(f"  {r['name']:<{width}}  {figure}{target}")
            continue
        figure = f"{r['seconds'] * 1e3:9.0f} ms  max {r['max'] * 1e3:6.0f} ms  n={r['count']:<3}"
        if "cold" in r:
            figure += f"  cold {r['cold'] * 1e3:5.0f} ms"
        if r.get("answer") is not None:
            figure += f"  answer {r['answer'] * 1e3:4.0f} ms"
        target = f"  target < {r['limit'] * 1e3:g} ms  {r['status']}" if "limit" in r else ""
        lines.append(f"  {r['name']:<{width}}  {figure}{target}")
    return "\n".join(lines)


def metadata(quick: bool) -> dict[str, Any]:
    from browser_lab import CHROMIUM

    def version(command: list[str]) -> str | None:
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=30)
            return (done.stdout or done.stderr).strip() or None
        except (OSError, subprocess.SubprocessError):
            return None

    import importlib.metadata as md

    versions = {}
    for package in ("jupyterlab", "anywidget", "ipywidgets", "playwright"):
        try:
            versions[package] = md.version(package)
        except md.PackageNotFoundError:
            versions[package] = None
    versions["chromium"] = version([CHROMIUM, "--version"])
    versions["graphviz"] = version(["dot", "-V"]) or None
    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "python": platform.python_version(),
        "quick": quick,
        "versions": versions,
        "git_commit": version(["git", "-C", str(ROOT), "rev-parse", "HEAD"]),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, clicks and steps")
    parser.add_argument("--results-dir", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    try:
        rows = measure(args.quick)
    except BrowserUnavailable as err:
        print(f"browser benchmarks skipped: {err}")
        return 0
    print(report(rows))
    meta = metadata(args.quick)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{meta['date'][:10]}-{meta['host'] or 'host'}-browser"
    path, k = args.results_dir / f"{stem}.json", 2
    while path.exists():
        path, k = args.results_dir / f"{stem}-{k}.json", k + 1
    path.write_text(json.dumps({"meta": meta, "browser": rows}, indent=1) + "\n")
    print(f"\nsaved {path}")
    return 0 if all(r.get("status", "PASS") == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
