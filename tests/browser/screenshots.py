"""Reading the browser tests' screenshots: Chromium's PNGs decoded with zlib and NumPy (Pillow is not a dependency)."""

from __future__ import annotations

import struct
import zlib

import numpy as np

__all__ = ["decode_png", "ink"]


def decode_png(data: bytes) -> np.ndarray:
    """The RGB pixels (h, w, 3) of an 8-bit non-interlaced RGB or RGBA PNG, the kind Chromium's screenshots are."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", data[pos + 8:pos + 8 + length])
        elif kind == b"IDAT":
            idat.append(data[pos + 8:pos + 8 + length])
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and not interlace, header
    bpp = 3 if colour == 2 else 4
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, 1 + width * bpp)
    rows = np.zeros((height, width * bpp), dtype=np.int64)
    above = np.zeros(width * bpp, dtype=np.int64)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        if kind == 0:
            row = line
        elif kind == 1:  # Sub: a running sum along each channel
            row = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif kind == 2:  # Up
            row = (line + above) % 256
        else:  # Average (3) or Paeth (4): each pixel needs the one decoded before it
            row = np.zeros_like(line)
            for x in range(0, width * bpp, bpp):
                a = row[x - bpp:x] if x else np.zeros(bpp, dtype=np.int64)
                b = above[x:x + bpp]
                if kind == 3:
                    row[x:x + bpp] = (line[x:x + bpp] + (a + b) // 2) % 256
                else:
                    c = above[x - bpp:x] if x else np.zeros(bpp, dtype=np.int64)
                    p = a + b - c
                    pa, pb, pc = np.abs(p - a), np.abs(p - b), np.abs(p - c)
                    pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
                    row[x:x + bpp] = (line[x:x + bpp] + pred) % 256
        rows[y] = row
        above = row
    return rows.reshape(height, width, bpp)[:, :, :3].astype(np.uint8)


def ink(pixels: np.ndarray) -> float:
    """The share of pixels that differ clearly from the background (the commonest colour)."""
    flat = pixels.reshape(-1, 3).astype(np.int32)
    packed = (flat[:, 0] << 16) | (flat[:, 1] << 8) | flat[:, 2]
    values, counts = np.unique(packed, return_counts=True)
    bg = values[np.argmax(counts)]
    background = np.array([(bg >> 16) & 255, (bg >> 8) & 255, bg & 255])
    return float((np.abs(flat - background).max(axis=1) > 24).mean())
