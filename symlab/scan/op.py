"""``Scan``: the op of a loop, whose body is an inner graph run once per iteration.

A node of ``Scan`` holds the loop's body as an inner graph (:class:`~symlab.graph.inner_graph.HasInnerGraph`);
its inputs and outputs are laid out as :class:`~symlab.scan.info.ScanInfo` describes. Build one with
:func:`symlab.scan`, which turns a Python function into the body; this module is the op itself: checking
the inputs it is given, running the loop on NumPy (:meth:`Scan.perform`, an iteration at a time, each one
the inner graph on the NumPy backend), its shapes, and what it opens to in a view (the body, with its
inputs labelled ``x[t]``, ``h[t-1]``).

>>> import numpy as np
>>> import symlab
>>> import symlab.tensor as st
>>> x = st.dvector("x")
>>> total, _ = symlab.scan(lambda x_t, acc: acc + x_t, sequences=x, outputs_info=st.constant(0.0), name="cumsum")
>>> node = total.owner.inputs[0].owner  # scan returns the buffer without its initial window: total is a slice
>>> str(node.op), node.op.info.state_taps
('Scan{cumsum}', ((-1,),))
>>> node.op.inner_sections(node)[0].extra["input_labels"]
['x[t]', 'out0[t-1]']
>>> total.eval({x: np.arange(5.0)}).tolist()
[0.0, 1.0, 3.0, 6.0, 10.0]
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from symlab.compile.builders import KeyedInnerGraphOp, _graph_key, _inner_fgraph, io_connection_pattern
from symlab.graph.basic import Apply, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.inner_graph import HasInnerGraph, InnerSection
from symlab.graph.op import Op
from symlab.graph.traversal import clone_replace, graph_inputs
from symlab.scan.info import ScanInfo
from symlab.tensor.type import TensorType

#: ``record(t, inner_input_values, inner_output_values)``: told each iteration's values (the values view).
IterationRecorder = Callable[[int, list[Any], list[Any]], None]


class ScanError(ValueError):
    """A scan's inputs do not fit its loop (a short sequence, a negative ``n_steps``, a state changing shape)."""


