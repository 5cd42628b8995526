#!/usr/bin/env python3
"""Renders terminal screen captures into one animated SVG.

Each frame is the output of `tmux capture-pane -e -p` (text with SGR colour sequences). The
SVG draws every frame as monospace text, one <tspan> per run of equal style with an x for each
character (so columns line up even when a glyph comes from a fallback font of another width),
box-drawing characters as lines (they join whatever the font), background rectangles for
non-default backgrounds, and plays the frames with a CSS @keyframes animation (GitHub shows
SVG through <img>: CSS animations run, scripts do not). Rows that repeat across frames are
drawn once in <defs> and placed with <use>.

    scripts/frames_to_svg.py --index FRAMES/index --width 120 --height 34 --out demo.svg
    scripts/frames_to_svg.py ... --only-frame 12 --out frame12.svg   # one still frame, to look at

The index has one "SECONDS FILE" line per capture, in order: the capture's time on any clock
in seconds (only differences count) and its file, relative to the index. Python 3 standard
library only.
"""

import argparse
import functools
import html
import os
import re
import sys
import unicodedata

# Cell size in SVG user units: font-size 10 with the usual 0.6 em advance, 1.2 em rows.
CELL_W = 6
CELL_H = 12
FONT_SIZE = 10
BASELINE = 9.5
PAD = 8
SCALE = 1.25  # displayed pixels per user unit

FONTS = "'DejaVu Sans Mono','SF Mono',Menlo,Consolas,'Liberation Mono','Courier New',monospace"
DEFAULT_FG = "#c8ccd4"
DEFAULT_BG = "#16171d"
# The 16 ANSI colours (ratatui's named colours: Gray is 7, DarkGray 8, LightRed 9, …).
ANSI = [
    "#1c1c1c", "#e05561", "#8cc265", "#e5c07b", "#4aa5f0", "#c162de", "#42b3c2", "#c8ccd4",
    "#5c6370", "#ff6b76", "#a5e075", "#f5d67b", "#6cb6ff", "#de73ff", "#6fd6e6", "#ffffff",
]  # fmt: skip


