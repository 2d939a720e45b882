"""Four dictionary formats for computation DAGs, and converters between them (seed 001).

Every format is a dict whose entries are ``{'fn': operation, 'args': (inputs...)}``;
what the keys are differs:

**tuple-dag**
    ``{(outputs...): {'fn': op, 'args': (inputs...)}}``: one entry per
    operation, keyed by the tuple of everything it computes.
**index-dag**
    a tuple-dag plus, for each output ``c`` of each tuple ``(c, d)``, the entry
    ``c: {'fn': index, 'args': ((c, d), 0)}`` (``index`` is this module's keyword).
**dag**
    the index-dag with the common case simplified: an operation with a single
    output is keyed by that output, ``{c: {'fn': op, 'args': (a, b)}}``, while
    operations with several outputs keep their tuple and index entries.
**unidag**
    ``{job: (jobs it immediately precedes...)}``: jobs only, variables are the
    edges. The jobs are the keys of a dag; the dag itself is the *job table*
    that says what each job runs.

A complete representation carries the tuple of inputs and the tuple of outputs
beside the dict, so every converter takes and returns ``(dag, inputs, outputs)``.
The seed's "blown out" example, with strings for variables and operations:

>>> tdag = {("c", "d"): {"fn": "op", "args": ("a", "b")}}
>>> idag, inputs, outputs = tuple_dag_to_index_dag(tdag, ("a", "b"), ("c", "d"))
>>> for key, entry in idag.items():
...     print(key, entry)
('c', 'd') {'fn': 'op', 'args': ('a', 'b')}
c {'fn': index, 'args': (('c', 'd'), 0)}
d {'fn': index, 'args': (('c', 'd'), 1)}
>>> index_dag_to_tuple_dag(idag, inputs, outputs)[0] == tdag
True

A single output is simplified away by the dag format, and the unidag keeps only
which job comes before which:

>>> tdag = {("b",): {"fn": "f", "args": ("a",)}, ("c",): {"fn": "g", "args": ("a", "b")}}
>>> dag, _, _ = tuple_dag_to_dag(tdag, ("a",), ("c",))
>>> dag
{'b': {'fn': 'f', 'args': ('a',)}, 'c': {'fn': 'g', 'args': ('a', 'b')}}
>>> unidag, jobs, _, _ = dag_to_unidag(dag, ("a",), ("c",))
>>> unidag
{'b': ('c',), 'c': ()}
>>> unidag_to_dag(unidag, jobs, ("a",), ("c",))[0] == dag
True

Converters never modify what they are given, and check it first: bad input
raises :class:`DagFormatError` (a cycle: :class:`DagCycleError`) naming the
offending variables, and no result is built.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any

from symlab.graph.basic import Constant, CycleError

Dag = dict[Any, dict[str, Any]]
#: ``(dag, inputs, outputs)``: a format's dict with the graph's inputs and outputs.
Complete = tuple[Dag, tuple[Any, ...], tuple[Any, ...]]


class DagFormatError(ValueError):
    """A dict is not a valid DAG of the expected format."""


class DagCycleError(DagFormatError, CycleError):
    """The DAG has a cycle; the message names the variables on it."""


class _Index:
    """The keyword ``index``: ``c: {'fn': index, 'args': ((c, d), 0)}`` reads output 0 of ``(c, d)``.

    There is one instance. It is also a function, so an index-dag can be run:

    >>> index
    index
    >>> index((10, 20), 1)
    20
    """

    _instance: _Index | None = None

    def __new__(cls) -> _Index:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __call__(self, values: Any, i: int) -> Any:
        return values[i]

    def __repr__(self) -> str:
        return "index"

    def __reduce__(self) -> str:
        return "index"  # pickles as this module's global: the singleton survives


index = _Index()


# -- small helpers -------------------------------------------------------------------------
def show(key: Any) -> str:
    """How a key or variable is named in messages: ``(c, d)`` for a tuple, ``str(v)`` otherwise.

    >>> show(("c", "d")), show("a")
    ('(c, d)', 'a')
    """
    if isinstance(key, tuple):
        return "(" + ", ".join(show(k) for k in key) + ("," if len(key) == 1 else "") + ")"
    return str(key)


def _entry(key: Any, entry: Any, fmt: str) -> tuple[Any, tuple[Any, ...]]:
    """``(fn, args)`` of a dict entry, checked."""
    if not isinstance(entry, Mapping) or "fn" not in entry or "args" not in entry:
        raise DagFormatError(f"{fmt}: the entry of {show(key)} must be a dict {{'fn': ..., 'args': (...)}}, received {entry!r:.80}")
    args = entry["args"]
    if not isinstance(args, tuple | list):
        raise DagFormatError(f"{fmt}: the 'args' of {show(key)} must be a tuple, received {type(args).__name__}")
    return entry["fn"], tuple(args)


def _is_index(entry: Mapping[str, Any]) -> bool:
    return entry.get("fn") is index


def _check_io(name: str, values: Any, fmt: str) -> tuple[Any, ...]:
    if not isinstance(values, tuple | list):
        raise DagFormatError(f"{fmt}: {name} must be a tuple of variables, received {type(values).__name__}")
    for v in values:
        if isinstance(v, tuple):
            raise DagFormatError(f"{fmt}: {name} must be variables, received the tuple {show(v)}")
        if not isinstance(v, Hashable):
            raise DagFormatError(f"{fmt}: {name} must be hashable variables, received {type(v).__name__}")
    return tuple(values)


def toposort_jobs(deps: Mapping[Any, Iterable[Any]], fmt: str = "dag") -> list[Any]:
    """The keys of ``deps`` ordered so that each comes after those it depends on.

    ``deps[job]`` lists the jobs that ``job`` needs. The walk is iterative and
    the order deterministic (it follows the dict's order). A cycle raises
    :class:`DagCycleError` naming the jobs on it:

    >>> toposort_jobs({"b": ["a"], "a": []})
    ['a', 'b']
    >>> toposort_jobs({"a": ["b"], "b": ["c"], "c": ["a"]})
    Traceback (most recent call last):
    ...
    symlab.formats.dags.DagCycleError: dag: there is a cycle through a, b, c: a needs b, which needs c, which needs a
    """
    order: list[Any] = []
    state: dict[Any, int] = {}  # 1: on the current path, 2: done
    for root in deps:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(deps[root]))]
        while stack:
            job, pending = stack[-1]
            for dep in pending:
                seen = state.get(dep)
                if seen == 2:
                    continue
                if seen == 1:
                    path = [j for j, _ in stack]
                    start = next(k for k, j in enumerate(path) if j is dep or j == dep)
                    cycle = path[start:]
                    chain = f"{show(cycle[0])} needs " + ", which needs ".join(show(j) for j in [*cycle[1:], dep])
                    raise DagCycleError(
                        f"{fmt}: there is a cycle through {', '.join(show(j) for j in cycle)}: {chain}"
                    )
                state[dep] = 1
                stack.append((dep, iter(deps[dep])))
                break
            else:
                stack.pop()
                state[job] = 2
                order.append(job)
    return order


# -- checking the three variable formats ---------------------------------------------------------
_TUPLE, _INDEX, _DAG = "tuple-dag", "index-dag", "dag"


def check(dag: Any, inputs: Any, outputs: Any, fmt: str) -> list[Any]:
    """Check ``(dag, inputs, outputs)`` against ``fmt`` (``"tuple-dag"``, ``"index-dag"`` or ``"dag"``).

    Returns the keys in an order where each entry comes after the entries
    that compute its arguments. Raises :class:`DagFormatError` naming what is
    wrong: a key of the wrong kind, a variable defined twice, an argument that
    no entry defines and that is not an input (symlab constants define
    themselves), index entries that disagree with their tuple, a cycle.

    >>> check({("c",): {"fn": "op", "args": ("a", "b")}}, ("a",), ("c",), "tuple-dag")
    Traceback (most recent call last):
    ...
    symlab.formats.dags.DagFormatError: tuple-dag: the argument b of (c,) is not an input and no entry computes it
    """
    if fmt not in (_TUPLE, _INDEX, _DAG):
        raise ValueError(f"check: fmt must be 'tuple-dag', 'index-dag' or 'dag', received {fmt!r}")
    if not isinstance(dag, Mapping):
        raise DagFormatError(f"{fmt}: expected a dict, received {type(dag).__name__}")
    inputs = _check_io("inputs", inputs, fmt)
    outputs = _check_io("outputs", outputs, fmt)
    input_set = set(inputs)
    if len(input_set) != len(inputs):
        twice = [show(v) for k, v in enumerate(inputs) if v in inputs[:k]]
        raise DagFormatError(f"{fmt}: the inputs list {', '.join(twice)} more than once")

    entries: dict[Any, tuple[Any, tuple[Any, ...]]] = {}
    definer: dict[Any, Any] = {}  # variable -> the key of the entry that provides it to others

    def define(var: Any, key: Any) -> None:
        if isinstance(var, tuple):
            raise DagFormatError(f"{fmt}: the key {show(key)} contains the tuple {show(var)}; variables cannot be tuples")
        if var in input_set:
            raise DagFormatError(f"{fmt}: {show(var)} is an input, but the entry {show(key)} computes it")
        if var in definer:
            raise DagFormatError(f"{fmt}: {show(var)} is computed twice, by {show(definer[var])} and by {show(key)}")
        definer[var] = key

    index_of: dict[Any, dict[int, Any]] = {}  # tuple key -> {position: index entry key}
    for key, entry in dag.items():
        fn, args = _entry(key, entry, fmt)
        entries[key] = (fn, args)
        if isinstance(key, tuple):
            if fn is index:
                raise DagFormatError(f"{fmt}: the tuple key {show(key)} has an index entry; index entries are keyed by one variable")
            if not key:
                raise DagFormatError(f"{fmt}: the empty tuple is a key: an operation without outputs cannot be part of the graph")
            if fmt == _DAG and len(key) == 1:
                raise DagFormatError(
                    f"{fmt}: the key {show(key)} is a single-output tuple; a dag keys it by {show(key[0])} "
                    "(see remove_singleton_indices)"
                )
            if fmt == _TUPLE:
                for var in key:
                    define(var, key)
            index_of.setdefault(key, {})
        elif fn is index:
            if fmt == _TUPLE:
                raise DagFormatError(f"{fmt}: {show(key)} is an index entry; a tuple-dag has none (see index_dag_to_tuple_dag)")
            define(key, key)
        else:
            if fmt != _DAG:
                raise DagFormatError(f"{fmt}: the key {show(key)} is not a tuple; every operation of a {fmt} is keyed by the tuple of its outputs")
            define(key, key)

    # index entries: each output of each tuple has exactly one, at the right position
    for key, (fn, args) in entries.items():
        if fn is not index:
            continue
        if len(args) != 2 or not isinstance(args[0], tuple) or not isinstance(args[1], int) or isinstance(args[1], bool):
            raise DagFormatError(f"{fmt}: the index entry of {show(key)} must have args ((outputs...), position), received {args!r:.80}")
        outs, i = args
        if outs not in index_of:
            raise DagFormatError(f"{fmt}: the index entry of {show(key)} reads {show(outs)}, which is not a key")
        if not 0 <= i < len(outs) or not (outs[i] is key or outs[i] == key):
            where = f"position {i} of {show(outs)} is {show(outs[i])}" if 0 <= i < len(outs) else f"{show(outs)} has no position {i}"
            raise DagFormatError(f"{fmt}: the index entries of {show(outs)} disagree: {show(key)} reads position {i}, but {where}")
        index_of[outs][i] = key
    if fmt != _TUPLE:
        for outs, found in index_of.items():
            missing = [show(v) for i, v in enumerate(outs) if i not in found]
            if missing:
                raise DagFormatError(f"{fmt}: the index entries of {show(outs)} disagree with it: none reads {', '.join(missing)}")

    # arguments and dependencies
    deps: dict[Any, list[Any]] = {}
    for key, (fn, args) in entries.items():
        if fn is index:
            deps[key] = [args[0]]
            continue
        needed = []
        for a in args:
            if isinstance(a, tuple):
                raise DagFormatError(
                    f"{fmt}: the argument {show(a)} of {show(key)} is a tuple; use the outputs of an operation through their variables"
                )
            if a in definer:
                needed.append(definer[a])
            elif a not in input_set and not isinstance(a, Constant):
                raise DagFormatError(f"{fmt}: the argument {show(a)} of {show(key)} is not an input and no entry computes it")
        deps[key] = needed
    for o in outputs:
        if o not in definer and o not in input_set and not isinstance(o, Constant):
            raise DagFormatError(f"{fmt}: the output {show(o)} is not an input and no entry computes it")
    return toposort_jobs(deps, fmt)


def derive_io(dag: Any, fmt: str = _DAG) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``(inputs, outputs)`` that a dict implies, for the converters called with the dict alone (seed 001).

    Inputs are the arguments no entry computes (constants define themselves), outputs the computed
    variables no entry uses, each in the order the dict first names them. A graph's own order of
    inputs and outputs cannot be read from the dict: pass them to keep it.

    >>> derive_io({"b": {"fn": "f", "args": ("a",)}, "c": {"fn": "g", "args": ("a", "b")}})
    (('a',), ('c',))
    """
    if not isinstance(dag, Mapping):
        raise DagFormatError(f"{fmt}: expected a dict, received {type(dag).__name__}")
    defined: dict[Any, None] = {}
    used: dict[Any, None] = {}
    for key, entry in dag.items():
        fn, args = _entry(key, entry, fmt)
        if not isinstance(key, tuple):
            defined[key] = None
        elif fmt == _TUPLE:
            defined.update(dict.fromkeys(v for v in key if not isinstance(v, tuple)))
        if fn is index:
            continue  # it reads a tuple key, not a variable
        used.update(dict.fromkeys(a for a in args if not isinstance(a, tuple) and isinstance(a, Hashable)))
    inputs = tuple(a for a in used if a not in defined and not isinstance(a, Constant))
    outputs = tuple(v for v in defined if v not in used)
    return inputs, outputs


def complete_io(dag: Any, inputs: Any, outputs: Any, fmt: str) -> tuple[Any, Any, bool]:
    """``(inputs, outputs, alone)``: those given, the others derived (:func:`derive_io`); ``alone`` if neither was given.

    The converters return the dict alone when they were given the dict alone, as seed 001's library does.
    """
    alone = inputs is None and outputs is None
    if inputs is None or outputs is None:
        derived_inputs, derived_outputs = derive_io(dag, fmt)
        inputs = derived_inputs if inputs is None else inputs
        outputs = derived_outputs if outputs is None else outputs
    return inputs, outputs, alone


# -- dict-level simplifications (seed 001) --------------------------------------------------------
def remove_singleton_indices(dag: Mapping[Any, Any]) -> Dag:
    """Simplify a blown-out index-dag where an operation has a single output.

    ``{(c,): {'fn': op, 'args': args}, c: {'fn': index, 'args': ((c,), 0)}}``
    becomes ``{c: {'fn': op, 'args': args}}``; other entries are kept. Works
    on the dict alone; :func:`index_dag_to_dag` also checks the whole graph.

    >>> remove_singleton_indices({"a": {"fn": index, "args": (("a",), 0)},
    ...                           ("a",): {"fn": "stuff", "args": (1, 2, 3)},
    ...                           "b": {"fn": "blah", "args": ()}})
    {'a': {'fn': 'stuff', 'args': (1, 2, 3)}, 'b': {'fn': 'blah', 'args': ()}}
    """
    out: Dag = {}
    for key, entry in dag.items():
        if isinstance(key, tuple) and len(key) == 1:
            (var,) = key
            got = dag.get(var)
            if got is None or not _is_index(got) or tuple(got.get("args", ())) != (key, 0):
                raise DagFormatError(
                    f"index-dag: the single output {show(var)} of {show(key)} needs the entry "
                    f"{show(var)}: {{'fn': index, 'args': ({show(key)}, 0)}}"
                )
            out[var] = _copy(entry)
        elif not isinstance(key, tuple) and _is_index(entry) and _reads_singleton(entry, key, dag):
            continue
        else:
            out[key] = _copy(entry)
    return out


def _reads_singleton(entry: Mapping[str, Any], key: Any, dag: Mapping[Any, Any]) -> bool:
    args = tuple(entry.get("args", ()))
    return len(args) == 2 and isinstance(args[0], tuple) and args[0] == (key,) and args[0] in dag and args[1] == 0


def insert_single_indices(dag: Mapping[Any, Any]) -> Dag:
    """Blow a dag out: every single-output entry ``c`` becomes ``(c,)`` and an index entry.

    The inverse of :func:`remove_singleton_indices`; works on the dict alone.

    >>> insert_single_indices({"c": {"fn": "op", "args": ("a",)}})
    {('c',): {'fn': 'op', 'args': ('a',)}, 'c': {'fn': index, 'args': (('c',), 0)}}
    """
    out: Dag = {}
    for key, entry in dag.items():
        if isinstance(key, tuple) or _is_index(entry):
            out[key] = _copy(entry)
        else:
            out[(key,)] = _copy(entry)
            out[key] = {"fn": index, "args": ((key,), 0)}
    return out


def _copy(entry: Mapping[str, Any]) -> dict[str, Any]:
    return {"fn": entry["fn"], "args": tuple(entry["args"])}


# -- converters between complete representations ---------------------------------------------------
# Each takes ``(dict, inputs, outputs)`` and returns the same triple in the other format. Called with the
# dict alone, as the functions of seed 001's library are (``tuple_dag_to_index_dag(tdag)``), a converter
# derives inputs and outputs (:func:`derive_io`) and returns the dict alone.
def tuple_dag_to_index_dag(tdag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> Any:
    """Add an index entry for every output of every operation (the "blown out" form)."""
    inputs, outputs, alone = complete_io(tdag, inputs, outputs, _TUPLE)
    check(tdag, inputs, outputs, _TUPLE)
    out: Dag = {}
    for key, entry in tdag.items():
        out[key] = _copy(entry)
        for i, var in enumerate(key):
            out[var] = {"fn": index, "args": (key, i)}
    return out if alone else (out, tuple(inputs), tuple(outputs))


def index_dag_to_tuple_dag(idag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> Any:
    """Remove the index entries of an index-dag (after checking that they agree with their tuples)."""
    inputs, outputs, alone = complete_io(idag, inputs, outputs, _INDEX)
    check(idag, inputs, outputs, _INDEX)
    out = {k: _copy(e) for k, e in idag.items() if not _is_index(e)}
    return out if alone else (out, tuple(inputs), tuple(outputs))


def index_dag_to_dag(idag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> Any:
    """The dag of an index-dag: :func:`remove_singleton_indices`, after checking the index-dag."""
    inputs, outputs, alone = complete_io(idag, inputs, outputs, _INDEX)
    check(idag, inputs, outputs, _INDEX)
    out = remove_singleton_indices(idag)
    return out if alone else (out, tuple(inputs), tuple(outputs))


def dag_to_index_dag(dag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> Any:
    """The index-dag of a dag: :func:`insert_single_indices`, after checking the dag."""
    inputs, outputs, alone = complete_io(dag, inputs, outputs, _DAG)
    check(dag, inputs, outputs, _DAG)
    out = insert_single_indices(dag)
    return out if alone else (out, tuple(inputs), tuple(outputs))


def tuple_dag_to_dag(tdag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> Any:
    """:func:`tuple_dag_to_index_dag` then :func:`index_dag_to_dag`."""
    inputs, outputs, alone = complete_io(tdag, inputs, outputs, _TUPLE)
    out = index_dag_to_dag(*tuple_dag_to_index_dag(tdag, inputs, outputs))
    return out[0] if alone else out


def dag_to_tuple_dag(dag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> Any:
    """:func:`dag_to_index_dag` then :func:`index_dag_to_tuple_dag`."""
    inputs, outputs, alone = complete_io(dag, inputs, outputs, _DAG)
    out = index_dag_to_tuple_dag(*dag_to_index_dag(dag, inputs, outputs))
    return out[0] if alone else out


def _predecessors(entries: Mapping[Any, Any]) -> dict[Any, list[Any]]:
    """For each key of a dag, the keys whose results its arguments use (each once, in order)."""
    keys = set(entries)
    preds: dict[Any, list[Any]] = {}
    for key, entry in entries.items():
        fn, args = entry["fn"], tuple(entry["args"])
        used = [args[0]] if fn is index else [a for a in args if not isinstance(a, tuple) and a in keys]
        preds[key] = list(dict.fromkeys(used))
    return preds


def dag_to_unidag(dag: Mapping[Any, Any], inputs: Any = None, outputs: Any = None) -> Any:
    """``(unidag, jobs, inputs, outputs)``: which job immediately precedes which, and the job table.

    A job is a key of the dag; ``jobs`` (a copy of the dag) says what it runs.
    Every job is a key of the unidag, those that precede nothing with ``()``.
    Called with the dag alone (seed 001's form), it returns the unidag alone.
    """
    inputs, outputs, alone = complete_io(dag, inputs, outputs, _DAG)
    check(dag, inputs, outputs, _DAG)
    unidag: dict[Any, list[Any]] = {key: [] for key in dag}
    for key, preds in _predecessors(dag).items():
        for p in preds:
            unidag[p].append(key)
    result = {k: tuple(v) for k, v in unidag.items()}
    if alone:
        return result
    jobs = {k: _copy(e) for k, e in dag.items()}
    return result, jobs, tuple(inputs), tuple(outputs)


def unidag_to_dag(unidag: Mapping[Any, Any], jobs: Mapping[Any, Any] | None = None, inputs: Any = None,
                  outputs: Any = None) -> Any:
    """The dag of a unidag, given its job table; checks that the two agree.

    A unidag says only which job precedes which, not what a job runs: ``jobs``, the job table (the dag
    whose keys are the jobs), says that. A job that precedes nothing may be left out of the unidag's keys,
    as seed 001's ``{a: (b, c), b: (c,)}`` leaves out ``c``. The unidag's edges must be exactly those the
    jobs' arguments imply; a disagreement raises :class:`DagFormatError` naming the job. Called without
    ``inputs`` and ``outputs``, it derives them and returns the dag alone.

    >>> jobs = {"b": {"fn": "f", "args": ("x",)}, "c": {"fn": "g", "args": ("b",)},
    ...         "a": {"fn": "h", "args": ("b", "c")}}
    >>> unidag_to_dag({"b": ("c", "a"), "c": ("a",)}, jobs) == jobs
    True
    """
    if jobs is None:
        raise DagFormatError(
            "unidag_to_dag: a unidag keeps only the order of its jobs, not what they run; pass the job table too, "
            "the dag whose keys are the jobs: unidag_to_dag(unidag, dag) (dag_to_unidag(dag, inputs, outputs) "
            "returns it as its second item)"
        )
    if not isinstance(unidag, Mapping) or not isinstance(jobs, Mapping):
        raise DagFormatError(f"unidag: expected two dicts, the unidag and its job table, received "
                             f"{type(unidag).__name__} and {type(jobs).__name__}")
    for job, succ in unidag.items():
        if not isinstance(succ, tuple | list):
            raise DagFormatError(f"unidag: the successors of {show(job)} must be a tuple of jobs, received {type(succ).__name__}")
    # the jobs: the keys, and the jobs that only follow others (implicit sinks, seed 001)
    order = {**dict.fromkeys(unidag), **{s: None for succ in unidag.values() for s in succ}}
    full = {job: tuple(unidag.get(job, ())) for job in order}
    missing = [show(k) for k in full if k not in jobs]
    extra = [show(k) for k in jobs if k not in full]
    if missing or extra:
        parts = ([f"the jobs {', '.join(missing)} have no entry in the job table"] if missing else []) + (
            [f"the job table's {', '.join(extra)} appear nowhere in the unidag (neither as a key nor after another job)"]
            if extra else []
        )
        raise DagFormatError(f"unidag: {'; '.join(parts)}")
    toposort_jobs({j: list(s) for j, s in full.items()}, "unidag")
    dag = {k: _copy(jobs[k]) if isinstance(jobs[k], Mapping) and "fn" in jobs[k] and "args" in jobs[k] else jobs[k]
           for k in jobs if k in full}
    inputs, outputs, alone = complete_io(dag, inputs, outputs, _DAG)
    check(dag, inputs, outputs, _DAG)
    implied: dict[Any, set[Any]] = {k: set() for k in dag}
    for key, preds in _predecessors(dag).items():
        for p in preds:
            implied[p].add(key)
    for job, succ in full.items():
        if set(succ) != implied[job]:
            raise DagFormatError(
                f"unidag: the job {show(job)} precedes ({', '.join(show(s) for s in succ)}) in the unidag, but the "
                f"job table makes it precede ({', '.join(show(s) for s in dag if s in implied[job])})"
            )
    return dag if alone else (dag, tuple(inputs), tuple(outputs))


__all__ = [
    "DagCycleError",
    "DagFormatError",
    "check",
    "complete_io",
    "dag_to_index_dag",
    "derive_io",
    "dag_to_tuple_dag",
    "dag_to_unidag",
    "index",
    "index_dag_to_dag",
    "index_dag_to_tuple_dag",
    "insert_single_indices",
    "remove_singleton_indices",
    "show",
    "toposort_jobs",
    "tuple_dag_to_dag",
    "tuple_dag_to_index_dag",
    "unidag_to_dag",
]
