"""``symlab.function``: compile a graph into a Python callable.

Compiling clones the user's graph (it is never modified), substitutes the
``givens``, collects the shared variables as implicit inputs, builds a
:class:`~symlab.graph.fg.FunctionGraph` (with a destroy handler protecting
every input not marked ``mutable``), rewrites it with the mode's query
(``f.trace`` records every step) and hands it to the mode's linker. Seed 000:

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> v = st.vector()
>>> f = symlab.function([v], (v + 1).sum())
>>> f.dprint()
Sum{acc_dtype=float64} [id A] ''   1
 |Elemwise{add,no_inplace} [id B] ''   0
   |<TensorType(float64, (?,))> [id C]
   |TensorConstant{(1,) of 1} [id D]
>>> topo = f.maker.fgraph.toposort()
>>> topo[0].outputs[0].clients
[(Sum{acc_dtype=float64}(Elemwise{add,no_inplace}.0), 0)]
>>> topo[1].outputs[0].clients
[('output', 0)]
>>> float(f([1.0, 2.0]))
5.0

Each value passes through its input's ``Type.filter``; a refused value
raises a ``TypeError`` naming the input's position and name, the expected
type and what was received:

>>> x = st.ivector("x")
>>> g = symlab.function([x], x * 2)
>>> g([1.5])
Traceback (most recent call last):
...
TypeError: function: bad value for input 0 ('x'): expected TensorType(int32, (?,)), received a Python list (dtype float64, ndim 1 and shape (1,)): TensorType(int32, (?,)) cannot store [1.5] accurately (of dtype float64): it would become [1]; convert it to int32 or pass allow_downcast=True
"""

from __future__ import annotations

import itertools
import threading
import warnings
import weakref
from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import Any

import numpy as np

from symlab.compile.function_arguments import (
    default_updates,
    input_downcast,
    pairs,
    read_givens,
    read_inputs,
    read_outputs,
    read_updates,
    refuse_inplace,
)
from symlab.compile.io import In
from symlab.compile.modes import Mode, get_mode
from symlab.compile.profiling import ProfileStats
from symlab.compile.threads import ThreadPlan
from symlab.config import check_threads
from symlab.graph.basic import Constant, MissingInputError, Variable
from symlab.graph.destroyhandler import DestroyHandler
from symlab.graph.display import Displayable, print_text, register_graph_holder
from symlab.graph.fg import FunctionGraph
from symlab.graph.gc_pause import gc_paused
from symlab.graph.sharedvalue import SharedVariable, describe_value
from symlab.graph.traversal import ancestors, clone_replace, graph_inputs
from symlab.tensor.type import TensorType

_MISSING = object()


class UnusedInputError(ValueError):
    """An input of ``symlab.function`` is not needed to compute the outputs or updates."""


