"""A Jupyter server extension that answers widgets at once: its websockets send without Nagle's delay.

Jupyter Server's websocket to the browser does not set ``TCP_NODELAY``. A kernel's answer to a widget
message is several small websocket frames (the comm message, the kernel's busy and idle status), and with
Nagle's algorithm each small frame after the first waits for the browser to acknowledge the last one,
which the browser delays by about 40 ms (delayed ACK). Measured in JupyterLab and Chromium on this machine,
an anywidget that only echoes a message: 44-50 ms a round trip without this extension, 4-10 ms with it;
a click on a symlab view, action to painted: about 75 ms without it (the issue's target is 50 ms).

The extension makes every websocket stream the server opens send at once (``set_nodelay(True)``, what
Tornado's documentation advises for interactive websockets). ``make lab`` enables it through
``jupyter/jupyter_server_config.d/symlab.json`` (installed in the venv's ``etc/jupyter``); the browser tests
and ``make bench`` start their servers with the same file.

>>> import tornado.websocket
>>> _load_jupyter_server_extension(None)
>>> tornado.websocket.WebSocketHandler._detach_stream.__name__
'_detach_stream_without_delay'
"""

from __future__ import annotations

from typing import Any

__all__: list[str] = []


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "symlab.notebook.server_extension"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    """Patch Tornado's websocket handler once: the streams it detaches for websockets get ``TCP_NODELAY``."""
    import tornado.websocket

    handler = tornado.websocket.WebSocketHandler
    if handler._detach_stream.__name__ == "_detach_stream_without_delay":
        return
    detach = handler._detach_stream

    def _detach_stream_without_delay(self: Any) -> Any:
        stream = detach(self)
        stream.set_nodelay(True)
        return stream

    handler._detach_stream = _detach_stream_without_delay
    if serverapp is not None:
        serverapp.log.info("symlab: websocket frames are sent without Nagle's delay (TCP_NODELAY)")
