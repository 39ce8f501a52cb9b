"""hybridnet.profiler's aggregate table against real MXNet 1.9.1's (CTest golden.profiler): the
same eager ops profiled under both interpreters; the "operator" category's title, rule, header
and column rule must be byte-identical, its rows laid out alike (name column of 25, numbers
right-aligned in 16 with 4 decimals), the ops' counts and the count order equal, and dumps's
JSON built alike (Time/Memory/Unit, Count/Total/Min/Max/Avg per row). MXNet's engine rows
(WaitForVar, DeleteVariable, ...) have no counterpart here and are left out. Exit 77 (skipped)
when MXNet is not installed.

    python profiler_golden.py MXNET_PYTHON WORK
"""
import json
import os
import subprocess
import sys

PROGRAM = r'''
import json, re, sys
backend = sys.argv[2]
mx = __import__("mxnet" if backend == "mxnet" else "hybridnet")
nd, profiler = mx.nd, mx.profiler
profiler.set_config(profile_imperative=True, aggregate_stats=True,
                    filename=sys.argv[1] + ".trace.json")
profiler.set_state("run")
x = nd.array([[1.0, -2.0], [3.0, -4.0]])
for _ in range(3):
    y = nd.relu(x)
z = nd.exp(y)
z.wait_to_read()
profiler.set_state("stop")
table = profiler.dumps(sort_by="count")
stats = json.loads(profiler.dumps(format="json"))
lines = table.split("\n")
at = lines.index("operator")
rows = []
for line in lines[at + 4:]:
    if not line:
        break
    rows.append(line)
ops = [r for r in rows if r.split()[0] in ("relu", "exp")]
result = {
    "preamble": lines[:3],
    "heading": lines[at:at + 4],
    "row_layout": [bool(re.fullmatch(r"\S.{24}( {0,15}\d+)( {0,15}\d+\.\d{4}){4}", r))
                   and len(r) == 25 + 16 + 4 * 17 for r in ops],
    "order": [r.split()[0] for r in ops],
    "counts": {r.split()[0]: int(r.split()[1]) for r in ops},
    "json_keys": sorted(stats),
    "json_units": stats["Unit"],
    "json_row_keys": sorted(stats["Time"]["operator"]["relu"]),
    "json_relu_count": stats["Time"]["operator"]["relu"]["Count"],
}
with open(sys.argv[1], "w") as f:
    json.dump(result, f, indent=1)
'''


def run(python, backend, work):
    program = os.path.join(work, "profiler_program.py")
    with open(program, "w") as f:
        f.write(PROGRAM)
    out = os.path.join(work, backend + ".json")
    done = subprocess.run([python, program, out, backend], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"FAIL: the program under {backend} exited {done.returncode}:\n"
              f"{done.stderr[-3000:]}")
        sys.exit(1)
    with open(out) as f:
        return json.load(f)


def main():
    mxnet_python, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    probe = subprocess.run([mxnet_python, "-c", "import mxnet"], capture_output=True, text=True)
    if probe.returncode != 0:
        print(f"SKIP: real MXNet is not importable by {mxnet_python}; run "
              "scripts/setup-mxnet.sh to install mxnet==1.9.1 for the golden tests")
        return 77
    ours = run(sys.executable, "hybridnet", work)
    theirs = run(mxnet_python, "mxnet", work)
    failures = 0
    for key in theirs:
        same = ours.get(key) == theirs[key]
        failures += not same
        print(f"{'ok  ' if same else 'FAIL'} {key}: {ours.get(key)!r:.300}"
              + ("" if same else f" vs MXNet {theirs[key]!r:.300}"))
    if not all(theirs["row_layout"]) or len(theirs["row_layout"]) != 2:
        print("FAIL: the row pattern does not describe MXNet's rows")
        failures += 1
    print(f"{len(theirs) - failures} of {len(theirs)} agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
