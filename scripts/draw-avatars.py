#!/usr/bin/env python3
"""Draws the built-in avatars of a class (web-static/avatars/NAME.svg) from simple shapes: one friendly
animal face on a round pastel tile each, bold enough to read at 48 px and clean at 160 px. Made for this
project; released under CC0 1.0 (public domain). The names are the server's (docs/protocol.md, "Classes").
Run again to redraw them: scripts/draw-avatars.py [folder]."""
import sys
from pathlib import Path

INK = "#2b2b3a"


def circle(cx, cy, r, fill, extra=""):
    return f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{fill}"{extra}/>'


def ellipse(cx, cy, rx, ry, fill, extra=""):
    return f'<ellipse cx="{cx}" cy="{cy}" rx="{rx}" ry="{ry}" fill="{fill}"{extra}/>'


def path(d, fill="none", stroke=None, width=0):
    line = f' stroke="{stroke}" stroke-width="{width}" stroke-linecap="round" stroke-linejoin="round"' if stroke else ""
    return f'<path d="{d}" fill="{fill}"{line}/>'


def eyes(y=46, gap=11, r=4.5, shine=True):
    parts = [circle(50 - gap, y, r, INK), circle(50 + gap, y, r, INK)]
    if shine:
        parts += [circle(50 - gap + 1.6, y - 1.6, 1.5, "#fff"), circle(50 + gap + 1.6, y - 1.6, 1.5, "#fff")]
    return parts


def smile(y=60, w=7):
    return [path(f"M{50 - w} {y} Q50 {y + w * 0.9} {50 + w} {y}", stroke=INK, width=2.6)]


def cheeks(y=58, gap=20):
    return [circle(50 - gap, y, 4, "#f59ab5", ' opacity="0.7"'), circle(50 + gap, y, 4, "#f59ab5", ' opacity="0.7"')]


def round_ears(colour, inner, y=26, gap=22, r=10):
    return [circle(50 - gap, y, r, colour), circle(50 + gap, y, r, colour),
            circle(50 - gap, y, r * 0.55, inner), circle(50 + gap, y, r * 0.55, inner)]


def pointed_ears(colour, inner):
    return [path("M24 42 L28 14 L44 30 Z", colour), path("M76 42 L72 14 L56 30 Z", colour),
            path("M29 34 L30.5 21 L39 29 Z", inner), path("M71 34 L69.5 21 L61 29 Z", inner)]


def face(colour, rx=28, ry=26, cy=52):
    return [ellipse(50, cy, rx, ry, colour)]


def nose(y=55, colour=INK, w=4.5):
    return [ellipse(50, y, w, w * 0.7, colour)]


def owl():
    return ([path("M24 30 L30 16 L40 28 Z", "#8a5a3b"), path("M76 30 L70 16 L60 28 Z", "#8a5a3b")] + face("#a9714b", 28, 30, 54)
            + [ellipse(50, 66, 16, 14, "#e9c9a3"), circle(39, 46, 10, "#fff"), circle(61, 46, 10, "#fff")]
            + eyes(46, 11, 5) + [path("M46 55 L54 55 L50 62 Z", "#f2a33a")])


def fox():
    return (pointed_ears("#e8772e", "#fff1e0") + face("#e8772e")
            + [path("M22 52 Q50 88 78 52 Q64 62 50 62 Q36 62 22 52 Z", "#fff6ea")] + eyes(46) + nose(60) + smile(65, 5))


def bear():
    return (round_ears("#9a6b46", "#d9b08c") + face("#9a6b46") + [ellipse(50, 62, 13, 10, "#d9b08c")]
            + eyes(46) + nose(58) + smile(63, 5))


def rabbit():
    return ([ellipse(38, 20, 7, 18, "#e6e0ea"), ellipse(62, 20, 7, 18, "#e6e0ea"), ellipse(38, 21, 3.5, 13, "#f6b6c9"),
             ellipse(62, 21, 3.5, 13, "#f6b6c9")] + face("#f1edf4") + eyes(48) + nose(57, "#e87a9b", 3.5)
            + smile(62, 5) + cheeks(59))


def cat():
    return (pointed_ears("#f0a64b", "#fcd9b1") + face("#f0a64b") + eyes(48) + nose(57, "#e87a9b", 3.5) + smile(62, 5)
            + [path("M18 56 L34 58 M18 63 L34 61 M82 56 L66 58 M82 63 L66 61", stroke=INK, width=1.8)])


def dog():
    return ([ellipse(24, 44, 9, 18, "#7a5230"), ellipse(76, 44, 9, 18, "#7a5230")] + face("#d7a66b")
            + [ellipse(62, 44, 9, 8, "#f2dcc0")] + eyes(46) + [ellipse(50, 62, 12, 9, "#f2dcc0")] + nose(58) + smile(64, 5)
            + [path("M46 67 Q50 76 54 67 Z", "#e8637a")])


def frog():
    return ([circle(34, 30, 12, "#5fb84f"), circle(66, 30, 12, "#5fb84f"), circle(34, 30, 8, "#fff"), circle(66, 30, 8, "#fff")]
            + [circle(34, 31, 4.5, INK), circle(66, 31, 4.5, INK)] + face("#6cc45a", 32, 24, 56)
            + [path("M32 60 Q50 76 68 60", stroke=INK, width=2.8)] + cheeks(60, 24))


def turtle():
    return ([ellipse(50, 72, 34, 18, "#4f8a3c"), path("M30 70 L40 62 L50 70 L60 62 L70 70", stroke="#8fc46b", width=3)]
            + face("#9fd17e", 24, 22, 46) + eyes(44, 9) + smile(54, 6) + cheeks(52, 16))


