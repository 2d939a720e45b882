"""The moves every stepper shares: ``next()``, ``prev()``, the step kept in range, the browser's "goto" and "move".

A stepper (:class:`~symlab.notebook.stepper.RewriteStepper`, :class:`~symlab.notebook.grad_stepper.GradStepper`)
has a synced Int trait ``step`` from 0 to ``total``; :class:`StepMoves` is how it moves. A "goto" message (a click
on a row, the slider) names a step, and one out of range is ignored; a "move" message names a direction: ``first``,
``prev``, ``next`` or ``last``. Setting ``step`` out of range is an error that says the range.

>>> import traitlets
>>> class Pages(StepMoves, traitlets.HasTraits):
...     step = traitlets.Int(0)
...     total = traitlets.Int(3)
>>> pages = Pages()
>>> pages._on_move({"direction": "last"}); pages.prev(); pages.step
2
>>> pages._on_goto({"step": 7}); pages._on_goto({"step": True}); pages.step
2
>>> pages.step = 4
Traceback (most recent call last):
...
traitlets.traitlets.TraitError: Pages.step must be in 0..3 (0: the start), received 4
"""

from __future__ import annotations

from typing import Any

import traitlets

__all__ = ["StepMoves"]


class StepMoves:
    """``next``/``prev`` and the "goto"/"move" messages of a widget with Int traits ``step`` and ``total``."""

    step: int
    total: int
    #: What step 0 shows (said when a step is out of range).
    _step_zero = "the start"

    def next(self) -> None:
        """Go to the next step (at the last one, stay)."""
        if self.step < self.total:
            self.step += 1

    def prev(self) -> None:
        """Go to the previous step (at step 0, stay)."""
        if self.step > 0:
            self.step -= 1

    @traitlets.validate("step")
    def _valid_step(self, proposal: Any) -> int:
        k = proposal["value"]
        if not 0 <= k <= self.total:
            raise traitlets.TraitError(f"{type(self).__name__}.step must be in 0..{self.total} (0: {self._step_zero}), "
                                       f"received {k}")
        return k

    def _on_goto(self, content: dict[str, Any]) -> None:
        target = content.get("step")
        if isinstance(target, int) and not isinstance(target, bool) and 0 <= target <= self.total:
            self.step = target

    def _on_move(self, content: dict[str, Any]) -> None:
        moves = {"next": self.next, "prev": self.prev, "first": lambda: setattr(self, "step", 0),
                 "last": lambda: setattr(self, "step", self.total)}
        action = moves.get(content.get("direction"))
        if action is not None:
            action()
