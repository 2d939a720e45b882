"""A bar chart as a PNG, drawn with NumPy and encoded with zlib: the picture an untrusted notebook shows.

JupyterLab hides SVG in an untrusted notebook and shows a PNG instead; a histogram (:mod:`symlab.notebook.histogram`)
stores both. Bars and lines only, no text (the text of the display says what the picture is), so no font and no
plotting library is needed.

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


__all__ = ["PNG_SIGNATURE", "bars_png", "encode_png"]