class Scan(KeyedInnerGraphOp, HasInnerGraph, Op):
    """A loop: the inner graph from ``inner_inputs`` to ``inner_outputs`` run ``n_steps`` times.

    ``info`` lays out the inputs and outputs (:class:`~symlab.scan.info.ScanInfo`). ``name`` shows in
    ``str(op)`` literally. ``input_labels`` and ``output_labels`` name the inner inputs and outputs in
    views (``x[t]``, ``h[t-1]``; :func:`symlab.scan` writes them from the user's names). ``mode`` is the
    mode the user asked for the body (kept, as PyTensor does; the body is compiled with the function's).
    """

    DERIVED = (*KeyedInnerGraphOp.DERIVED, "_pattern")
    #: The copies ``scan_inner_graph`` made (their body is rewritten already).
    inner_rewritten: bool = False

    def __init__(
        self,
        inner_inputs: Sequence[Variable],
        inner_outputs: Sequence[Variable],
        info: ScanInfo,
        *,
        name: str | None = None,
        input_labels: Sequence[str] | None = None,
        output_labels: Sequence[str] | None = None,
        mode: Any = None,
    ) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Scan: name must be a str or None, received {type(name).__name__} {name!r:.60}")
        if not isinstance(info, ScanInfo):
            raise TypeError(f"Scan: info must be a ScanInfo, received {type(info).__name__}")
        self.info = info
        self.user_name = name
        self.mode = mode
        self._fgraph = _inner_fgraph(list(inner_inputs), list(inner_outputs))
        self.input_labels = list(input_labels) if input_labels is not None else None
        self.output_labels = list(output_labels) if output_labels is not None else None
        self._check_layout()
        self._reset_caches()

    # -- checks ---------------------------------------------------------------------------------
    @property
    def where(self) -> str:
        """How errors name this loop: ``scan 'name'`` (or ``scan`` when unnamed)."""
        return "scan" if self.user_name is None else f"scan {self.user_name!r}"

    def _check_layout(self) -> None:
        info, fg = self.info, self._fgraph
        if len(fg.inputs) != info.n_inner_inputs:
            raise ValueError(f"{self.where}: the layout needs {info.n_inner_inputs} inner inputs, received {len(fg.inputs)}")
        if len(fg.outputs) != info.n_inner_outputs:
            raise ValueError(f"{self.where}: the layout needs {info.n_inner_outputs} inner outputs, received "
                             f"{len(fg.outputs)}")
        taps = fg.inputs[info.inner_slices()["states"]]
        k = 0
        for j, state_taps in enumerate(info.state_taps):
            out = fg.outputs[j]
            for _ in state_taps:
                _check_same_kind(out.type, taps[k].type, f"{self.where}: the body returns {self._out_label(j)} of "
                                 f"type {out.type} for a state whose value {self._in_label(k + info.n_seqs)} has type "
                                 f"{taps[k].type}; return the state's type (cast it, or start from an initial value of "
                                 f"the body's type)")
                k += 1
        untraced_in = fg.inputs[info.inner_slices()["untraced"]]
        untraced_out = fg.outputs[info.output_slices()["untraced"]]
        for i, o in zip(untraced_in, untraced_out):
            _check_same_kind(o.type, i.type, f"{self.where}: the new value of the carried state {i} has type {o.type}, "
                             f"its value has type {i.type}")
        if info.as_while:
            cond = fg.outputs[-1]
            if not isinstance(cond.type, TensorType) or cond.type.ndim != 0:
                raise TypeError(f"{self.where}: the until condition must be a scalar tensor, received {cond.type}")
        for k in range(info.n_mapped):
            out = fg.outputs[info.n_states + k]
            if not isinstance(out.type, TensorType):
                raise TypeError(f"{self.where}: output {info.n_states + k} ({out}) is not a tensor ({out.type}); only "
                                "tensors can be stacked over iterations: give it an initial value in outputs_info to "
                                "carry it as a state")

    def _reset_caches(self) -> None:
        self._runner: Any = None
        self._runner_lock = threading.RLock()
        self._pattern: list[list[bool]] | None = None
        self.__dict__.pop("_key", None)
        self.__dict__.pop("_hash", None)
        #: The rewrite of the body that compiling made (``scan_inner_graph``), or None.
        self.inner_trace: Any = getattr(self, "inner_trace", None)

    # -- the inner graph ----------------------------------------------------------------------------
    @property
    def fgraph(self) -> FunctionGraph:  # type: ignore[override]
        """The body (the op's own: read it, do not change it; :meth:`clone` gives a copy)."""
        return self._fgraph

    def clone(self) -> Scan:
        """An equal op over a fresh copy of the body."""
        return self.clone_with_inner_graph(self._fgraph.clone())

    def clone_with_inner_graph(self, fgraph: FunctionGraph, info: ScanInfo | None = None, **changes: Any) -> Scan:
        """A copy of this op whose body is ``fgraph`` (and layout ``info``, labels or name from ``changes``)."""
        new = copy.copy(self)
        new.__dict__.pop("_rewritten_ops", None)  # scan_inner_graph's copies of this op: not of the new one
        new._fgraph = fgraph
        if info is not None:
            new.info = info
        for attr, value in changes.items():
            if attr not in ("user_name", "input_labels", "output_labels", "mode", "inner_rewritten"):
                raise TypeError(f"Scan.clone_with_inner_graph: unexpected change {attr!r}")
            setattr(new, attr, value)
        new._check_layout()
        new._reset_caches()
        return new

    def inner_sections(self, node: Apply, fgraph: FunctionGraph | None = None) -> list[InnerSection]:
        """The body, each inner input wired to the outer input it reads and labelled ``x[t]``, ``h[t-1]``."""
        info, fg = self.info, self._fgraph
        outer = self.outer_input_of_inner(node)
        outs: list[Variable | None] = list(node.outputs) + [None] * int(info.as_while)
        return [
            InnerSection(
                label="body",
                inputs=list(fg.inputs),
                outputs=list(fg.outputs),
                outer_inputs=outer,
                outer_outputs=outs,
                nodes=fg.toposort(),
                owned=True,
                extra={
                    "loop": "scan",
                    "input_labels": [self._in_label(k) for k in range(len(fg.inputs))],
                    "output_labels": [self._out_label(k) for k in range(len(fg.outputs))],
                    "n_steps": node.inputs[0],
                    "info": info,
                },
            )
        ]

    def outer_input_of_inner(self, node: Apply) -> list[Variable]:
        """For each inner input, the outer input it reads (every tap of a state reads its initial window)."""
        info = self.info
        o = info.outer_slices()
        outer = list(node.inputs[o["seqs"]])
        for init, taps in zip(node.inputs[o["states"]], info.state_taps):
            outer.extend([init] * len(taps))
        outer.extend(node.inputs[o["untraced"]])
        outer.extend(node.inputs[o["non_seqs"]])
        return outer

    def _in_label(self, k: int) -> str:
        if self.input_labels is not None and k < len(self.input_labels):
            return self.input_labels[k]
        info = self.info
        s = info.inner_slices()
        if k < s["seqs"].stop:
            return f"seq{k}[t]"
        if k < s["states"].stop:
            pos = k - s["states"].start
            for j, taps in enumerate(info.state_taps):
                if pos < len(taps):
                    return f"state{j}[t{taps[pos]}]"
                pos -= len(taps)
        if k < s["untraced"].stop:
            return f"carried{k - s['untraced'].start}"
        return f"non_seq{k - s['non_seqs'].start}"

    def _out_label(self, k: int) -> str:
        if self.output_labels is not None and k < len(self.output_labels):
            return self.output_labels[k]
        info = self.info
        if k < info.n_states:
            return f"state{k}[t]"
        if k < info.n_states + info.n_mapped:
            return f"output{k}[t]"
        if k < info.n_outputs:
            return f"carried{k - info.n_states - info.n_mapped} next"
        return "until"

    # -- identity ---------------------------------------------------------------------------------------
    @cached_property
    def _key(self) -> tuple[Any, ...]:
        return (self.info, _graph_key(self._fgraph))

    def __str__(self) -> str:
        name = "scan_fn" if self.user_name is None else self.user_name
        return f"Scan{{{name}{', while' if self.info.as_while else ''}}}"

    # -- building nodes ---------------------------------------------------------------------------------
    def make_node(self, *inputs: Any) -> Apply:
        """A node on ``(n_steps, *sequences, *initial windows, *carried values, *non_sequences)``."""
        from symlab.tensor.conversion import as_tensor_variable

        info, fg = self.info, self._fgraph
        if len(inputs) != info.n_outer_inputs:
            raise ValueError(f"{self.where}: expected {info.n_outer_inputs} inputs (n_steps, {info.n_seqs} sequences, "
                             f"{info.n_states} initial windows, {info.n_untraced} carried values, {info.n_non_seqs} "
                             f"non-sequences), received {len(inputs)}")
        n_steps = as_tensor_variable(inputs[0])
        if n_steps.type.ndim != 0 or n_steps.type.dtype not in _INT_DTYPES:
            raise TypeError(f"{self.where}: n_steps must be an integer scalar, received {n_steps.type}")
        checked = [n_steps]
        o = info.outer_slices()
        inner = fg.inputs
        s = info.inner_slices()
        for k, (value, var) in enumerate(zip(inputs[o["seqs"]], inner[s["seqs"]])):
            checked.append(self._stacked(value, var.type, f"sequence {k} (read as {self._in_label(k)})"))
        first_tap = s["states"].start
        for j, (value, taps) in enumerate(zip(inputs[o["states"]], info.state_taps)):
            var = inner[first_tap]
            checked.append(self._stacked(value, var.type, f"the initial window of state {j} ({self._out_label(j)})"))
            first_tap += len(taps)
        for k, (value, var) in enumerate(zip(inputs[o["untraced"]], inner[s["untraced"]])):
            checked.append(self._same(value, var.type, f"carried value {k} ({var})"))
        for k, (value, var) in enumerate(zip(inputs[o["non_seqs"]], inner[s["non_seqs"]])):
            checked.append(self._same(value, var.type, f"non-sequence {k} ({var})"))
        outputs = []
        for j in range(info.n_states):
            t = fg.inputs[s["states"].start + sum(len(x) for x in info.state_taps[:j])].type
            outputs.append(TensorType(t.dtype, (None, *t.shape))())
        for k in range(info.n_mapped):
            t = fg.outputs[info.n_states + k].type
            outputs.append(TensorType(t.dtype, (None, *t.shape))())
        for var in inner[s["untraced"]]:
            outputs.append(var.type())
        return Apply(self, checked, outputs)

    def _stacked(self, value: Any, entry: Any, what: str) -> Variable:
        """``value`` as a tensor whose entries (along the first dimension) are of type ``entry``."""
        from symlab.tensor.conversion import as_tensor_variable

        var = value if isinstance(value, Variable) else as_tensor_variable(value)
        t = var.type
        if not isinstance(t, TensorType) or t.ndim != entry.ndim + 1 or t.dtype != entry.dtype:
            raise TypeError(f"{self.where}: {what} must be a {entry.ndim + 1}-d {entry.dtype} tensor (entries of type "
                            f"{entry}), received {t}")
        return var

    def _same(self, value: Any, expected: Any, what: str) -> Variable:
        try:
            return expected.filter_variable(value)
        except TypeError as err:
            received = value.type if isinstance(value, Variable) else f"{type(value).__name__} {value!r:.60}"
            raise TypeError(f"{self.where}: {what} must be of type {expected}, received {received} ({err})") from None

    # -- running on NumPy ---------------------------------------------------------------------------------
    def _numpy_runner(self) -> Any:
        if self._runner is None:
            from symlab.compile.linker_numpy import NumpyLinker

            self._runner = NumpyLinker().make_runner(self._fgraph)
        return self._runner

    def perform(self, node: Apply, inputs: Sequence[Any], output_storage: list[list[Any]]) -> None:
        """Run the loop, one iteration at a time, each the body on the NumPy backend."""
        for cell, value in zip(output_storage, self.perform_steps(list(inputs))):
            cell[0] = value

    def check_inputs(self, inputs: Sequence[Any]) -> int:
        """The number of iterations, after checking that the input values fit the loop (before any runs).

        A negative ``n_steps``, a sequence shorter than ``n_steps`` or an initial window shorter than its
        state's taps is a :class:`ScanError` naming it.
        """
        info = self.info
        n_steps = int(np.asarray(inputs[0]))
        if n_steps < 0:
            raise ScanError(f"{self.where}: n_steps must be >= 0, received {n_steps}")
        o = info.outer_slices()
        for k, seq in enumerate(inputs[o["seqs"]]):
            if len(seq) < n_steps:
                raise ScanError(f"{self.where}: sequence {k} ({self._in_label(k)}) has {len(seq)} entries, fewer than "
                                f"the {n_steps} iterations asked for (n_steps); give a longer sequence or fewer steps")
        for j, init in enumerate(inputs[o["states"]]):
            if len(init) < info.window(j):
                raise ScanError(f"{self.where}: state {j} ({self._out_label(j)}) reads taps {list(info.state_taps[j])}, "
                                f"so its initial value needs {info.window(j)} entries along its first dimension, "
                                f"received {len(init)}")
        return n_steps

    def perform_steps(self, inputs: list[Any], record: IterationRecorder | None = None) -> list[Any]:
        """The node's output values for input values ``inputs``; ``record`` (if given) is told each iteration.

        Buffers are allocated once; a state keeps only as many entries as ``info.kept`` asks (a ring). An
        error raised by the body gets a note naming the iteration.
        """
        info, fg = self.info, self._fgraph
        n_steps = self.check_inputs(inputs)
        o = info.outer_slices()
        seqs = list(inputs[o["seqs"]])
        carried = list(inputs[o["untraced"]])
        non_seqs = list(inputs[o["non_seqs"]])
        states = []  # (ring buffer, its length, window)
        for j, init in enumerate(inputs[o["states"]]):
            window = info.window(j)
            init = np.asarray(init)[-window:] if window else np.asarray(init)[:0]
            total = window + n_steps
            size = total if info.kept[j] is None else min(info.kept[j], total)
            buf = np.empty((size, *init.shape[1:]), dtype=fg.outputs[j].type.dtype)
            for i in range(window):
                buf[i % size] = init[i]
            states.append((buf, size, window))
        mapped: list[np.ndarray | None] = [None] * info.n_mapped
        mapped_size = [n_steps if info.kept[info.n_states + k] is None else min(info.kept[info.n_states + k], n_steps)
                       for k in range(info.n_mapped)]
        runner = self._numpy_runner()
        steps = n_steps
        with self._runner_lock:
            for t in range(n_steps):
                args = [seq[t] for seq in seqs]
                for (buf, size, window), taps in zip(states, info.state_taps):
                    args.extend(buf[(t + window + tap) % size] for tap in taps)
                args.extend(carried)
                args.extend(non_seqs)
                try:
                    outs = runner(args)
                except Exception as err:
                    err.add_note(f"symlab: {self.where} stopped at iteration {t} (of n_steps={n_steps})")
                    raise
                if record is not None:  # copies: a ring's entries are overwritten later
                    record(t, [np.array(a) if isinstance(a, np.ndarray) else a for a in args],
                           [np.array(v) if isinstance(v, np.ndarray) else v for v in outs])
                self._store(t, outs, states, mapped, mapped_size)
                carried = list(outs[info.n_states + info.n_mapped : info.n_outputs])
                if info.as_while and bool(np.asarray(outs[-1])):
                    steps = t + 1
                    break
        return self._results(steps, states, mapped, mapped_size, carried, inputs)

    def _store(self, t: int, outs: Sequence[Any], states: list, mapped: list, mapped_size: list[int]) -> None:
        info = self.info
        buffers = [b for b, _, _ in states] + [m for m in mapped if m is not None]
        for j, (buf, size, window) in enumerate(states):
            value = np.asarray(outs[j])
            if value.shape != buf.shape[1:]:
                raise ScanError(f"{self.where}: at iteration {t}, the body's new value of state {j} "
                                f"({self._out_label(j)}) has shape {value.shape}, its initial value has shape "
                                f"{buf.shape[1:]}; a state keeps its shape from one iteration to the next")
            if any(np.may_share_memory(value, b) for b in buffers):
                value = value.copy()  # it may be an entry about to be overwritten
            buf[(t + window) % size] = value
        for k in range(info.n_mapped):
            value = np.asarray(outs[info.n_states + k])
            if mapped[k] is None:
                mapped[k] = np.empty((mapped_size[k], *value.shape), dtype=self._fgraph.outputs[info.n_states + k].type.dtype)
            elif value.shape != mapped[k].shape[1:]:
                raise ScanError(f"{self.where}: at iteration {t}, output {info.n_states + k} ({self._out_label(info.n_states + k)}) "
                                f"has shape {value.shape}, at iteration 0 it had {mapped[k].shape[1:]}; every "
                                "iteration's entry must have the same shape to be stacked")
            if mapped_size[k]:
                mapped[k][t % mapped_size[k]] = value

    def _results(self, steps: int, states: list, mapped: list, mapped_size: list[int], carried: list, inputs: list) -> list:
        from symlab.compile.linker_numpy import copy_value

        info = self.info
        results: list[Any] = []
        for j, (buf, size, window) in enumerate(states):
            total = window + steps
            keep = total if info.kept[j] is None else min(info.kept[j], total)
            results.append(_ring_tail(buf, size, total, keep))
        entry_shapes = self._entry_shapes_without_iterations(inputs) if info.n_mapped and steps == 0 else None
        for k in range(info.n_mapped):
            out_type = self._fgraph.outputs[info.n_states + k].type
            if mapped[k] is None:  # no iteration ran: an empty stack of entries of the body's shape
                results.append(np.empty((0, *entry_shapes[k]), dtype=out_type.dtype))
                continue
            keep = steps if info.kept[info.n_states + k] is None else min(info.kept[info.n_states + k], steps)
            results.append(_ring_tail(mapped[k], mapped_size[k], steps, keep))
        given = [id(v) for v in inputs]
        for value in carried:
            results.append(copy_value(value) if id(value) in given or isinstance(value, np.ndarray) else value)
        return results

    def _entry_shapes_without_iterations(self, inputs: list[Any]) -> list[tuple[int, ...]]:
        """The shape of each mapped output's entry when no iteration runs (the stack is empty, its entries not).

        The body runs once on stand-ins of the right shapes (zeros for the sequences' entries, the initial
        windows' last entries, the carried and non-sequence values); what it returns is discarded. A body that
        fails on the stand-ins gives the shapes its types know, unknown lengths 0.
        """
        info, fg = self.info, self._fgraph
        o = info.outer_slices()
        args = [np.zeros(np.shape(seq)[1:], dtype=np.asarray(seq).dtype) for seq in inputs[o["seqs"]]]
        for init, taps in zip(inputs[o["states"]], info.state_taps):
            init = np.asarray(init)
            entry = init[-1] if len(init) else np.zeros(init.shape[1:], dtype=init.dtype)
            args.extend(entry for _ in taps)
        args.extend(inputs[o["untraced"]])
        args.extend(inputs[o["non_seqs"]])
        mapped = fg.outputs[info.output_slices()["mapped"]]
        try:
            with self._runner_lock, np.errstate(all="ignore"):
                outs = self._numpy_runner()(args)
            return [np.shape(outs[info.n_states + k]) for k in range(info.n_mapped)]
        except Exception:  # noqa: BLE001 - the stand-ins are not real values: fall back on the types
            return [tuple(0 if d is None else d for d in out.type.shape) for out in mapped]

    # -- shapes ---------------------------------------------------------------------------------------------
    def infer_shape(self, fgraph: Any, node: Apply, input_shapes: Sequence[Sequence[Variable]]) -> list:
        """Each buffer's length from ``n_steps`` and the windows; a mapped output's entry shape from the body."""
        import symlab.tensor as st
        from symlab.tensor.shape_inference import symbolic_shape

        info, fg = self.info, self._fgraph
        if info.as_while:
            raise NotImplementedError(f"{self.where}: a while loop's length is known only once it ran")
        n = st.cast(node.inputs[0], "int64")
        o, s = info.outer_slices(), info.inner_slices()
        shapes: list[tuple] = []
        for j in range(info.n_states):
            length = n + info.window(j)
            if info.kept[j] is not None:
                length = st.minimum(length, info.kept[j])
            shapes.append((length, *input_shapes[o["states"].start + j][1:]))
        # the inner inputs' shapes, in terms of the outer inputs' shapes
        memo: dict[Variable, tuple] = {}
        outer_of = self.outer_input_of_inner(node)
        n_stacked = s["states"].stop
        for k, var in enumerate(fg.inputs):
            if not isinstance(var.type, TensorType):
                continue
            outer_pos = node.inputs.index(outer_of[k])
            memo[var] = tuple(input_shapes[outer_pos][1:] if k < n_stacked else input_shapes[outer_pos])
        iteration_vars = set(fg.inputs[: s["untraced"].stop])
        non_seq = dict(zip(fg.inputs[s["non_seqs"]], node.inputs[o["non_seqs"]]))
        for k in range(info.n_mapped):
            out = fg.outputs[info.n_states + k]
            entry = symbolic_shape(out, stop_at=fg.inputs, memo=memo)
            leaves = set(graph_inputs(list(entry)))
            if leaves & iteration_vars:
                raise NotImplementedError(f"{self.where}: output {info.n_states + k}'s shape depends on an iteration's values")
            entry = tuple(clone_replace(list(entry), non_seq)) if entry else ()
            length = n if info.kept[info.n_states + k] is None else st.minimum(n, info.kept[info.n_states + k])
            shapes.append((length, *entry))
        for k in range(info.n_untraced):
            shapes.append(tuple(input_shapes[o["untraced"].start + k]) if isinstance(node.outputs[len(shapes)].type, TensorType) else ())
        return shapes

    def connection_pattern(self, node: Apply | None = None) -> list[list[bool]]:
        """``pattern[i][j]``: whether output ``j`` depends on input ``i``, through every iteration.

        A state's taps depend on its initial window and on whatever its new value depends on, so the
        dependencies are closed over the recurrence. ``n_steps`` is connected to nothing (it is an integer).
        """
        if self._pattern is None:
            self._pattern = self._compute_pattern()
        return [list(row) for row in self._pattern]

    def _compute_pattern(self) -> list[list[bool]]:
        info, fg = self.info, self._fgraph
        inner = io_connection_pattern(fg)  # inner[i][j]: inner output j depends on inner input i
        n_in, n_out = len(fg.inputs), len(fg.outputs)
        os_ = info.outer_slices()
        # the outer input each inner input reads, and the inner output that feeds it back (if any)
        outer_pos: list[int] = []
        feeds: list[int | None] = []
        outer_pos.extend(range(os_["seqs"].start, os_["seqs"].stop))
        feeds.extend([None] * info.n_seqs)
        for j, taps in enumerate(info.state_taps):
            outer_pos.extend([os_["states"].start + j] * len(taps))
            feeds.extend([j] * len(taps))
        for k in range(info.n_untraced):
            outer_pos.append(os_["untraced"].start + k)
            feeds.append(info.n_states + info.n_mapped + k)
        outer_pos.extend(range(os_["non_seqs"].start, os_["non_seqs"].stop))
        feeds.extend([None] * info.n_non_seqs)
        deps_in = [{outer_pos[i]} for i in range(n_in)]
        changed = True
        while changed:
            changed = False
            deps_out = [set().union(*(deps_in[i] for i in range(n_in) if inner[i][j])) for j in range(n_out)]
            for i in range(n_in):
                if feeds[i] is not None and not deps_out[feeds[i]] <= deps_in[i]:
                    deps_in[i] |= deps_out[feeds[i]]
                    changed = True
        # an outer state output also holds its initial window
        for j in range(info.n_states):
            deps_out[j].add(os_["states"].start + j)
        for k in range(info.n_untraced):
            deps_out[info.n_states + info.n_mapped + k].add(os_["untraced"].start + k)
        return [[i in deps_out[j] for j in range(info.n_outputs)] for i in range(info.n_outer_inputs)]

    # -- differentiating (symlab.scan.gradient) ---------------------------------------------------------------
    def L_op(self, inputs: Sequence[Variable], outputs: Sequence[Variable], output_grads: Sequence[Variable]) -> list[Variable]:  # noqa: N802
        """Backpropagation through time: a scan running backwards (:mod:`symlab.scan.gradient`)."""
        from symlab.scan.gradient import scan_lop

        return scan_lop(self, list(inputs), list(outputs), list(output_grads))

    def R_op(self, inputs: Sequence[Variable], eval_points: Sequence[Variable | None]) -> list[Variable]:  # noqa: N802
        """The forward derivative: a scan carrying the directions alongside the states."""
        from symlab.scan.gradient import scan_rop

        return scan_rop(self, list(inputs), list(eval_points))


_INT_DTYPES = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def _check_same_kind(received: Any, expected: Any, message: str) -> None:
    """A state's new value must have its type (same dtype and dimensions, no clash of known lengths)."""
    if isinstance(expected, TensorType):
        ok = isinstance(received, TensorType) and received.dtype == expected.dtype and received.ndim == expected.ndim
        if ok:
            ok = all(a is None or b is None or a == b for a, b in zip(received.shape, expected.shape))
    else:
        ok = received == expected
    if not ok:
        raise TypeError(message)


def _ring_tail(buf: np.ndarray, size: int, total: int, keep: int) -> np.ndarray:
    """The last ``keep`` of the ``total`` entries written into the ring ``buf`` (entry ``i`` at ``i % size``)."""
    if size == total:
        return buf[total - keep : total] if keep != total else buf
    idx = [(i % size) for i in range(total - keep, total)]
    return buf[idx]


__all__ = ["IterationRecorder", "Scan", "ScanError"]
