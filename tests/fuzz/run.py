"""``make fuzz``: a property-based differential run of symlab, with its figures.

    python tests/fuzz/run.py [--graphs N] [--seed S] [--numba-graphs N] [--gradients N] ...

Defaults come from the environment: ``FUZZ_SEED`` (the seed, default ``campaign.DEFAULT_SEED``) and
``FUZZ_GRAPHS`` (graphs for the mode comparison, default 500); the other counts scale with the number
of graphs unless given. Prints, as it goes, one line per batch, then the figures (graphs tried per mode,
gradients checked, replace sequences, round trips, failures) and, for each distinct failure, its origin
and a minimal reproduction to paste into a test. Exits 1 if anything failed.

Numba compiles into a fresh temporary cache directory (``SYMLAB_CACHE_DIR``), unless one is set: the
times are those of a cold start, and the user's ``~/.cache/symlab`` is not filled with fuzz kernels.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=None, help="the seed (default: $FUZZ_SEED or the fixed default)")
    parser.add_argument("--graphs", type=int, default=int(os.environ.get("FUZZ_GRAPHS", 500)),
                        help="graphs compared in the modes without Numba (default: $FUZZ_GRAPHS or 500)")
    parser.add_argument("--numba-graphs", type=int, default=None, help="of which also with NUMBA and TIERED (default: 10%%, at least 50)")
    parser.add_argument("--debug-numba-graphs", type=int, default=None, help="of which also with DEBUG's per-node Numba check (default: 1%%)")
    parser.add_argument("--gradients", type=int, default=None, help="gradient checks (default: graphs / 5)")
    parser.add_argument("--edit-sequences", type=int, default=None, help="replace sequences (default: graphs / 12)")
    parser.add_argument("--round-trips", type=int, default=None, help="graphs through the formats (default: graphs / 12)")
    parser.add_argument("--random-graphs", type=int, default=None, help="graphs with random variables (default: graphs / 5)")
    parser.add_argument("--random-numba-graphs", type=int, default=None,
                        help="of which also with NUMBA and TIERED (default: 25)")
    parser.add_argument("--loop-graphs", type=int, default=None, help="graphs of scan loops (default: graphs / 5)")
    parser.add_argument("--loop-numba-graphs", type=int, default=None,
                        help="of which also with NUMBA and TIERED (default: 25)")
    parser.add_argument("--loop-gradients", type=int, default=None,
                        help="gradient checks through loops (default: graphs / 10)")
    parser.add_argument("--no-output-edits", action="store_true", help="no add_output/remove_output in the sequences")
    parser.add_argument("--shrink-budget", type=float, default=120.0, help="seconds to shrink each distinct failure")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    own_cache = "SYMLAB_CACHE_DIR" not in os.environ
    if own_cache:
        os.environ["SYMLAB_CACHE_DIR"] = tempfile.mkdtemp(prefix="symlab-fuzz-cache-")
    # tests/ holds the fuzz package; this file may be run as a script from anywhere.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from fuzz.campaign import (
        DEFAULT_SEED,
        Figures,
        Plan,
        run_edits,
        run_gradients,
        run_loop_gradients,
        run_loops,
        run_modes,
        run_random,
        run_round_trips,
    )

    seed = args.seed if args.seed is not None else int(os.environ.get("FUZZ_SEED", DEFAULT_SEED))
    n = args.graphs
    plan = Plan(
        seed=seed,
        graphs=n,
        numba_graphs=min(n, args.numba_graphs if args.numba_graphs is not None else max(50, n // 10)),
        debug_numba_graphs=args.debug_numba_graphs if args.debug_numba_graphs is not None else n // 100,
        gradients=args.gradients if args.gradients is not None else n // 5,
        edit_sequences=args.edit_sequences if args.edit_sequences is not None else n // 12,
        round_trip_graphs=args.round_trips if args.round_trips is not None else n // 12,
        random_graphs=args.random_graphs if args.random_graphs is not None else n // 5,
        random_numba_graphs=args.random_numba_graphs if args.random_numba_graphs is not None else 25,
        loop_graphs=args.loop_graphs if args.loop_graphs is not None else n // 5,
        loop_numba_graphs=args.loop_numba_graphs if args.loop_numba_graphs is not None else 25,
        loop_gradients=args.loop_gradients if args.loop_gradients is not None else n // 10,
        output_edits=not args.no_output_edits,
        shrink_budget=args.shrink_budget,
    )
    log = (lambda _: None) if args.quiet else (lambda line: print(line, flush=True))
    print(f"fuzz: seed {seed} (FUZZ_SEED), {plan.graphs} graphs (at least {plan.numba_graphs} with Numba, "
          f"{plan.debug_numba_graphs} with DEBUG's Numba check, in whole batches of {plan.batch_size}), {plan.gradients} gradients, "
          f"{plan.edit_sequences} replace sequences, {plan.round_trip_graphs} graphs through the formats, "
          f"{plan.random_graphs} graphs with random variables ({plan.random_numba_graphs} with Numba), "
          f"{plan.loop_graphs} graphs of loops ({plan.loop_numba_graphs} with Numba), {plan.loop_gradients} gradients "
          "through loops", flush=True)
    figures = Figures(seed)
    started = time.perf_counter()
    try:
        run_modes(plan, figures, log)
        run_gradients(plan, figures, log)
        run_edits(plan, figures, log)
        run_round_trips(plan, figures, log)
        run_random(plan, figures, log)
        run_loops(plan, figures, log)
        run_loop_gradients(plan, figures, log)
    finally:
        if own_cache:
            shutil.rmtree(os.environ["SYMLAB_CACHE_DIR"], ignore_errors=True)
    print()
    print(figures.text())
    print(f"total: {time.perf_counter() - started:.1f} s")
    for failure in figures.failures.values():
        print()
        print(failure)
    if figures.failures:
        print(f"\nFAILED (seed {seed}: rerun with FUZZ_SEED={seed})")
        return 1
    print("\nnothing wrong")
    return 0


if __name__ == "__main__":
    sys.exit(main())