class FunctionMaker:
    """Everything compilation produced: ``inputs``, ``outputs``, ``fgraph``, ``trace``, ``mode``, ``linker``."""

    def __init__(
        self,
        inputs: Sequence[Variable | In],
        outputs: Any,
        mode: str | Mode | None = None,
        updates: Any = None,
        givens: Any = None,
        name: str | None = None,
        on_unused_input: str = "raise",
        allow_input_downcast: bool | None = None,
        profile: bool | ProfileStats = False,
        accept_inplace: bool = False,
        no_default_updates: bool | Sequence[SharedVariable] = False,
        threads: int | str | None = None,
    ) -> None:
        started = perf_counter()
        if name is not None and not isinstance(name, str):
            raise TypeError(f"function: name must be a str or None, received {type(name).__name__} {name!r:.60}")
        self.name = name
        where = f"function {name!r}" if name else "function"
        self.where = where
        #: The function's own thread setting (``"auto"`` or a count), or None: ``symlab.config.threads`` at each call.
        self.threads = None if threads is None else check_threads(threads, f"{where}: threads")
        if on_unused_input not in ("raise", "warn", "ignore"):
            raise ValueError(f"{where}: on_unused_input must be 'raise', 'warn' or 'ignore', received {on_unused_input!r}")
        self.mode = get_mode(mode)
        self.allow_input_downcast = allow_input_downcast
        self.inputs = read_inputs(inputs, where, allow_input_downcast)
        self.output_kind, self.output_keys, self.outputs = read_outputs(outputs, where)
        update_pairs = read_updates(updates, where)
        given_pairs = read_givens(givens, where)

        # -- the graph: givens substituted (on a copy), leaves checked -------------------------
        targets = [o.variable for o in self.outputs] + [u for _, u in update_pairs]
        if given_pairs and targets:
            targets = clone_replace(targets, given_pairs)
        # The default updates of the shared variables the graph uses (a RandomStream's generators), unless
        # updated explicitly or excluded; an update's own graph may use more shared variables, so this repeats.
        for target, expr in default_updates(targets, update_pairs, no_default_updates, where):
            update_pairs.append((target, expr))
            targets.append(clone_replace([expr], given_pairs)[0] if given_pairs else expr)
        explicit = [i.variable for i in self.inputs]
        explicit_set = set(explicit)
        shared: dict[SharedVariable, None] = {}
        for k, target in enumerate(targets):
            for leaf in graph_inputs([target]):
                if isinstance(leaf, Constant) or leaf in explicit_set:
                    continue
                if isinstance(leaf, SharedVariable):
                    shared[leaf] = None
                    continue
                what = f"output {k}" if k < len(self.outputs) else f"the update of {update_pairs[k - len(self.outputs)][0]}"
                raise MissingInputError(
                    f"{where}: {what} needs {leaf} ({leaf.type}), which is not among the inputs "
                    f"{[str(v) for v in explicit]}; add it to the inputs, or replace it with givens"
                )
        for target, _ in update_pairs:
            shared[target] = None
        if not isinstance(accept_inplace, bool | np.bool_):
            raise TypeError(f"{where}: accept_inplace must be True or False, received {accept_inplace!r}")
        if not accept_inplace:
            refuse_inplace(targets, where)
        used = set(ancestors(targets)) if targets else set()
        for k, inp in enumerate(self.inputs):
            if inp.variable not in used and on_unused_input != "ignore":
                message = (
                    f"{where}: input {k} ({inp.name or inp.variable}) is not part of the graph needed to compute the "
                    "outputs and updates; pass on_unused_input='warn' or 'ignore' to allow it"
                )
                if on_unused_input == "raise":
                    raise UnusedInputError(message)
                warnings.warn(message)
        self.shared: list[SharedVariable] = list(shared)
        self.updates: list[tuple[SharedVariable, Variable]] = list(update_pairs)
        mutable = [k for k, i in enumerate(self.inputs) if i.mutable]
        # A generator the function updates is replaced after the call anyway: draws may advance it in place.
        mutable += [len(explicit) + self.shared.index(s) for s, _ in update_pairs
                    if getattr(s.type, "is_generator_state", False)]
        self.fgraph = FunctionGraph(
            explicit + self.shared, targets, clone=True, features=[DestroyHandler(mutable)]
        )
        fgraph_inputs = self.fgraph.inputs
        position = {s: len(explicit) + k for k, s in enumerate(self.shared)}
        #: ``(container, type)`` of each updated shared variable, in the order of the update outputs.
        self.update_targets = [(fgraph_inputs[position[s]].container, s.type) for s, _ in update_pairs]
        graph_done = perf_counter()

        # -- rewriting -------------------------------------------------------------------------
        from symlab.rewriting import rewrite_fgraph

        self.trace = rewrite_fgraph(self.fgraph, include=self.mode.include, exclude=self.mode.exclude)
        self.trace.mode = self.mode  # a view of the trace then says how to leave a rule out of this mode
        rewrite_done = perf_counter()

        # -- code generation ----------------------------------------------------------------------
        self.linker = self.mode.make_linker()
        borrow = [o.borrow for o in self.outputs] + [False] * len(update_pairs)
        self.runner = self.linker.make_runner(self.fgraph, borrow, trace=self.trace)
        done = perf_counter()

        self.profile: ProfileStats | None = None
        #: This function's own profile (one of ``profile.functions``), which its calls record into.
        self.profile_record: ProfileStats | None = None
        if profile is not None and not isinstance(profile, bool | np.bool_ | ProfileStats):
            raise TypeError(
                f"{where}: profile must be True, False or a ProfileStats, received {type(profile).__name__} "
                f"{profile!r:.60}"
            )
        if profile:
            # A ProfileStats given to several functions adds up their own profiles (one for each).
            combined = profile if isinstance(profile, ProfileStats) else ProfileStats()
            stats = combined.add_function(
                name, self.mode.name or repr(self.mode), getattr(self.linker, "name", type(self.linker).__name__)
            )
            stats.graph_seconds = graph_done - started
            stats.rewrite_seconds = rewrite_done - graph_done
            stats.codegen_seconds = done - rewrite_done
            info = getattr(self.runner, "compile_info", None)  # the Numba backend's compile numbers
            if info is not None:
                stats.numba_compile_seconds = info.numba_compile_seconds
                stats.cache_load_seconds = info.cache_load_seconds
                stats.codegen_seconds -= info.numba_compile_seconds + info.cache_load_seconds
                stats.cache_hit = info.cache_hit
                stats.cache_miss_reason = info.miss_reason
            stats.set_nodes(self.runner.nodes)
            self.runner.profile = stats
            self.profile = combined
            self.profile_record = stats
            stats.compile_seconds = perf_counter() - started
            combined.function_ready(stats)

    def _downcast(self, inp: In) -> bool | None:
        return input_downcast(inp, self.allow_input_downcast)

    def create(self) -> Function:
        return Function(self)


