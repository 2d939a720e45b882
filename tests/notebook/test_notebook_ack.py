"""Every message from the browser gets an answer: the browser's test that its kernel is still there.

The browser half (``static/views/kernel.js``) marks a view "lost its kernel" when a message it sent gets no answer
within about 3 s. Python answers most messages with a new picture (``drawn`` bumped); the others (a message that
changes nothing, an unknown one, one whose handler fails) must still answer, with a ``{"type": "ack"}``.
"""

from __future__ import annotations

from typing import Any

import pytest

import symlab.tensor as st
from symlab.notebook import GraphView


@pytest.fixture
def view() -> Any:
    x, y = st.dvector("x"), st.dvector("y")
    widget = GraphView(st.exp(x) * y + x, style="compact")
    sent: list[Any] = []
    widget.send = lambda content, buffers=None: sent.append(content)  # what would reach the browser
    widget.sent = sent
    yield widget
    widget.close()


@pytest.mark.parametrize("message", [
    {"type": "select", "key": "v0"},  # answered with a picture
    {"type": "move", "direction": "up"},  # nothing selected above: no picture
    {"type": "select", "key": "no such key"},  # refused quietly
    {"type": "no such message"},  # a message this Python does not know
])
def test_every_message_is_acknowledged_once(view, message):
    view._on_browser_message(view, message, [])
    assert view.sent == [{"type": "ack"}]


def test_a_failing_handler_says_why_and_acknowledges(view, monkeypatch):
    def fail(content: Any) -> None:
        raise RuntimeError("broken on purpose")

    monkeypatch.setattr(view, "_on_style", fail)
    drawn = view.drawn
    view._on_browser_message(view, {"type": "style", "style": "compact"}, [])
    assert view.notice == "RuntimeError: broken on purpose" and view.drawn == drawn + 1
    assert view.sent == [{"type": "ack"}]


def test_what_is_not_a_message_gets_no_answer(view):
    view._on_browser_message(view, ["not", "a", "dict"], [])
    view._on_browser_message(view, {"type": 3}, [])
    assert view.sent == []
