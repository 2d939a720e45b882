"""The rewrite database: rules by name, tags and phase, and ``rewrite_graph``.

Each rule is registered under one stable name, with tags. The phases run in
order, each to a fixed point: ``canonicalize`` (0), ``stabilize`` (1),
``specialize`` (2), ``fusion`` (3), ``inplace`` (4). A rule of a phase is part
of the ``fast_run`` query, unless tagged ``optional``: such a rule (``cancel_factors``, tagged
``unsafe``) is selected only by its name or its own tags, never by its phase; ``fast_compile`` takes
only the rules tagged ``fast_compile`` (merge, constant folding, a few cheap
canonicalizations, and the ``logistic`` stabilizations: a fast compile must not give NaN where the
default gives numbers). ``include`` and ``exclude`` accept rule names and tags, and PyTensor's names of
the rules symlab has under another name (:mod:`symlab.rewriting.aliases`); :meth:`RewriteDatabase.resolve`
checks them:

>>> import symlab.tensor as T
>>> from symlab.rewriting import PatternNodeRewriter, register, rewrite_graph
>>> _ = register(PatternNodeRewriter((T.true_div, (T.mul, "x", "y"), "y"), "x"), "canonicalize", name="demo_mul_div")
>>> x, y = T.dvectors("x", "y")
>>> out, trace = rewrite_graph(x * y / y, include=("canonicalize",), exclude=("mul_div",))  # the standard rule
>>> out is trace.fgraph.inputs[0], [s.rule for s in trace]
(True, ['demo_mul_div'])
>>> out, trace = rewrite_graph(x * y / y, include=("canonicalize",), exclude=("demo_mul_div", "mul_div"))
>>> str(out.owner.op)
'Elemwise{true_div,no_inplace}'
>>> default_db.remove("demo_mul_div")

Registering another rule under a name already taken replaces the old rule (a
notebook cell can be edited and run again).
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

from symlab.config import config
from symlab.graph.basic import Constant, Variable
from symlab.graph.fg import FunctionGraph
from symlab.graph.gc_pause import gc_paused
from symlab.graph.traversal import graph_inputs
from symlab.rewriting.aliases import PYTENSOR_NAMES, expand_aliases
from symlab.rewriting.basic import EquilibriumGraphRewriter, GraphRewriter, NodeRewriter, Rewriter
from symlab.rewriting.context import RewriteContext
from symlab.rewriting.steps import RewriteRecipe
from symlab.rewriting.trace import RewriteTrace

#: The standard phases and their default positions.
PHASES: dict[str, float] = {"canonicalize": 0, "stabilize": 1, "specialize": 2, "fusion": 3, "inplace": 4}

#: Tags with a meaning for queries (besides the phase names).
QUERY_TAGS = ("fast_run", "fast_compile", "optional")


@dataclass
class RewriteEntry:
    """A registered rule: its ``name``, ``tags``, ``phase`` and ``position``."""

    name: str
    rewriter: Rewriter
    tags: frozenset[str]
    phase: str
    position: float
    order: int

    @property
    def words(self) -> frozenset[str]:
        """What ``include``/``exclude`` can select this entry by: its name, tags and implied tags."""
        if "optional" in self.tags:  # only by its name or its own tags, never by its phase or fast_run
            return (self.tags - {self.phase}) | {self.name}
        return self.tags | {self.phase, "fast_run", self.name}


class Phase(NamedTuple):
    """One group of rules that run together to a fixed point."""

    name: str
    position: float
    entries: list[RewriteEntry]

    def rewriter(self, max_use_ratio: float = 10.0) -> EquilibriumGraphRewriter:
        return EquilibriumGraphRewriter([e.rewriter for e in self.entries], max_use_ratio=max_use_ratio,
                                        name=self.name)


class RewriteDatabase:
    """Rules by name, with tags, grouped in ordered phases (see the module's docstring)."""

    def __init__(self) -> None:
        self._entries: dict[str, RewriteEntry] = {}
        self._counter = 0

    # -- registering -------------------------------------------------------------------------------
    def register(
        self, rewriter: Rewriter, *tags: str, name: str | None = None, position: float | None = None
    ) -> Rewriter:
        """Add ``rewriter`` under ``name`` (default: its own name) with ``tags``; return it.

        The first phase name among the tags is its phase (default
        ``canonicalize``); ``position`` places it between phases (default: the
        phase's position). A rule already registered under the name is replaced.
        Registered under a name other than its own, the rule is a copy that
        carries the name (what the trace shows); the registered rule is returned.
        """
        if not isinstance(rewriter, NodeRewriter | GraphRewriter):
            raise TypeError(f"register: expected a NodeRewriter or GraphRewriter, received {rewriter!r}")
        for t in tags:
            if not isinstance(t, str) or not t:
                raise TypeError(f"register: tags are non-empty strings, received {t!r}")
        name = name or rewriter.name
        if not isinstance(name, str) or not name:
            raise TypeError(f"register: the name must be a non-empty string, received {name!r}")
        if name in PHASES or name in QUERY_TAGS:
            raise ValueError(f"register: {name!r} is a phase or query tag, not a usable rule name")
        phases = [t for t in tags if t in PHASES]
        if len(phases) > 1:
            raise ValueError(f"register: rule {name} is tagged with several phases {phases}")
        phase = phases[0] if phases else "canonicalize"
        if position is None:
            position = PHASES[phase]
        if rewriter.name != name:
            rewriter = copy.copy(rewriter)  # the trace shows the registered name; the caller's object is left alone
            rewriter.name = name
        previous = self._entries.get(name)
        order = previous.order if previous is not None else self._counter
        self._counter += 1
        self._entries[name] = RewriteEntry(name, rewriter, frozenset(tags) | {phase}, phase, float(position), order)
        return rewriter

    def remove(self, name: str) -> None:
        """Remove the rule registered under ``name``."""
        if name not in self._entries:
            raise KeyError(f"no rule named {name!r} in the database")
        del self._entries[name]

    # -- reading ---------------------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __getitem__(self, name: str) -> RewriteEntry:
        return self._entries[name]

    def __iter__(self):
        return iter(sorted(self._entries.values(), key=lambda e: (e.position, e.order)))

    def __len__(self) -> int:
        return len(self._entries)

    def names(self) -> list[str]:
        return [e.name for e in self]

    def query(self, include: Iterable[str] = ("fast_run",), exclude: Iterable[str] = ()) -> list[Phase]:
        """The selected rules, grouped by position into phases, in order.

        A rule is selected if its name or one of its tags is in ``include``
        and none is in ``exclude``. An ``include`` word that names nothing
        known raises ``ValueError`` (a typo would otherwise select nothing).
        """
        include = frozenset(self.resolve(include, "include"))
        exclude = frozenset(expand_aliases(query_words(exclude, "exclude"), self._entries))
        entries = list(self)
        groups: dict[float, list[RewriteEntry]] = {}
        for e in entries:
            words = e.words
            if words & include and not words & exclude:
                groups.setdefault(e.position, []).append(e)
        phases = []
        for position in sorted(groups):
            group = groups[position]
            phase = group[0].phase
            name = phase if PHASES[phase] == position else f"{phase}@{position:g}"
            phases.append(Phase(name, position, group))
        return phases

    def known_words(self) -> set[str]:
        """Every word ``include``/``exclude`` select rules by: rule names, tags, phases and query tags."""
        known = set(PHASES) | set(QUERY_TAGS)
        for e in self:
            known |= e.words
        return known

    def resolve(self, words: Iterable[str], what: str = "include") -> tuple[str, ...]:
        """``words`` with PyTensor's names replaced by symlab's (:mod:`symlab.rewriting.aliases`).

        A word that is no rule name, no tag and no alias of rules of this database raises
        ``ValueError``, which names it and the closest known words (a typo would otherwise select
        or exclude nothing, silently):

        >>> default_db.resolve(["local_elemwise_fusion", "inplace"], "exclude")
        ('elemwise_fusion', 'inplace')
        >>> default_db.resolve(["elemwise_fusoin"], "exclude")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: exclude: ['elemwise_fusoin'] name no rule or tag ...; closest: 'elemwise_fusion'...
        """
        words = query_words(words, what)
        known = self.known_words()
        unknown = [w for w in words if w not in known and not (w in PYTENSOR_NAMES and set(PYTENSOR_NAMES[w]) <= known)]
        if unknown:
            choices = sorted(known | {a for a, names in PYTENSOR_NAMES.items() if set(names) <= known})
            hints = []
            for w in unknown:
                close = difflib.get_close_matches(w, choices, n=3, cutoff=0.6)
                hints.append(f"closest: {', '.join(map(repr, close))}" if close else f"nothing close to {w!r}")
            raise ValueError(
                f"{what}: {unknown} name no rule or tag (nor a PyTensor name symlab has an alias for); "
                f"{'; '.join(hints)}; tags: {sorted(known - set(self._entries))}; rule names: "
                f"{'symlab.rewriting.default_db' if self is default_db else 'the database'}.names()"
            )
        return expand_aliases(words, self._entries)


def query_words(words: Iterable[str], what: str) -> tuple[str, ...]:
    """``include``/``exclude`` words as a tuple of strings (a single string is one word)."""
    if isinstance(words, str):
        words = (words,)
    out = tuple(words)
    for w in out:
        if not isinstance(w, str):
            raise TypeError(f"{what}: expected rule names or tags (strings), received {w!r}")
    return out


#: The database ``register`` adds to and ``rewrite_graph`` reads; :mod:`symlab.rewriting.rules` registers the
#: standard rules in it, and ``import symlab.rewriting`` imports that package.
default_db = RewriteDatabase()


@overload
def register(rewriter: Rewriter, *tags: str, name: str | None = None, position: float | None = None) -> Rewriter: ...
@overload
def register(rewriter: str, *tags: str, name: str | None = None,
             position: float | None = None) -> Callable[[Rewriter], Rewriter]: ...
def register(rewriter: Any, *tags: str, name: str | None = None, position: float | None = None) -> Any:
    """Add a rule to the default database (see :meth:`RewriteDatabase.register`).

    With a tag instead of a rewriter as first argument it is a decorator:
    ``@register("canonicalize")`` above ``@node_rewriter([...])``.
    """
    if isinstance(rewriter, str):
        all_tags = (rewriter, *tags)
        return lambda rw: default_db.register(rw, *all_tags, name=name, position=position)
    return default_db.register(rewriter, *tags, name=name, position=position)



def rewrite_fgraph(
    fgraph: FunctionGraph,
    include: Iterable[str] = ("fast_run",),
    exclude: Iterable[str] = (),
    record: bool = True,
    db: RewriteDatabase | None = None,
    max_use_ratio: float = 10.0,
    record_attempts: bool = False,
) -> RewriteTrace | None:
    """Rewrite ``fgraph`` in place with the selected rules, phase by phase; return the trace.

    ``record_attempts=True`` also keeps every rule tried on every node, matched or not
    (``trace.attempts``: why a rule did not apply somewhere). Without it, the trace keeps how it was
    asked for (``trace.recipe``), and ``trace.record_attempts()`` learns the attempts when they are wanted.
    """
    include, exclude = query_words(include, "include"), query_words(exclude, "exclude")  # kept in the recipe
    phases = (db or default_db).query(include, exclude)
    with gc_paused():
        trace = RewriteTrace(fgraph) if record else None
        if trace is not None:
            trace.recipe = RewriteRecipe(include, exclude, db or default_db, max_use_ratio, rewrite_fgraph)
            if record_attempts:
                trace.attempts = {}
        with RewriteContext(fgraph, trace) as ctx:
            for phase in phases:
                ctx.phase = phase.name
                ctx.run(phase.rewriter(max_use_ratio))
    if trace is not None and config.optimizer_verbose:
        print_replacements(trace)
    return trace


def print_replacements(trace: RewriteTrace) -> None:
    """Print each replacement of the accepted steps, as PyTensor's ``optimizer_verbose`` flag does."""
    for step in trace.steps:
        if step.accepted:
            for old, new in step.replacements:
                print(f"rewriting: rewrite {step.rule} replaces {old} of {old.owner} with {new} of {new.owner}")


def rewrite_graph(
    outputs: Variable | Sequence[Variable],
    include: Iterable[str] = ("fast_run",),
    exclude: Iterable[str] = (),
    clone: bool = True,
    *,
    inputs: Sequence[Variable] | None = None,
    record: bool = True,
    features: Iterable[Any] = (),
    db: RewriteDatabase | None = None,
    max_use_ratio: float = 10.0,
    record_attempts: bool = False,
) -> tuple[Any, RewriteTrace | None]:
    """Rewrite the graph of ``outputs``; return the new outputs and the trace.

    The graph goes into a :class:`FunctionGraph` (a copy, with ``clone=True``)
    whose inputs are ``inputs`` or the free variables of ``outputs``, with the
    extra ``features``. The result is a variable for a variable, a list for a
    list; ``trace.fgraph`` is the rewritten graph (``trace`` is ``None`` when
    ``record=False``).
    """
    single = isinstance(outputs, Variable)
    outs = [outputs] if single else list(outputs)
    if inputs is None:
        inputs = [v for v in graph_inputs(outs) if not isinstance(v, Constant)]
    fgraph = FunctionGraph(inputs, outs, clone=clone, features=features)
    trace = rewrite_fgraph(fgraph, include, exclude, record=record, db=db, max_use_ratio=max_use_ratio,
                           record_attempts=record_attempts)
    new_outputs = list(fgraph.outputs)
    return (new_outputs[0] if single else new_outputs), trace