class Function(Displayable):
    """A compiled function: call it with values for its inputs (positionally or by name).

    Attributes: ``maker`` (``maker.fgraph`` is the optimized graph), ``trace``
    (the rewrite trace), ``profile`` (``None`` unless compiled with
    ``profile=True``), ``inputs`` (:class:`In`), ``outputs`` (:class:`Out`),
    ``name``.

    With the Numba backend and ``symlab.config.background_compile`` (the
    default), the machine code is compiled (or loaded from the disk cache) on
    a worker thread and the calls made meanwhile run on the NumPy backend:
    :attr:`tier` says which tier serves a call made now, :meth:`wait` blocks
    until the machine code is ready, :attr:`compile_info` says when it became
    ready, whether it came from the cache (and why not), how many calls ran
    before, and keeps the exception if Numba failed. ``repr(f)`` says it too.
    A process exits without waiting for the compiles under way (they are
    abandoned safely); :func:`symlab.compile.wait_all` waits for all of them.
    """

    def __init__(self, maker: FunctionMaker) -> None:
        self.maker = maker
        self.name = maker.name
        _register_live(self)
        self.inputs = maker.inputs
        self.outputs = maker.outputs
        self.trace = maker.trace
        self.profile = maker.profile
        self._profile_record = maker.profile_record if maker.profile is not None else None
        self._runner = maker.runner
        self._n_out = len(maker.outputs)
        self._filters = [
            (i.variable.type.filter, i.strict, maker._downcast(i), i.name) for i in maker.inputs
        ]
        self._shared = [v.container for v in maker.shared]
        self._updates = maker.update_targets
        by_name: dict[str, list[int]] = {}
        for k, i in enumerate(maker.inputs):
            if i.name is not None:
                by_name.setdefault(i.name, []).append(k)
        self._by_name = by_name
        self._thread_plan = self._make_thread_plan()
        #: The call without keywords, shared variables, updates or a profile, done with fewer steps; None if
        #: this function has one of those.
        self._plain_call = None if (self._shared or self._updates or self.profile is not None) else self._make_plain_call()
        info = getattr(self._runner, "compile_info", None)
        if info is not None and info.background:
            self._runner.when_ready(self._compiled_code_ready)

    def _compiled_code_ready(self) -> None:
        """The runner's machine code is ready (background compilation): calls go straight to it from now."""
        self._thread_plan = self._make_thread_plan()
        if self._plain_call is not None:
            self._plain_call = self._make_plain_call()
        if self._profile_record is not None:
            self._profile_record.record_background_compile(self._runner.compile_info)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until compiling is over (at most ``timeout`` seconds); True once it is.

        Calls then run the machine code (or, if Numba failed, the NumPy backend: see :attr:`tier` and
        ``compile_info.error``). Only a function compiled in the background
        (``symlab.config.background_compile``, the default) ever waits; every other is ready when
        ``symlab.function`` returns.
        """
        if timeout is not None and (not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout < 0):
            raise ValueError(f"{self!r}.wait: timeout must be None or a number of seconds >= 0, received {timeout!r}")
        wait = getattr(self._runner, "wait", None)
        return True if wait is None else wait(timeout)

    def wait_compiled(self, timeout: float | None = None) -> bool:
        """The same as :meth:`wait`."""
        return self.wait(timeout)

    @property
    def tier(self) -> str:
        """Which tier serves a call made now: ``"numpy"`` while the machine code is compiling,
        ``"machine code"``, ``"numpy (Numba failed)"``, or the backend's name (``"numpy"``) for the
        other modes."""
        tier = getattr(self._runner, "tier", None)
        return tier if tier is not None else self.maker.mode.linker

    @property
    def compile_info(self) -> Any:
        """What compiling the machine code did (the Numba backend's ``CompileInfo``), or None."""
        return getattr(self._runner, "compile_info", None)

    def _make_thread_plan(self) -> ThreadPlan:
        """What this function's calls do about threads, for the tier that serves them now."""
        info = self.compile_info
        if info is not None and self.tier == "machine code":
            return ThreadPlan(
                self.maker.threads,
                numba=info.parallel_kernels > 0,
                blas=info.blas_kernels > 0 or bool(info.fallback_ops),  # an op's NumPy perform may call BLAS
                machine=info.vm_nodes > 0,
            )
        return ThreadPlan(self.maker.threads, blas=True)  # the NumPy backend: NumPy's products and LAPACK

    @property
    def threads(self) -> int | str:
        """This function's thread setting: ``"auto"`` or a count (its own, else ``symlab.config.threads``).

        Set it per function with ``symlab.function(..., threads=n)``, for every function with
        ``symlab.config.threads`` (:mod:`symlab.compile.threads`).
        """
        return self._thread_plan.resolved_setting()

    @property
    def thread_count(self) -> int:
        """The threads a call made now runs its parallel work on (1 when it has none: see ``repr(f)``)."""
        return self._thread_plan.count()

    def _make_plain_call(self) -> Any:
        """A function of the inputs, generated for this signature, that checks them and runs the graph.

        An input that is already an ndarray of the right dtype and rank (and no static sizes to check) is
        passed on after three cheap tests; any other goes through its type's ``filter``, which raises the
        ``TypeError`` a bad value deserves (the caller then takes the full path, whose message names the
        input). Measured on ``x + y`` with 10 elements: 1.4 us a call, against 2.4 us through the full path.
        """
        direct = getattr(self._runner, "direct_callable", lambda: None)()  # the compiled graph itself, if it can be
        names = [f"a{k}" for k in range(len(self._filters))]
        scope: dict[str, Any] = {"ndarray": np.ndarray, "run": direct or self._runner, "keys": self.maker.output_keys}
        plan = self._thread_plan
        scope["with_threads"] = plan.call
        lines = [f"def plain_call({', '.join(names)}):"]
        for k, (inp, (filt, strict, downcast, _)) in enumerate(zip(self.inputs, self._filters)):
            scope[f"filter{k}"] = filt
            t = inp.variable.type
            check = ""
            if isinstance(t, TensorType) and all(size is None for size in t.shape):
                scope[f"dtype{k}"] = np.dtype(t.dtype)
                check = f"if not (type(a{k}) is ndarray and a{k}.dtype is dtype{k} and a{k}.ndim == {t.ndim}): "
            lines.append(f"    {check}a{k} = filter{k}(a{k}, strict={strict!r}, allow_downcast={downcast!r})")
        arguments = ", ".join(names) if direct is not None else f"[{', '.join(names)}]"
        # Parallel work runs on the function's threads; a function without any pays nothing for them.
        call = f"with_threads(run, {arguments})" if plan.parallel else f"run({arguments})"
        kind = self.maker.output_kind
        if kind == "single":
            lines.append(f"    return {call}[0]")
        elif kind == "dict":
            lines.append(f"    return dict(zip(keys, {call}))")
        else:
            lines.append(f"    return list({call})")
        exec("\n".join(lines), scope)  # noqa: S102 - source built above from names and numbers only
        return scope["plain_call"]

    @property
    def fgraph(self) -> FunctionGraph:
        """The optimized graph (``f.maker.fgraph``)."""
        return self.maker.fgraph

    def _inputs_fail_to_filter(self, args: tuple[Any, ...]) -> bool:
        for (filt, strict, downcast, _), value in zip(self._filters, args):
            try:
                filt(value, strict=strict, allow_downcast=downcast)
            except (TypeError, ValueError):
                return True
        return False

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
        where = self.maker.where
        n = len(self.inputs)
        if len(args) > n:
            names = ", ".join(str(i.name or i.variable) for i in self.inputs)
            raise TypeError(f"{where} takes {n} input{'s' if n != 1 else ''} ({names}), received {len(args)} values")
        values = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            positions = self._by_name.get(key)
            if positions is None:
                raise TypeError(f"{where}: no input is named {key!r}; the named inputs are {sorted(self._by_name)}")
            if len(positions) > 1:
                raise TypeError(f"{where}: inputs {positions} are all named {key!r}; give their values by position")
            k = positions[0]
            if values[k] is not _MISSING:
                raise TypeError(f"{where}: input {k} ({key!r}) was given twice (by position and by name)")
            values[k] = value
        for k, value in enumerate(values):
            if value is _MISSING:
                inp = self.inputs[k]
                if not inp.has_value:
                    raise TypeError(f"{where}: missing a value for input {k} ('{inp.name or inp.variable}')")
                default = inp.filtered_value
                values[k] = default.copy() if inp.mutable else default
        return values

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        plain = self._plain_call
        if plain is not None and not kwargs:
            try:
                return plain(*args)
            except (TypeError, ValueError) as err:
                if len(args) == len(self._filters) and not self._inputs_fail_to_filter(args):
                    self._locate_on_numpy(err, args)
                    self._add_call_note(err, args)  # raised while computing: say what the call gave
                    raise
            except Exception as err:
                self._locate_on_numpy(err, args)
                raise
            # a bad input value or a wrong number of them: the full path below raises the error that says so
        profile = self._profile_record
        if profile is not None:
            started = perf_counter()
            update_seconds = 0.0
        # Every input given by position: nothing to bind (the common, fast case).
        values = list(args) if not kwargs and len(args) == len(self._filters) else self._bind(args, kwargs)
        for k, ((filt, strict, downcast, name), value) in enumerate(zip(self._filters, values)):
            try:
                values[k] = filt(value, strict=strict, allow_downcast=downcast)
            except (TypeError, ValueError) as err:
                var = self.inputs[k].variable
                raise TypeError(
                    f"{self.maker.where}: bad value for input {k} ('{name}'): expected {var.type}, received "
                    f"{describe_value(value)}: {err}"
                ) from None
        for c in self._shared:
            values.append(c.value)
        if profile is not None:
            inputs_done = perf_counter()
        plan = self._thread_plan
        try:
            if plan.parallel:
                threads = plan.count()
                if profile is not None:
                    profile.count_threads(threads)
                results = plan.run_on(threads, self._runner, values)
            else:
                results = self._runner(values)
        except (TypeError, ValueError) as err:
            self._locate_on_numpy(err, values[: len(self._filters)])
            self._add_call_note(err, values)
            raise
        except Exception as err:
            self._locate_on_numpy(err, values[: len(self._filters)])
            raise
        if self._updates:
            if profile is not None:
                updates_started = perf_counter()
            n = self._n_out
            new_values = []
            # Filter every new value first, then store them all: a refused value leaves every shared variable as it was.
            for (container, type_), value in zip(self._updates, results[n:]):
                try:
                    new_values.append(type_.filter(value))
                except (TypeError, ValueError) as err:
                    raise TypeError(f"{self.maker.where}: the update of {container.name} produced {describe_value(value)}: {err}") from None
            for (container, _), value in zip(self._updates, new_values):
                container.value = value
            results = results[:n]
            if profile is not None:
                update_seconds = perf_counter() - updates_started
        if profile is not None:
            profile.record_call(inputs_done - started, update_seconds, perf_counter() - started)
        kind = self.maker.output_kind
        if kind == "single":
            return results[0]
        if kind == "dict":
            return dict(zip(self.maker.output_keys, results))
        return results

    def copy(
        self,
        share_memory: bool = False,
        swap: Mapping[SharedVariable, SharedVariable] | None = None,
        delete_updates: bool = False,
        name: str | None = None,
    ) -> Function:
        """A copy of this function, without rewriting or compiling the graph again.

        ``swap``: ``{shared: other_shared}``, the copy reads and updates ``other_shared``
        instead (its type must be the same). ``delete_updates=True``: the copy does not
        update any shared variable. ``share_memory=True``: the copy runs in this function's
        storage (calls take turns); otherwise it gets its own copy of the optimized graph
        and storage. ``name``: the copy's name (default: this function's name + " copy").

        >>> import symlab
        >>> import symlab.tensor as st
        >>> state, other = symlab.shared(0), symlab.shared(0)
        >>> inc = st.iscalar("inc")
        >>> acc = symlab.function([inc], state, updates=[(state, state + inc)], mode="NUMPY")
        >>> acc2 = acc.copy(swap={state: other})
        >>> _ = acc(10), acc2(100)
        >>> int(state.get_value()), int(other.get_value())
        (10, 100)
        >>> frozen = acc.copy(delete_updates=True)
        >>> int(frozen(5)), int(state.get_value())
        (10, 10)
        """
        import copy as copy_module

        maker = self.maker
        where = f"{maker.where}.copy"
        if name is not None and not isinstance(name, str):
            raise TypeError(f"{where}: name must be a str or None, received {type(name).__name__} {name!r:.60}")
        for flag, value in (("share_memory", share_memory), ("delete_updates", delete_updates)):
            if not isinstance(value, bool | np.bool_):
                raise TypeError(f"{where}: {flag} must be True or False, received {value!r}")
        swaps = pairs(swap, f"{where}: swap")
        by_container = {s.container: k for k, s in enumerate(maker.shared)}
        replaced: dict[int, SharedVariable] = {}
        for k, (old, new) in enumerate(swaps):
            if not isinstance(old, SharedVariable) or not isinstance(new, SharedVariable):
                raise TypeError(
                    f"{where}: swap entry {k} must map a shared variable to a shared variable, received "
                    f"{type(old).__name__} -> {type(new).__name__}"
                )
            position = by_container.get(old.container)
            if position is None:
                raise ValueError(
                    f"{where}: swap entry {k}: {old} is not a shared variable of this function; its shared "
                    f"variables are {[str(v) for v in maker.shared]}"
                )
            if new.type != old.type:
                raise TypeError(f"{where}: swap entry {k}: {new} ({new.type}) cannot replace {old} ({old.type})")
            replaced[position] = new

        n_out = len(maker.outputs)
        new_maker = copy_module.copy(maker)
        new_maker.name = f"{maker.name} copy" if name is None and maker.name else name
        new_maker.where = f"function {new_maker.name!r}" if new_maker.name else "function"
        new_maker.shared = [replaced.get(k, v) for k, v in enumerate(maker.shared)]
        keep_updates = not delete_updates and bool(maker.updates)
        if share_memory and (keep_updates or not maker.updates):
            fgraph = maker.fgraph
            runner = maker.runner
        else:
            outputs = maker.fgraph.outputs if keep_updates else maker.fgraph.outputs[:n_out]
            mutable = [k for k, i in enumerate(maker.inputs) if i.mutable]
            fgraph = FunctionGraph(
                maker.fgraph.inputs, outputs, clone=True, features=[DestroyHandler(mutable)]
            )
            borrow = [o.borrow for o in maker.outputs] + [False] * (len(outputs) - n_out)
            runner = maker.linker.make_runner(fgraph, borrow, trace=maker.trace)
        # The copy reads each shared value from the containers of its own shared variables (new_maker.shared).
        new_maker.fgraph = fgraph
        new_maker.runner = runner
        position = {s.container: k for k, s in enumerate(maker.shared)}
        if keep_updates:
            new_maker.updates = [(replaced.get(position[s.container], s), e) for s, e in maker.updates]
            new_maker.update_targets = [(t.container, t.type) for t, _ in new_maker.updates]
        else:
            new_maker.updates = []
            new_maker.update_targets = []
        new_maker.profile = None
        return Function(new_maker)

    def dprint(self, **kwargs: Any) -> Any:
        """Print the optimized graph with each node's position in the execution order."""
        return print_text(self, **kwargs)

    def _locate_on_numpy(self, err: BaseException, args: Any) -> None:
        """On an error the machine code raised, re-run the call on the NumPy tier, which names the node that
        failed (and a loop's iteration: compiled code cannot say which), and add what it says to ``err``.

        Only when the call can be re-run as it was: no input the graph may overwrite (a mutable input, a
        generator drawn in place), and the NumPy tier raising the same kind of error.
        """
        if self.tier != "machine code":
            return
        if any(note.startswith("symlab: raised by node") for note in getattr(err, "__notes__", ())):
            return
        maker = self.maker
        if any(i.mutable for i in maker.inputs) or any(getattr(s.type, "is_generator_state", False)
                                                       for s, _ in maker.updates):
            return
        from symlab.compile.linker_numpy import NumpyRunner

        try:
            values = [filt(v, strict=strict, allow_downcast=downcast)
                      for (filt, strict, downcast, _), v in zip(self._filters, args)]
            values += [c.value for c in self._shared]
            NumpyRunner(maker.fgraph)(values)
        except type(err) as again:
            err.add_note(f"symlab: the machine code raised this; re-run on the NumPy tier, the call raised {again}")
            for note in getattr(again, "__notes__", ()):
                err.add_note(note)
        except Exception:  # noqa: BLE001 - another error, or none: the machine code's error stands alone
            return

    def _add_call_note(self, err: BaseException, values: Any) -> None:
        """Note what a call gave on an error raised while computing (a compiled kernel's names no input).

        Not when a backend already named the node and its input values (the NumPy runner does).
        """
        if any(note.startswith("symlab: raised by node") for note in getattr(err, "__notes__", ())):
            return
        given = [f"{name}: {describe_value(v)}" for (_, _, _, name), v in zip(self._filters, values)]
        err.add_note(f"{self.maker.where}: the inputs of this call were " + "; ".join(given))

    def inspect(self, **options: Any) -> Any:
        """A live :class:`~symlab.notebook.inspector.ClientsInspector` of the optimized graph (``maker.fgraph``).

        ``options``: ``select`` (a variable or its name), ``style``, ``max_nodes``.
        """
        from symlab.graph.display import open_view

        return open_view("clients", self, **options)

    def __repr__(self) -> str:
        ins = ", ".join(str(i.name or i.variable) for i in self.inputs)
        mode = self.maker.mode
        return f"<symlab Function {self.name or ''}({ins}) mode={mode.name or repr(mode)}{self._tier_note()}{self._threads_note()}>"

    def _threads_note(self) -> str:
        """`` threads=auto (Numba kernels, BLAS)`` for machine code with parallel work; nothing otherwise."""
        plan = self._thread_plan
        if self.compile_info is None or not plan.parallel or self.tier != "machine code":
            return ""
        return " " + plan.describe()

    def _tier_note(self) -> str:
        """`` tier=...`` and how the machine code came, for a function of the Numba backend."""
        info = self.compile_info
        if info is None:
            return ""
        tier = self.tier
        note = f" tier={tier!r}"
        if info.numpy_only:
            return note + f" ({info.numpy_only})"
        if tier == "numpy":
            return note + " (machine code compiling)"
        if info.error is not None:
            return note + f" ({type(info.error).__name__})"
        source = "from the cache" if info.cache_hit else f"compiled: {info.miss_reason}" if info.miss_reason else "compiled"
        if info.background and info.ready_seconds is not None:
            ran = info.calls_before_ready
            return note + f" (ready after {info.ready_seconds:.2f} s, {source}; {ran} call{'s' * (ran != 1)} ran on numpy before)"
        return note + f" ({source})"




def function(
    inputs: Sequence[Variable | In],
    outputs: Any = None,
    mode: str | Mode | None = None,
    updates: Any = None,
    givens: Any = None,
    name: str | None = None,
    on_unused_input: str = "raise",
    allow_input_downcast: bool | None = None,
    profile: bool | ProfileStats = False,
    accept_inplace: bool = False,
    no_default_updates: bool | Sequence[SharedVariable] = False,
    threads: int | str | None = None,
) -> Function:
    """Compile ``outputs`` (a Variable, a list or a dict of them, or :class:`Out`) as a function of ``inputs``.

    ``mode``: a name (``"NUMBA"``, the default; ``"FAST_COMPILE"``,
    ``"NUMPY"``, ``"DEBUG"``, ``"NanGuard"``) or a :class:`Mode`.
    ``updates``: ``{shared: new_value_expression}`` (or pairs), stored after
    each call, once everything is computed. ``givens``: ``{variable:
    replacement}`` substituted before compiling. ``on_unused_input``:
    ``'raise'``, ``'warn'`` or ``'ignore'`` an input the outputs do not need.
    ``allow_input_downcast``: let inputs be converted with loss of precision
    (``None``: only Python floats into ``floatX``). ``profile=True``: record
    times in ``f.profile``. ``accept_inplace``: allow the graph given to hold
    operations that overwrite their inputs (refused otherwise, as in PyTensor).
    ``no_default_updates``: ``True`` leaves out the ``default_update`` of every shared variable (the draws of
    a ``RandomStream`` then give the same numbers at each call), a list leaves out those of the variables listed.
    ``threads``: the threads the function's parallel work uses, ``"auto"`` or a count (default: follow
    ``symlab.config.threads``, ``"auto"`` unless set; see :mod:`symlab.compile.threads`); ``f.threads`` and
    ``f.thread_count`` say it, and ``repr(f)`` for machine code with parallel work.

    >>> import symlab
    >>> import symlab.tensor as st
    >>> a, b = st.dscalars("a", "b")
    >>> f = symlab.function([a, b], {"sum": a + b, "diff": a - b})
    >>> {k: float(v) for k, v in f(3.0, 1.0).items()}
    {'sum': 4.0, 'diff': 2.0}
    """
    with gc_paused():  # compiling a large graph would otherwise run many full collections
        return FunctionMaker(
            inputs, outputs, mode, updates, givens, name, on_unused_input, allow_input_downcast, profile,
            accept_inplace, no_default_updates, threads,
        ).create()


# The printers (symlab.printing.subject) draw a compiled function as its optimized graph.
register_graph_holder(Function, "function")

#: Every compiled Function alive, by the order it was made (held weakly: the registry keeps none alive).
_LIVE_FUNCTIONS: weakref.WeakValueDictionary[int, Function] = weakref.WeakValueDictionary()
_made = itertools.count()
_live_lock = threading.Lock()  # functions may be compiled on several threads while a view reads the registry


def _register_live(function: Function) -> None:
    with _live_lock:
        _LIVE_FUNCTIONS[next(_made)] = function


def live_functions() -> list[Function]:
    """The compiled Functions alive, oldest first (the views ask which of them read or update a shared variable).

    >>> import symlab.tensor as st
    >>> x = st.dscalar("x")
    >>> f = function([x], x * 2, mode="NUMPY")
    >>> f in live_functions()
    True
    """
    with _live_lock:
        alive = list(_LIVE_FUNCTIONS.items())
    return [f for _, f in sorted(alive, key=lambda kv: kv[0])]


__all__ = ["Function", "FunctionMaker", "UnusedInputError", "function", "live_functions"]