def palette(index):
    """The xterm 256-colour palette."""
    if index < 16:
        return ANSI[index]
    if index < 232:
        index -= 16
        levels = [0, 95, 135, 175, 215, 255]
        r, g, b = levels[index // 36], levels[(index // 6) % 6], levels[index % 6]
        return f"#{r:02x}{g:02x}{b:02x}"
    level = 8 + 10 * (index - 232)
    return f"#{level:02x}{level:02x}{level:02x}"


class Pen:
    """The SGR state: colours as '#rrggbb' or None (the terminal's default)."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = self.bg = None
        self.bold = self.dim = self.italic = self.underline = self.reverse = self.hidden = False

    def key(self):
        return (self.fg, self.bg, self.bold, self.dim, self.italic, self.underline, self.reverse, self.hidden)

    def extended_colour(self, params, i):
        """Reads `5;N` or `2;R;G;B` after a 38/48/58 at params[i]; returns (colour, next index)."""
        if i + 1 < len(params) and params[i + 1] == 5 and i + 2 < len(params):
            return palette(params[i + 2] % 256), i + 3
        if i + 1 < len(params) and params[i + 1] == 2 and i + 4 < len(params):
            r, g, b = (min(v, 255) for v in params[i + 2 : i + 5])
            return f"#{r:02x}{g:02x}{b:02x}", i + 5
        return None, len(params)

    def apply(self, text):
        # Sub-parameters (4:3, 38:2::r:g:b) are rare in tmux's output; treat ':' like ';'.
        params = [int(p) if p.isdigit() else 0 for p in re.split("[;:]", text)] if text else [0]
        i = 0
        while i < len(params):
            p = params[i]
            if p == 0:
                self.reset()
            elif p == 1:
                self.bold = True
            elif p == 2:
                self.dim = True
            elif p == 3:
                self.italic = True
            elif p == 4:
                self.underline = True
            elif p == 7:
                self.reverse = True
            elif p == 8:
                self.hidden = True
            elif p == 22:
                self.bold = self.dim = False
            elif p == 23:
                self.italic = False
            elif p == 24:
                self.underline = False
            elif p == 27:
                self.reverse = False
            elif p == 28:
                self.hidden = False
            elif 30 <= p <= 37:
                self.fg = ANSI[p - 30]
            elif 90 <= p <= 97:
                self.fg = ANSI[p - 90 + 8]
            elif p == 39:
                self.fg = None
            elif 40 <= p <= 47:
                self.bg = ANSI[p - 40]
            elif 100 <= p <= 107:
                self.bg = ANSI[p - 100 + 8]
            elif p == 49:
                self.bg = None
            elif p in (38, 48, 58):
                colour, i = self.extended_colour(params, i)
                if p == 38:
                    self.fg = colour
                elif p == 48:
                    self.bg = colour
                continue
            i += 1


BLANK = (" ", (None,) * 2 + (False,) * 6)
ESCAPE = re.compile(r"\x1b(?:\[([0-9;:?]*)([@-~])|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def char_width(ch):
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


LIGHT, HEAVY, DOUBLE = 1, 2, 3
LINE_WIDTH = {LIGHT: 1, HEAVY: 2, DOUBLE: 1}
ARMS = {"UP": "u", "DOWN": "d", "LEFT": "l", "RIGHT": "r", "HORIZONTAL": "lr", "VERTICAL": "ud"}


@functools.lru_cache(maxsize=None)
def box_arms(ch):
    """(weight, arms as a set of 'u', 'd', 'l', 'r') for the box-drawing characters drawn as
    lines; None for the rest (mixed weights, dashes, double tees), which stay text."""
    if not "\u2500" <= ch <= "\u257f":
        return None
    words = unicodedata.name(ch, "").split()[2:]  # after "BOX DRAWINGS"
    if not words or words[0] not in ("LIGHT", "HEAVY", "DOUBLE"):
        return None
    weight = {"LIGHT": LIGHT, "HEAVY": HEAVY, "DOUBLE": DOUBLE}[words[0]]
    arms = set()
    for word in words[1:]:
        if word in ("AND", "ARC"):
            continue
        if word not in ARMS:
            return None
        arms.update(ARMS[word])
    straight = arms in ({"l", "r"}, {"u", "d"})
    corner = len(arms) == 2 and not straight
    if weight == DOUBLE and not (straight or corner):
        return None
    return weight, frozenset(arms)


def box_segments(col, weight, arms):
    """The lines of one box-drawing cell: (x1, y1, x2, y2), horizontal or vertical, in the row's
    coordinates. Butt ends; an arm that meets another one at the centre reaches past it by half
    a line width so corners close."""
    x0, x1, cx, cy = col * CELL_W, (col + 1) * CELL_W, col * CELL_W + CELL_W / 2, CELL_H / 2
    half = LINE_WIDTH[weight] / 2
    if weight == DOUBLE:
        gap = 1.5
        if arms == {"l", "r"}:
            return [(x0, cy - gap, x1, cy - gap), (x0, cy + gap, x1, cy + gap)]
        if arms == {"u", "d"}:
            return [(cx - gap, 0, cx - gap, CELL_H), (cx + gap, 0, cx + gap, CELL_H)]
        h = 1 if "r" in arms else -1
        v = 1 if "d" in arms else -1
        xe, ye = (x1 if h > 0 else x0), (CELL_H if v > 0 else 0)
        outer, inner = gap + half, gap - half
        return [
            (cx - h * outer, cy - v * gap, xe, cy - v * gap),
            (cx - h * gap, cy - v * outer, cx - h * gap, ye),
            (cx + h * inner, cy + v * gap, xe, cy + v * gap),
            (cx + h * gap, cy + v * inner, cx + h * gap, ye),
        ]
    out = []
    vertical = bool(arms & {"u", "d"})
    horizontal = bool(arms & {"l", "r"})
    if horizontal:
        left = x0 if "l" in arms else cx - (half if vertical else 0)
        right = x1 if "r" in arms else cx + (half if vertical else 0)
        out.append((left, cy, right, cy))
    if vertical:
        top = 0 if "u" in arms else cy - (half if horizontal else 0)
        bottom = CELL_H if "d" in arms else cy + (half if horizontal else 0)
        out.append((cx, top, cx, bottom))
    return out


def parse_screen(text, width, height):
    """A capture as `height` rows of `width` cells (char, style); a wide char's second cell is
    (None, style)."""
    pen = Pen()  # tmux carries the SGR state from one line to the next
    rows = []
    for line in text.split("\n")[:height]:
        row = [BLANK] * width
        col = 0
        pos = 0
        while pos < len(line):
            match = ESCAPE.match(line, pos)
            if match:
                if match.group(2) == "m":
                    pen.apply(match.group(1))
                pos = match.end()
                continue
            ch = line[pos]
            pos += 1
            if ch < " " or ch == "\x7f":
                continue  # no other control character belongs in a capture (nor in XML)
            w = char_width(ch)
            if w == 0:
                continue
            if col + w <= width:
                row[col] = (ch, pen.key())
                if w == 2:
                    row[col + 1] = (None, pen.key())
            col += w
        rows.append(row)
    while len(rows) < height:
        rows.append([BLANK] * width)
    return rows


def resolve(style):
    """(fill, background or None, bold, italic, underline, dim) as drawn."""
    fg, bg, bold, dim, italic, underline, reverse, hidden = style
    if reverse:
        fg, bg = bg or DEFAULT_BG, fg or DEFAULT_FG
    fill = fg or DEFAULT_FG
    if hidden:
        fill = bg or DEFAULT_BG
    return fill, bg, bold, italic, underline, dim


def drawn(ch):
    """Characters drawn as shapes rather than text."""
    return ch == "\u2588" or box_arms(ch) is not None


def num(value):
    return f"{value:g}"


def path_data(segments):
    """Path data for horizontal and vertical segments; touching horizontal ones are merged
    (a border row becomes one line)."""
    merged = []
    for x1, y1, x2, y2 in sorted((s for s in segments if s[1] == s[3]), key=lambda s: (s[1], s[0])):
        if merged and merged[-1][1] == y1 and merged[-1][2] >= x1:
            merged[-1] = (merged[-1][0], y1, max(x2, merged[-1][2]), y1)
        else:
            merged.append((x1, y1, x2, y2))
    merged += [s for s in segments if s[1] != s[3]]
    return "".join(
        f"M{num(x1)} {num(y1)}H{num(x2)}" if y1 == y2 else f"M{num(x1)} {num(y1)}V{num(y2)}"
        for x1, y1, x2, y2 in merged
    )


class Renderer:
    def __init__(self):
        self.classes = {}  # text style -> class name
        self.rows = {}  # row markup -> id
        self.row_defs = []

    def text_class(self, key):
        if key not in self.classes:
            self.classes[key] = f"s{len(self.classes)}"
        return self.classes[key]

    def css(self):
        rules = []
        for (fill, bold, italic, underline, dim), name in self.classes.items():
            rule = f"fill:{fill}"
            if bold:
                rule += ";font-weight:bold"
            if italic:
                rule += ";font-style:italic"
            if underline:
                rule += ";text-decoration:underline"
            if dim:
                rule += ";fill-opacity:.6"
            rules.append(f".{name}{{{rule}}}")
        return "\n".join(rules)

    def row_markup(self, row):
        """The row drawn at y=0, or '' when it is blank."""
        cells = [(ch, resolve(style)) for ch, style in row]
        parts = []
        col = 0
        while col < len(cells):  # backgrounds: one rect per run of one colour
            bg = cells[col][1][1]
            end = col + 1
            while end < len(cells) and cells[end][1][1] == bg:
                end += 1
            if bg is not None:
                parts.append(f'<rect x="{col * CELL_W}" width="{(end - col) * CELL_W}" height="{CELL_H}" fill="{bg}"/>')
            col = end
        lines = {}  # (colour, width) -> segments
        for col, (ch, r) in enumerate(cells):
            if ch == "\u2588":  # full block: a filled cell
                parts.append(f'<rect x="{col * CELL_W}" width="{CELL_W}" height="{CELL_H}" fill="{r[0]}"/>')
            elif ch and box_arms(ch):
                weight, arms = box_arms(ch)
                lines.setdefault((r[0], LINE_WIDTH[weight]), []).extend(box_segments(col, weight, arms))
        for (colour, width), segments in lines.items():
            parts.append(f'<path stroke="{colour}" stroke-width="{width}" d="{path_data(segments)}"/>')
        spans = []
        col = 0
        while col < len(cells):  # text: one tspan per run of one style, spaces left out
            ch, (fill, _bg, bold, italic, underline, dim) = cells[col]
            key = (fill, bold, italic, underline, dim)
            if ch is None or drawn(ch) or (ch == " " and not underline):
                col += 1
                continue
            chars, xs = [], []
            while col < len(cells):
                c, r = cells[col]
                if c is None:
                    col += 1
                    continue
                if (r[0], r[2], r[3], r[4], r[5]) != key or drawn(c) or (c == " " and not underline):
                    break
                chars.append(c)
                xs.append(str(col * CELL_W))
                col += 1
            spans.append(
                f'<tspan class="{self.text_class(key)}" x="{" ".join(xs)}">{html.escape("".join(chars), quote=False)}</tspan>'
            )
        if spans:
            parts.append(f'<text y="{BASELINE}">{"".join(spans)}</text>')
        return "".join(parts)

    def row_id(self, row):
        markup = self.row_markup(row)
        if not markup:
            return None
        if markup not in self.rows:
            self.rows[markup] = f"r{len(self.rows)}"
            self.row_defs.append(f'<g id="{self.rows[markup]}">{markup}</g>')
        return self.rows[markup]


def load_frames(index_path, width, height, renderer):
    """[(seconds, rows as row ids)] in capture order."""
    base = os.path.dirname(index_path)
    frames = []
    with open(index_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            seconds, name = line.split(maxsplit=1)
            with open(os.path.join(base, name.strip()), encoding="utf-8", errors="replace") as capture:
                screen = parse_screen(capture.read(), width, height)
            frames.append((float(seconds), tuple(renderer.row_id(row) for row in screen)))
    return frames


def select(frames, max_frames):
    """Drops blank leading frames and repeats; then, while there are more than max_frames,
    merges changes closer than a growing minimum gap (a shown frame takes the last state of
    its window, so the end of a burst of changes is never lost)."""
    while frames and all(row is None for row in frames[0][1]):
        frames = frames[1:]
    gap = 0.0
    while True:
        out = []
        for t, rows in frames:
            if out and out[-1][1] == rows:
                continue
            if out and t - out[-1][0] < gap:
                out[-1] = (out[-1][0], rows)
                if len(out) > 1 and out[-2][1] == rows:
                    out.pop()
                continue
            out.append((t, rows))
        if len(out) <= max_frames:
            return out
        gap += 0.05


def svg(renderer, frames, durations, columns, lines, title, animate):
    width, height = columns * CELL_W, lines * CELL_H
    view_w, view_h = width + 2 * PAD, height + 2 * PAD
    total = sum(durations)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{view_w * SCALE:g}" height="{view_h * SCALE:g}" '
        f'viewBox="0 0 {view_w} {view_h}" xml:space="preserve" role="img" data-frames="{len(frames)}">',
        f"<title>{html.escape(title)}</title>",
        "<style>",
        f"text{{font-family:{FONTS};font-size:{FONT_SIZE}px;fill:{DEFAULT_FG};white-space:pre}}",
        "rect{shape-rendering:crispEdges}",
        "path{fill:none}",
        renderer.css(),
    ]
    if animate:
        # A film strip of frames one screen apart, moved up one screen per frame; steps(1,end)
        # holds each position until the next keyframe.
        stops = []
        elapsed = 0.0
        for i, duration in enumerate(durations):
            stops.append(f"{100 * elapsed / total:.3f}%{{transform:translateY({-i * height}px)}}")
            elapsed += duration
        stops.append(f"100%{{transform:translateY({-(len(frames) - 1) * height}px)}}")
        out.append(f".strip{{animation:play {total:.2f}s steps(1,end) infinite}}")
        out.append("@keyframes play{" + "".join(stops) + "}")
    out.append("</style>")
    out.append("<defs>" + "\n".join(renderer.row_defs) + "</defs>")
    out.append(f'<rect width="{view_w}" height="{view_h}" rx="6" fill="{DEFAULT_BG}"/>')
    # A nested <svg> is the viewport: it clips the strip to one screen.
    out.append(f'<svg x="{PAD}" y="{PAD}" width="{width}" height="{height}"><g class="strip">')
    for i, (_t, rows) in enumerate(frames):
        uses = "".join(f'<use href="#{rid}" y="{r * CELL_H}"/>' for r, rid in enumerate(rows) if rid)
        out.append(f'<g class="f" transform="translate(0 {i * height})">{uses}</g>')
    out.append("</g></svg></svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help='"SECONDS FILE" lines, one per capture')
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--height", type=int, required=True)
    parser.add_argument("--title", default="terminal recording")
    parser.add_argument("--max-frames", type=int, default=80)
    parser.add_argument("--max-gap", type=float, default=2.5, help="longest a frame is shown, in seconds")
    parser.add_argument("--end-hold", type=float, default=4.0, help="how long the last frame is shown")
    parser.add_argument("--only-frame", type=int, default=None, help="write this one frame, still")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    renderer = Renderer()
    frames = select(load_frames(args.index, args.width, args.height, renderer), args.max_frames)
    if not frames:
        sys.exit(f"{args.index}: no frame with anything on screen")
    durations = [min(b[0] - a[0], args.max_gap) for a, b in zip(frames, frames[1:])] + [args.end_hold]
    if args.only_frame is not None:
        frames, durations = [frames[args.only_frame]], [1.0]
    # Only the rows the chosen frames use go into <defs>.
    used = {rid for _t, rows in frames for rid in rows if rid}
    renderer.row_defs = [d for d in renderer.row_defs if d[len('<g id="') :].split('"', 1)[0] in used]
    document = svg(
        renderer, frames, durations, args.width, args.height, args.title, animate=args.only_frame is None
    )
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        f.write(document)
    print(
        f"{args.out}: {len(frames)} frames, {sum(durations):.1f} s, {len(renderer.row_defs)} distinct rows, "
        f"{len(document.encode()) / 1024:.0f} KiB",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