def lion():
    mane = [circle(50 + dx, 50 + dy, 14, "#c4671f") for dx, dy in
            ((0, -28), (20, -20), (28, 0), (20, 20), (0, 28), (-20, 20), (-28, 0), (-20, -20))]
    return ([circle(50, 50, 32, "#d9822b")] + mane + face("#f6c35b", 24, 24, 52) + eyes(47, 9)
            + [ellipse(50, 61, 10, 7, "#fbe3a6")] + nose(58, "#8a4b2a", 3.5) + smile(63, 4))


def panda():
    return (round_ears(INK, INK) + face("#ffffff") + [ellipse(39, 47, 7, 9, INK), ellipse(61, 47, 7, 9, INK)]
            + [circle(40, 46, 3, "#fff"), circle(60, 46, 3, "#fff")] + nose(58) + smile(63, 5) + cheeks(60))


def penguin():
    return (face("#2f3b52", 30, 30, 52) + [path("M50 36 Q30 36 28 56 Q30 78 50 80 Q70 78 72 56 Q70 36 50 36 Z", "#fff")]
            + eyes(50, 9) + [path("M44 58 L56 58 L50 66 Z", "#f2a33a")] + cheeks(62, 16))


def hedgehog():
    spikes = " ".join(f"L{50 + 34 * c:.1f} {52 - 34 * s:.1f} L{50 + 26 * c2:.1f} {52 - 26 * s2:.1f}" for c, s, c2, s2 in (
        (-1, 0, -0.94, 0.34), (-0.87, 0.5, -0.77, 0.64), (-0.5, 0.87, -0.34, 0.94), (0, 1, 0.17, 0.98),
        (0.5, 0.87, 0.64, 0.77), (0.87, 0.5, 0.94, 0.34), (1, 0, 1, -0.2)))
    return ([path(f"M16 60 {spikes} L84 64 Z", "#7b5a44")] + face("#e8c9a2", 24, 20, 58) + eyes(54, 9)
            + nose(64, INK, 3.5) + smile(68, 4) + cheeks(64, 16))


def koala():
    return ([circle(24, 36, 15, "#9aa3ad"), circle(76, 36, 15, "#9aa3ad"), circle(24, 36, 9, "#e7e2ea"), circle(76, 36, 9, "#e7e2ea")]
            + face("#aeb6bf") + eyes(48, 12) + [ellipse(50, 58, 7, 9, INK)] + smile(68, 4))


def elephant():
    return ([ellipse(22, 48, 16, 20, "#8fa6c4"), ellipse(78, 48, 16, 20, "#8fa6c4"), ellipse(22, 48, 10, 14, "#f3c3cf"),
             ellipse(78, 48, 10, 14, "#f3c3cf")] + face("#a4b8d3", 24, 24, 48) + eyes(44, 10)
            + [path("M50 52 Q46 70 54 80", stroke="#a4b8d3", width=9)] + cheeks(56, 16))


def whale():
    return ([path("M14 58 Q14 30 50 30 Q84 30 84 58 Q84 78 50 78 Q14 78 14 58 Z", "#4c8fd6"),
             path("M20 64 Q50 86 80 64 Q80 74 50 76 Q20 74 20 64 Z", "#cfe4f7"),
             path("M50 30 Q46 18 40 16 M50 30 Q54 18 60 16", stroke="#7fc4f2", width=3)]
            + eyes(52, 14) + smile(62, 6) + cheeks(62, 24))


def bee():
    return ([ellipse(30, 30, 12, 9, "#d8eefc", ' opacity="0.95"'), ellipse(70, 30, 12, 9, "#d8eefc", ' opacity="0.95"'),
             path("M40 26 Q36 14 30 12 M60 26 Q64 14 70 12", stroke=INK, width=2.4), circle(30, 12, 2.5, INK), circle(70, 12, 2.5, INK)]
            + face("#f6c431", 28, 26, 54) + [path("M24 64 Q50 70 76 64 L74 70 Q50 76 26 70 Z", INK)]
            + eyes(48) + smile(57, 5) + cheeks(56))


# Each: the drawing and its tile's colour (light, so the face's dark lines keep a contrast above 3:1).
AVATARS = {
    "owl": (owl, "#fde9c8"), "fox": (fox, "#ffe3cc"), "bear": (bear, "#f3e3d3"), "rabbit": (rabbit, "#fbe0ea"),
    "cat": (cat, "#fff0cf"), "dog": (dog, "#e9f1fb"), "frog": (frog, "#e2f6dc"), "turtle": (turtle, "#dff3f0"),
    "lion": (lion, "#fff3c9"), "panda": (panda, "#dff0e2"), "penguin": (penguin, "#dcecfb"), "hedgehog": (hedgehog, "#f7e6d6"),
    "koala": (koala, "#e8eef6"), "elephant": (elephant, "#ece6f8"), "whale": (whale, "#d9f0fb"), "bee": (bee, "#fff6d6"),
}


def svg(name):
    draw, tile = AVATARS[name]
    # No <title>: the pages name each avatar in the reader's language (avatar.NAME in the catalogs).
    body = "".join([circle(50, 50, 50, tile)] + draw())
    return f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100" width="100" height="100">{body}</svg>\n'


def main():
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "web-static" / "avatars"
    folder.mkdir(parents=True, exist_ok=True)
    for name in AVATARS:
        (folder / f"{name}.svg").write_text(svg(name), encoding="utf-8")


if __name__ == "__main__":
    main()
