"""Checks a profiler trace against the Chrome trace-event format (the JSON object form that
chrome://tracing and Perfetto load): every event's required fields and types by phase, and
complete events on one thread either disjoint or nested (the viewers draw nothing else).

    check_trace.py TRACE.json [--min-complete N] [--category CAT ...]

Prints a summary and exits 0, or prints what is wrong and exits 1. Used by the CLI and Python
binding tests; stdlib only.
"""

import argparse
import collections
import json
import sys

PHASES = {"X", "i", "C", "M"}


def problems(trace, min_complete, categories):
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["the top level is not an object with a traceEvents list"]
    found = []
    complete = collections.defaultdict(list)
    seen_categories = collections.Counter()
    for n, e in enumerate(trace["traceEvents"]):
        where = "event %d (%r)" % (n, e.get("name") if isinstance(e, dict) else e)
        if not isinstance(e, dict):
            found.append(where + ": not an object")
            continue
        ph = e.get("ph")
        if ph not in PHASES:
            found.append(where + ": phase %r is none of %s" % (ph, sorted(PHASES)))
            continue
        if not isinstance(e.get("name"), str) or not e["name"]:
            found.append(where + ": no name")
        if not isinstance(e.get("pid"), int):
            found.append(where + ": pid is not an integer")
        if not isinstance(e.get("args", {}), dict):
            found.append(where + ": args is not an object")
        if ph == "M":
            if e.get("name") not in ("process_name", "thread_name"):
                found.append(where + ": unknown metadata")
            continue
        if not isinstance(e.get("tid"), int):
            found.append(where + ": tid is not an integer")
        if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
            found.append(where + ": ts is not a non-negative number")
            continue
        if not isinstance(e.get("cat"), str):
            found.append(where + ": cat is not a string")
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                found.append(where + ": dur is not a non-negative number")
                continue
            complete[(e["pid"], e["tid"])].append(e)
            seen_categories[e["cat"]] += 1
        elif ph == "i" and e.get("s", "t") not in ("g", "p", "t"):
            found.append(where + ": instant scope %r" % e.get("s"))
        elif ph == "C" and not all(isinstance(v, (int, float)) for v in e.get("args", {}).values()):
            found.append(where + ": counter values are not numbers")
    # Complete events of one thread nest or follow one another (1 ns of rounding allowed).
    for thread, events in complete.items():
        open_ends = []
        for e in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
            while open_ends and open_ends[-1][0] <= e["ts"] + 0.001:
                open_ends.pop()
            end = e["ts"] + e["dur"]
            if open_ends and end > open_ends[-1][0] + 0.001:
                found.append("thread %s: %r overlaps %r without nesting in it"
                             % (thread, e["name"], open_ends[-1][1]))
            open_ends.append((end, e["name"]))
    total = sum(len(v) for v in complete.values())
    if total < min_complete:
        found.append("%d complete events, expected at least %d" % (total, min_complete))
    for cat in categories:
        if seen_categories[cat] == 0:
            found.append("no complete event of category %r" % cat)
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--min-complete", type=int, default=1)
    parser.add_argument("--category", action="append", default=[])
    args = parser.parse_args()
    with open(args.trace) as f:
        trace = json.load(f)
    found = problems(trace, args.min_complete, args.category)
    for p in found:
        print("check_trace: " + p)
    if found:
        return 1
    print("check_trace: %s: %d events in the trace-event format"
          % (args.trace, len(trace["traceEvents"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
