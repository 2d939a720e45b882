"""The foundation of symlab's widgets: one anywidget class whose JavaScript and CSS ship with the package.

Every view (:class:`~symlab.notebook.graph_view.GraphView`, and the views built on it) is a
:class:`ViewWidget`. The browser half, one ES module put together from the parts in ``static/views/``
(:data:`VIEWS_SCRIPT`, :func:`views_script`), shows the pictures Python draws and sends each click or key
as one message; Python answers with every trait that changed, set together in one
message, and bumps :attr:`ViewWidget.drawn`, the count of answers, which the browser mirrors as a
``data-drawn`` attribute (what a test waits for). Nothing is fetched from the network: the script
and the styles are read from the package when the first widget is made.

A widget's ``__repr__`` is deterministic and its display bundle has a ``text/markdown`` summary, so
a notebook opened untrusted, on GitHub or in nbval shows what the widget shows, in words, followed by
its current pictures as PNG images (JupyterLab shows those in an untrusted notebook; it hides SVG).
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from functools import cache
from importlib import resources
from typing import Any

import anywidget
import traitlets

from symlab.notebook import lifetime

__all__ = ["VIEWS_SCRIPT", "ViewWidget", "code_span", "picture", "static_file", "views_script"]

#: The parts of the views' script (``static/views/``), in the order they are put together into one ES module
#: (anywidget's ``_esm`` is one string): each part declares top-level constants, functions and classes for the
#: parts after it (nothing runs at load but the declarations), and the last, ``main.js``, holds the module's one
#: ``export default`` (its ``render``, which picks the view a widget names).
VIEWS_SCRIPT = (
    "sanitise.js",  # parsing Python's SVG safely
    "dom.js",  # elements, checkboxes, buttons, icons
    "kernel.js",  # is the kernel still there?
    "picture.js",  # a picture: fit, zoom, pan, minimap, click, reveal, marks
    "panels.js",  # the details panel
    "inspector.js",  # the clients inspector's parts
    "search.js",  # the search box
    "text_pane.js",  # the text twin
    "graph_view.js",  # the graph view and the clients inspector
    "step_controls.js",  # a stepper's controls: first, previous, slider, next, last, play; the keys
    "stepper.js",  # the rewrite stepper
    "values.js",  # the values view
    "grad_stepper.js",  # the grad stepper
    "main.js",  # export default { render }
)


@cache
def static_file(name: str) -> str:
    """The text of ``symlab/notebook/static/<name>`` (shipped as package data; ``name`` may hold ``/``)."""
    return resources.files("symlab.notebook").joinpath("static", *name.split("/")).read_text(encoding="utf-8")


@cache
def views_script() -> str:
    """The views' ES module: the parts of :data:`VIEWS_SCRIPT` put together, in that order, a blank line apart.

    >>> script = views_script()
    >>> script.count("export default"), script.startswith("// views/sanitise.js")
    (1, True)
    """
    return "\n".join(static_file(f"views/{name}") for name in VIEWS_SCRIPT)


def picture(model: Any, notes: tuple[str, ...] = ()) -> str:
    """The SVG of a :class:`~symlab.printing.model.GraphModel` (with ``notes`` under it); ``""`` without Graphviz."""
    from symlab.printing.diagram import to_dot
    from symlab.printing.render import to_svg

    source = to_dot(model, notes=notes).source
    try:
        return to_svg(source, timeout=60.0)
    except Exception:  # no renderer: the widget's text still works
        return ""


def code_span(text: str, table: bool = True) -> str:
    """``text`` as a Markdown code span: shown literally, whatever it holds (HTML in a code span is text).

    A code span is one line: line breaks become spaces. Its fence is one backtick longer than the longest
    run of backticks in ``text`` (a shorter one would end the span early, and what follows would be
    Markdown, HTML included), padded with a space on each side when ``text`` starts or ends with a
    backtick or a space (CommonMark strips one space from each side). In a table cell (``table=True``)
    each ``|`` is written ``\\|``, which GFM renderers (GitHub, JupyterLab) show as ``|`` and which does not
    end the cell; a backslash just before a ``|`` is kept apart from it by a word joiner (U+2060, invisible),
    else the two would read as an escaped backslash and the ``|`` would end the cell. Outside tables
    (``table=False``) nothing is escaped.

    >>> print(code_span("<b>|x|</b>"), code_span("a`b"), code_span("a``b|c", table=False))
    `<b>\\|x\\|</b>` `` a`b `` ``` a``b|c ```
    """
    text = " ".join(str(text).splitlines())
    if table:
        text = text.replace("\\|", "\\\u2060|").replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    if longest or text[:1] in ("`", " ") or text[-1:] in ("`", " "):
        return f"{fence} {text} {fence}"
    return f"{fence}{text}{fence}"


class ViewWidget(anywidget.AnyWidget):
    """A symlab view: the views' script (:func:`views_script`) draws it in the browser, Python answers its messages."""

    _esm = views_script()
    _css = static_file("views.css")

    #: Which view the script draws (``"graph"``, ...).
    view = traitlets.Unicode("graph").tag(sync=True)
    #: How many answers Python has sent; the browser draws when it changes.
    drawn = traitlets.Int(0).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.on_msg(self._on_browser_message)
        lifetime.hold(self)  # the running cell made it: running that cell again closes it (lifetime.py)

    def close(self) -> None:
        """Close the widget and the ``Layout`` widget ipywidgets made for it (its own ``close`` leaves that
        one open, registered for good: about 7 KB a view, measured over 1,000 views), and drop it from
        IPython's output history (``Out[n]``, ``_``), where a closed view would keep its pictures and graph."""
        layout = self._trait_values.get("layout")  # read without creating one
        model_id = getattr(self, "_model_id", None)  # None: the constructor failed before opening a comm
        super().close()
        if layout is not None:
            layout.close()
        lifetime.forget_output(self, model_id)

    # -- answering -------------------------------------------------------------------------------
    @contextmanager
    def answer(self) -> Any:
        """Set traits inside the block; they reach the browser as one message, with ``drawn`` bumped."""
        with self.hold_sync():
            yield self
            self.drawn = self.drawn + 1

    def _on_browser_message(self, widget: Any, content: Any, buffers: Any) -> None:
        if not isinstance(content, dict) or not isinstance(content.get("type"), str):
            return
        handler = getattr(self, f"_on_{content['type']}", None)
        try:
            if handler is not None:
                handler(content)
        except Exception as err:  # the browser cannot see a Python traceback: say what went wrong
            with self.answer():
                self.notice = f"{type(err).__name__}: {err}"
        finally:  # every message heard gets an answer, drawn or not: the browser knows its kernel is alive
            self.send({"type": "ack"})

    # -- pictures ------------------------------------------------------------------------------------
    def show_picture(self, slot: str, model: Any, notes: tuple[str, ...] = ()) -> str:
        """The SVG of ``model`` for the picture ``slot`` of the view; kept for the Markdown fallback's PNG."""
        pictures = self.__dict__.setdefault("_pictures", {})
        pictures.pop(slot, None)  # the pictures in the order they were last drawn: a stepper's before, then after
        pictures[slot] = (model, tuple(notes))
        return picture(model, notes)

    def hide_picture(self, slot: str) -> str:
        """Empty the picture ``slot`` (``""``, what the browser shows as no picture)."""
        self.__dict__.setdefault("_pictures", {}).pop(slot, None)
        return ""

    def pictures_markdown(self) -> str:
        """The view's current pictures as Markdown images (PNG data), for where the widget cannot run."""
        from symlab.printing.diagram import to_dot
        from symlab.printing.render import to_png_base64

        images = []
        for slot, model, options in self._fallback_pictures():
            try:
                data = to_png_base64(to_dot(model, **options).source, timeout=30.0)
            except Exception:  # no renderer: the words are the display
                continue
            images.append(f"![{slot} picture](data:image/png;base64,{data})")
        return "\n\n".join(images)

    def _fallback_pictures(self) -> list[tuple[str, Any, dict[str, Any]]]:
        """The pictures :meth:`pictures_markdown` shows, as ``(slot, model, options of to_dot)``: the ones
        :meth:`show_picture` kept, with their notes."""
        return [(slot, model, {"notes": notes}) for slot, (model, notes) in self.__dict__.get("_pictures", {}).items()]

    # -- displays ----------------------------------------------------------------------------------
    def summary(self) -> str:
        """One line saying what the widget shows (its ``__repr__``)."""
        return type(self).__name__

    def markdown(self) -> str:
        """What the widget shows, as Markdown (shown where widgets are not)."""
        return self.summary()

    def __repr__(self) -> str:
        return self.summary()

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, metadata = bundle
        lifetime.hold(self)  # the running cell shows it: it stays open while some cell's output does
        images = self.pictures_markdown()
        data["text/markdown"] = self.markdown().rstrip("\n") + ("\n\n" + images + "\n" if images else "\n")
        return data, metadata
