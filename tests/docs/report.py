"""How the documentation checks end: every problem on its own line, then one verdict line."""
import sys


def finish(problems, failed, ok):
    """Prints `problems` and exits 1 with "FAILED: <count> <failed>", or prints "ok: <ok>"."""
    for p in problems:
        print(p)
    if problems:
        print("FAILED: %d %s" % (len(problems), failed))
        sys.exit(1)
    print("ok: " + ok)
