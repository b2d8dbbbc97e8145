#!/usr/bin/env python3
"""Draws the pictures of config/stories/olive-the-owl.json from simple shapes, as PNG files, with nothing
but the standard library (zlib). Made for this project; released under CC0 1.0 (public domain), as the
story is. Run again to redraw them: scripts/draw-story-pictures.py [folder]."""
import math
import struct
import sys
import zlib
from pathlib import Path

W, H = 480, 360


def png(pixels, width, height):
    raw = b"".join(b"\x00" + bytes(pixels[y * width * 3:(y + 1) * width * 3]) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


class Canvas:
    def __init__(self, background):
        self.pixels = bytearray(background * (W * H))

    def fill(self, inside, colour):
        # Supersampled edges (4 samples a pixel) so that shapes are not jagged.
        offsets = ((0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75))
        for y in range(H):
            for x in range(W):
                hits = sum(1 for dx, dy in offsets if inside(x + dx, y + dy))
                if hits:
                    i = (y * W + x) * 3
                    for c in range(3):
                        self.pixels[i + c] = (self.pixels[i + c] * (4 - hits) + colour[c] * hits) // 4

    def ellipse(self, cx, cy, rx, ry, colour):
        self.fill(lambda x, y: ((x - cx) / rx) ** 2 + ((y - cy) / ry) ** 2 <= 1, colour)

    def circle(self, cx, cy, r, colour):
        self.ellipse(cx, cy, r, r, colour)

    def rect(self, x0, y0, x1, y1, colour):
        self.fill(lambda x, y: x0 <= x <= x1 and y0 <= y <= y1, colour)

    def triangle(self, a, b, c, colour):
        def side(p, q, x, y):
            return (q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0])

        def inside(x, y):
            d1, d2, d3 = side(a, b, x, y), side(b, c, x, y), side(c, a, x, y)
            return not ((d1 < 0 or d2 < 0 or d3 < 0) and (d1 > 0 or d2 > 0 or d3 > 0))
        self.fill(inside, colour)

    def stars(self, colour, seed=7):
        for k in range(18):
            x = (seed * 97 * (k + 1)) % W
            y = (seed * 53 * (k + 3)) % (H // 2)
            self.circle(x, y, 2.2, colour)


NIGHT, MOON, WHITE, BLACK = (22, 30, 74), (250, 232, 140), (255, 255, 255), (20, 20, 20)
BROWN, DARK_BROWN, ORANGE = (140, 92, 52), (92, 58, 30), (240, 150, 40)


def owl():
    c = Canvas(NIGHT)
    c.stars(MOON)
    c.circle(390, 70, 45, MOON)
    c.rect(40, 300, 440, 318, DARK_BROWN)
    c.ellipse(240, 215, 85, 105, BROWN)
    c.ellipse(240, 240, 55, 70, (196, 150, 100))
    c.triangle((165, 120), (195, 70), (215, 125), BROWN)
    c.triangle((265, 125), (285, 70), (315, 120), BROWN)
    for x in (205, 275):
        c.circle(x, 165, 30, WHITE)
        c.circle(x, 168, 14, BLACK)
    c.triangle((228, 190), (252, 190), (240, 215), ORANGE)
    return c


def moon():
    c = Canvas(NIGHT)
    c.stars(WHITE, seed=11)
    c.circle(240, 190, 120, MOON)
    c.circle(200, 160, 18, (230, 210, 120))
    c.circle(280, 230, 26, (230, 210, 120))
    return c


def wood():
    c = Canvas((14, 40, 40))
    c.stars(MOON, seed=5)
    for i, x in enumerate(range(40, 480, 90)):
        top = 90 + (i % 2) * 40
        c.rect(x - 10, 250, x + 10, 340, DARK_BROWN)
        c.triangle((x - 55, 270), (x, top), (x + 55, 270), (30, 110, 60))
    c.rect(0, 330, W, H, (20, 60, 30))
    return c


def mouse():
    c = Canvas((120, 170, 90))
    c.fill(lambda x, y: abs(y - (230 + 25 * math.sin(x / 30))) < 4 and x > 320, (200, 150, 160))
    c.ellipse(230, 230, 110, 70, (150, 150, 160))
    c.circle(150, 170, 38, (150, 150, 160))
    c.circle(150, 170, 24, (230, 170, 180))
    c.circle(140, 230, 8, BLACK)
    c.circle(118, 250, 9, (230, 120, 140))
    return c


def cat():
    c = Canvas((250, 220, 180))
    c.triangle((140, 140), (165, 50), (215, 115), (220, 120, 40))
    c.triangle((265, 115), (315, 50), (340, 140), (220, 120, 40))
    c.circle(240, 190, 110, (230, 135, 50))
    for x in (200, 280):
        c.ellipse(x, 170, 16, 24, (60, 140, 60))
        c.ellipse(x, 170, 5, 18, BLACK)
    c.triangle((228, 215), (252, 215), (240, 230), (230, 110, 130))
    return c


def fish():
    c = Canvas((70, 150, 220))
    c.ellipse(220, 180, 130, 75, ORANGE)
    c.triangle((330, 180), (420, 110), (420, 250), ORANGE)
    c.circle(150, 165, 14, WHITE)
    c.circle(150, 165, 6, BLACK)
    for x, y in ((90, 70), (120, 40), (70, 30)):
        c.circle(x, y, 9, (180, 220, 250))
    return c


def main():
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "config/stories/pictures")
    folder.mkdir(parents=True, exist_ok=True)
    for name, draw in (("owl", owl), ("moon", moon), ("wood", wood), ("mouse", mouse), ("cat", cat), ("fish", fish)):
        (folder / f"{name}.png").write_bytes(png(draw().pixels, W, H))
        print(folder / f"{name}.png")


if __name__ == "__main__":
    main()
