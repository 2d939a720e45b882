"""Backpropagation through time for ``Scan`` (being written: issue 34)."""

from __future__ import annotations

from typing import Any


def scan_lop(op: Any, inputs: list, outputs: list, output_grads: list) -> list:
    raise NotImplementedError(f"{op.where}: the gradient of a loop is not written yet")


def scan_rop(op: Any, inputs: list, eval_points: list) -> list:
    raise NotImplementedError(f"{op.where}: the forward derivative of a loop is not written yet")
