"""A bar chart as a PNG, drawn with NumPy and encoded with zlib: the picture an untrusted notebook shows.

JupyterLab hides SVG in an untrusted notebook and shows a PNG instead; a histogram (:mod:`symlab.notebook.histogram`)
stores both. Bars and lines only, no text (the text of the display says what the picture is), so no font and no
plotting library is needed. :func:`lines_png` draws the lines of a loop's states across its iterations
(:mod:`symlab.notebook.loop_values`).

>>> png = bars_png([0.25, 1.0, 0.5], width=40, height=20, mean=0.5)
>>> png[:8] == PNG_SIGNATURE, png[12:16]
(True, b'IHDR')
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence

import numpy as np

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(pixels: np.ndarray) -> bytes:
    """The PNG file of an ``(height, width, 3)`` array of uint8 RGB pixels."""
    height, width, _ = pixels.shape
    rows = np.zeros((height, 1 + 3 * width), dtype=np.uint8)  # filter byte 0 (none) before each row
    rows[:, 1:] = pixels.reshape(height, 3 * width)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 9)) + _chunk(b"IEND", b"")


def bars_png(heights: Sequence[float], *, width: int = 360, height: int = 110, mean: float | None = None,
             bar: str = "#4c6ef5", axis: str = "#495057", mean_colour: str = "#e8590c") -> bytes:
    """Bars of the given heights (fractions of the tallest, 0 to 1) side by side, a base line, and, at ``mean``
    (a fraction of the width of the bars), a dashed vertical line."""
    margin = 8
    pixels = np.full((height, width, 3), 255, dtype=np.uint8)
    plot_w, plot_h = width - 2 * margin, height - 2 * margin
    n = max(len(heights), 1)
    for k, h in enumerate(heights):
        x0 = margin + round(k * plot_w / n)
        x1 = max(margin + round((k + 1) * plot_w / n) - 1, x0 + 1)
        top = margin + plot_h - round(plot_h * min(max(float(h), 0.0), 1.0))
        pixels[top: margin + plot_h, x0:x1] = _rgb(bar)
    pixels[margin + plot_h, margin: margin + plot_w] = _rgb(axis)
    if mean is not None and 0.0 <= mean <= 1.0:
        x = min(margin + round(mean * plot_w), width - 1)
        for y in range(margin, margin + plot_h, 7):
            pixels[y: min(y + 4, margin + plot_h), x] = _rgb(mean_colour)
    return encode_png(pixels)


def _segment(pixels: np.ndarray, x0: float, y0: float, x1: float, y1: float, rgb: tuple[int, int, int]) -> None:
    """A straight line from ``(x0, y0)`` to ``(x1, y1)`` (pixels), one pixel wide."""
    n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
    xs = np.rint(np.linspace(x0, x1, n + 1)).astype(int)
    ys = np.rint(np.linspace(y0, y1, n + 1)).astype(int)
    pixels[ys, xs] = rgb


def plot_area(width: int, height: int, margin: int = 8) -> tuple[int, int, int, int]:
    """``(left, top, plot width, plot height)`` of a :func:`lines_png` picture: where its points are drawn."""
    return margin, margin, width - 2 * margin, height - 2 * margin


def lines_png(series: Sequence[Sequence[float]], colours: Sequence[str], *, width: int = 360, height: int = 110,
              marker: float | None = None, axis: str = "#495057", marker_colour: str = "#e8590c") -> bytes:
    """Lines through the points of each of ``series`` (heights as fractions of the plot, 0 bottom to 1 top; NaN
    leaves a gap), spread evenly over the width, each in its colour of ``colours`` (cycled); a base line, and at
    ``marker`` (a fraction of the width) a dashed vertical line.

    Point ``k`` of ``n`` is at ``x = left + k * (plot width - 1) / (n - 1)`` and ``y = top + (1 - h) * (plot height
    - 1)`` (:func:`plot_area`), rounded.

    >>> png = lines_png([[0.0, 1.0]], ["#4c6ef5"], width=30, height=20)
    >>> png[:8] == PNG_SIGNATURE
    True
    """
    left, top, plot_w, plot_h = plot_area(width, height)
    pixels = np.full((height, width, 3), 255, dtype=np.uint8)
    pixels[top + plot_h, left: left + plot_w] = _rgb(axis)
    if marker is not None and 0.0 <= marker <= 1.0:
        x = left + round(marker * (plot_w - 1))
        for y in range(top, top + plot_h, 7):
            pixels[y: min(y + 4, top + plot_h), x] = _rgb(marker_colour)
    for k, points in enumerate(series):
        rgb = _rgb(colours[k % len(colours)])
        heights = np.clip(np.asarray(points, dtype=float), 0.0, 1.0)
        n = len(heights)
        xs = [left + (i * (plot_w - 1) / (n - 1) if n > 1 else (plot_w - 1) / 2) for i in range(n)]
        ys = [top + (1.0 - h) * (plot_h - 1) for h in heights]
        for i in range(n):
            if np.isnan(ys[i]):
                continue
            if i + 1 < n and not np.isnan(ys[i + 1]):
                _segment(pixels, xs[i], ys[i], xs[i + 1], ys[i + 1], rgb)
            else:
                pixels[round(ys[i]), round(xs[i])] = rgb
    return encode_png(pixels)


__all__ = ["PNG_SIGNATURE", "bars_png", "encode_png", "lines_png", "plot_area"]
