#!/usr/bin/env python3
"""Draws a profiler trace (Chrome trace-event JSON, as hybridnet's profiler dump writes it) as an
SVG timeline: one lane per thread, nested events stacked below their parent, one colour per
category (op type), the event's name where it fits, a millisecond axis and a legend.

    scripts/trace_to_svg.py trace.json timeline.svg [--width 1600]

For the README, where no headless browser is at hand to screenshot chrome://tracing or
Perfetto. Stdlib only.
"""
import argparse
import colorsys
import hashlib
import json
from xml.sax.saxutils import escape

ROW = 22
LEFT = 90
TOP = 40


def colour(category):
    digest = hashlib.md5(category.encode()).digest()
    r, g, b = colorsys.hls_to_rgb(digest[0] / 255.0, 0.62, 0.55)
    return "#%02x%02x%02x" % (int(r * 255), int(g * 255), int(b * 255))


def depths(events):
    """The nesting depth of each complete event of one thread (sorted by start)."""
    stack, out = [], []
    for e in events:
        while stack and stack[-1] <= e["ts"] + 1e-3:
            stack.pop()
        out.append(len(stack))
        stack.append(e["ts"] + e["dur"])
    return out


def render(trace, width):
    complete = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    if not complete:
        raise SystemExit("trace_to_svg: the trace has no complete events")
    start = min(e["ts"] for e in complete)
    end = max(e["ts"] + e["dur"] for e in complete)
    scale = (width - LEFT - 20) / max(end - start, 1e-9)
    threads = sorted({e["tid"] for e in complete})
    parts, y, categories = [], TOP, {}
    for tid in threads:
        events = sorted((e for e in complete if e["tid"] == tid),
                        key=lambda e: (e["ts"], -e["dur"]))
        level = depths(events)
        lanes = max(level) + 1
        parts.append('<text x="8" y="%d" class="lane">thread %d</text>' % (y + 15, tid))
        for e, d in zip(events, level):
            x = LEFT + (e["ts"] - start) * scale
            w = max(e["dur"] * scale, 0.5)
            top = y + d * ROW
            categories[e["cat"]] = colour(e["cat"])
            title = "%s (%s) %.3f ms" % (e["name"], e["cat"], e["dur"] / 1000.0)
            kernel = e.get("args", {}).get("kernel")
            if kernel and kernel != e["cat"]:
                title += ", kernel " + kernel
            parts.append('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s">'
                         '<title>%s</title></rect>'
                         % (x, top, w, ROW - 2, categories[e["cat"]], escape(title)))
            label = e["cat"]
            if w > 7 * len(label):
                parts.append('<text x="%.2f" y="%d" class="ev">%s</text>'
                             % (x + 2, top + 15, escape(label)))
        y += lanes * ROW + 10
    # Axis: ticks at a round number of milliseconds.
    span_ms = (end - start) / 1000.0
    step = next(s for s in (0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 1e9)
                if span_ms / s <= 12)
    tick = 0.0
    while tick <= span_ms + 1e-9:
        x = LEFT + tick * 1000.0 * scale
        parts.append('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" class="tick"/>'
                     % (x, TOP - 6, x, y - 6))
        parts.append('<text x="%.2f" y="%d" class="axis">%g ms</text>' % (x + 2, TOP - 10, tick))
        tick += step
    # Legend: one swatch per category, in rows.
    x, legend_y = LEFT, y + 10
    for cat in sorted(categories):
        item = 14 + 7 * len(cat) + 16
        if x + item > width - 10:
            x, legend_y = LEFT, legend_y + 18
        parts.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>'
                     % (x, legend_y, categories[cat]))
        parts.append('<text x="%d" y="%d" class="ev">%s</text>'
                     % (x + 16, legend_y + 11, escape(cat)))
        x += item
    height = legend_y + 30
    head = ('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
            'font-family="DejaVu Sans, sans-serif">' % (width, height))
    style = ('<style>.lane{font-size:12px}.ev{font-size:11px}.axis{font-size:10px;fill:#555}'
             '.tick{stroke:#ddd}</style><rect width="100%" height="100%" fill="white"/>')
    return "\n".join([head, style] + parts + ["</svg>\n"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("svg")
    parser.add_argument("--width", type=int, default=1600)
    args = parser.parse_args()
    with open(args.trace) as f:
        trace = json.load(f)
    with open(args.svg, "w") as f:
        f.write(render(trace, args.width))


if __name__ == "__main__":
    main()
