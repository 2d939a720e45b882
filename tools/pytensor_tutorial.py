"""Run PyTensor's tutorial with symlab and count what runs: examples using the library, run, excluded.

The tutorial is read at run time from a git snapshot of pymc-devs/pytensor (``doc/tutorial/*.rst``
at commit ``f857e6961``; nothing of it is stored here). Each example gets ``pytensor`` renamed to
``symlab`` and nothing else, and the examples of one page run in order in one namespace, as Sphinx's
doctests do, in a scratch directory; what each prints is compared with what the page shows
(whitespace, ``...``, number formatting and addresses aside: ``tutorial_runner.outputs_match``).

Every page runs twice: as written, and with the adaptations of ``tutorial_manifest.py`` (symlab's own
graph and message text where the page prints PyTensor's, 20 training steps instead of 10,000, the
page's own NumPy error fixed). Excluded examples (``tutorial_manifest.EXCLUDED``) are counted by
reason. Modules: ``tutorial_rst`` (reading the pages), ``tutorial_runner`` (running, comparing,
classifying), ``tutorial_manifest`` (exclusions and adaptations).

Usage (from the repository root)::

    .venv/bin/python tools/pytensor_tutorial.py [SNAPSHOT] [--mode NUMPY|NUMBA|...] [-v]

``SNAPSHOT`` is the snapshot's git directory (default: ``tutorial_rst.DEFAULT_SNAPSHOT``); ``-v``
prints, for each adapted example that still differs, what the page shows and what symlab printed.
The exit status is 1 when an example that is not excluded fails, or an excluded one runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tutorial_manifest import EXCLUDED, adapted_ids, overrides  # noqa: E402
from tutorial_rst import DEFAULT_SNAPSHOT, SnapshotMissing, read_pages  # noqa: E402
from tutorial_runner import Classified, classify_page  # noqa: E402


def run_pages(pages: dict[str, list[dict]], mode: str, adapted: bool) -> dict[str, Classified]:
    """Every example's classification, by id: pages run as written, or with the manifest's adaptations."""
    changes = overrides() if adapted else None
    return {item.example["id"]: item for examples in pages.values() for item in classify_page(examples, mode, changes)}


def report(pages: dict[str, list[dict]], mode: str = "NUMPY", verbose: bool = False) -> int:
    """Print one row per example using the library, then the counts; return the exit status."""
    as_written = run_pages(pages, mode, adapted=False)
    adapted = run_pages(pages, mode, adapted=True)
    changed = adapted_ids()
    library = [ident for ident, item in as_written.items() if item.uses_library and item.example["kind"] != "testsetup"]
    for ident in library:
        item, second = as_written[ident], adapted[ident]
        note = "excluded: " + EXCLUDED[ident] if ident in EXCLUDED else ""
        if ident in changed:
            note = f"adapted, {second.status}"
        print(f"{ident:24} {item.example['kind']:10} {item.status:36} {item.outcome.detail[:70]:70} {note}")
        if verbose and second.outcome.mismatches:
            for line, want, got in second.outcome.mismatches:
                print(f"    line {line}\n    want: {want!r}\n    got:  {got!r}")
    counted = [ident for ident, item in as_written.items() if item.example["kind"] != "testsetup"]
    runs = sum(as_written[i].status == "runs" for i in library)
    runs_adapted = sum(adapted[i].status == "runs" for i in library)
    print(f"\nexamples: {len(counted)}; using the library: {len(library)}")
    print(f"run as written (output as the page shows it): {runs}")
    print(f"run with the adaptations of tutorial_manifest.py (symlab's graph/message text, 20 training steps, "
          f"the page's own error fixed): {runs_adapted}")
    reasons: dict[str, int] = {}
    for ident in library:
        if ident in EXCLUDED:
            reasons[EXCLUDED[ident]] = reasons.get(EXCLUDED[ident], 0) + 1
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  excluded, {reason}: {count}")
    other = [i for i in library if i not in EXCLUDED and adapted[i].status != "runs"]
    print(f"  failing and not excluded: {len(other)} {other}")
    expected = [i for i in counted if i not in EXCLUDED]
    print(f"not excluded (using the library or not): {len(expected)} of {len(counted)}; "
          f"run: {sum(adapted[i].status == 'runs' for i in expected)}")
    unknown = sorted(set(EXCLUDED) - set(counted))
    now_running = [i for i in EXCLUDED if i in adapted and adapted[i].status == "runs"]
    if unknown:
        print(f"  EXCLUDED names examples that do not exist: {unknown}")
    if now_running:
        print(f"  excluded but running now (remove them from EXCLUDED): {now_running}")
    sys.stdout.flush()
    failed = [i for i in expected if adapted[i].status != "runs"]
    return 1 if failed or unknown or now_running else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("snapshot", nargs="?", default=DEFAULT_SNAPSHOT, help="git directory of the snapshot")
    parser.add_argument("--mode", default="NUMPY", help="the default mode the examples' functions get")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    try:
        pages = read_pages(args.snapshot)
    except SnapshotMissing as error:
        print(f"pytensor_tutorial: {error}", file=sys.stderr)
        return 2
    return report(pages, mode=args.mode, verbose=args.verbose)


if __name__ == "__main__":
    sys.exit(main())
