#!/usr/bin/env python3
"""The runnable code blocks of the guides (docs/*.md): extract them, and run them in order.

A block is runnable when its fence carries the class `runnable`, e.g. ```{.c .runnable}; the
first class is the language: c and cpp (complete programs, compiled by CMake with the project's
warnings: `extract`), java (a class with main, run from source with the JAR on the class
path), r (an Rscript with the built package), python (run by the Python binding's virtualenv
interpreter), sh (bash, with the `hybridnet` command on PATH).
The pages run in name order (getting-started first), each page's blocks in document order,
all in one fresh folder: a later block reads what an earlier one wrote (getting-started's C++
block writes the export the others load). A failing block is named with its line and ends the
run, since later blocks build on it.

  code_blocks.py extract DOCS_DIR OUT_DIR         writes OUT_DIR/<id>.c|.cc, prints them (CMake)
  code_blocks.py run DOCS_DIR WORK_DIR KEY=VALUE   runs every page's blocks
     keys: bin (folder of the compiled blocks), cli, java, jar, rscript, rlibs, python
  code_blocks.py self-test WORK_DIR    a failing block fails the run and stops it; an unmarked
                                       block is not run
"""
import os
import re
import shutil
import subprocess
import sys

FENCE = re.compile(r"^```\s*\{([^}]*)\}\s*$")
LANGUAGES = {"c": ".c", "cpp": ".cc", "java": ".java", "r": ".R", "python": ".py", "sh": ".sh"}


class Block:
    def __init__(self, page, index, line, language, code):
        self.page, self.index, self.line, self.language, self.code = page, index, line, language, code

    @property
    def id(self):
        return "doc_%s_%d" % (re.sub(r"[^a-z0-9]+", "_", self.page.lower()), self.index)

    def where(self):
        return "docs/%s.md:%d (%s block %d)" % (self.page, self.line, self.language, self.index)


def runnable_blocks(docs_dir):
    """Every runnable block of every page, by page (sorted), in document order."""
    pages = {}
    for name in sorted(os.listdir(docs_dir)):
        if not name.endswith(".md"):
            continue
        page = name[:-3]
        with open(os.path.join(docs_dir, name), encoding="utf-8") as f:
            lines = f.read().split("\n")
        i, blocks = 0, []
        while i < len(lines):
            m = FENCE.match(lines[i])
            if not m:
                i += 1
                continue
            classes = [c[1:] for c in m.group(1).split() if c.startswith(".")]
            start = i
            i += 1
            body = []
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            if i == len(lines):
                sys.exit("docs/%s.md:%d: code block without its closing fence" % (page, start + 1))
            i += 1
            if "runnable" not in classes:
                continue
            language = classes[0]
            if language not in LANGUAGES:
                sys.exit("docs/%s.md:%d: runnable block of unknown language '%s' (known: %s)"
                         % (page, start + 1, language, ", ".join(sorted(LANGUAGES))))
            blocks.append(Block(page, len(blocks), start + 1, language, "\n".join(body) + "\n"))
        if blocks:
            pages[page] = blocks
    return pages


def extract(docs_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for blocks in runnable_blocks(docs_dir).values():
        for b in blocks:
            if b.language in ("c", "cpp"):
                path = os.path.join(out_dir, b.id + LANGUAGES[b.language])
                text = "#line %d \"docs/%s.md\"\n%s" % (b.line + 1, b.page, b.code)
                # Rewritten only when changed, so an unrelated guide edit rebuilds nothing.
                if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(text)
                print(path)


def run_block(b, work, tools):
    if b.language in ("c", "cpp"):
        command = [os.path.join(tools["bin"], b.id)]
    elif b.language == "java":
        main = re.search(r"public\s+(?:final\s+)?class\s+(\w+)", b.code)
        if not main:
            return "a runnable Java block must declare a public class with main"
        source = os.path.join(work, main.group(1) + ".java")
        with open(source, "w", encoding="utf-8") as f:
            f.write(b.code)
        command = [tools["java"], "-cp", tools["jar"], source]
    elif b.language == "r":
        script = os.path.join(work, b.id + ".R")
        with open(script, "w", encoding="utf-8") as f:
            f.write(b.code)
        command = [tools["rscript"], "--vanilla", script]
    elif b.language == "python":
        if not os.access(tools.get("python", ""), os.X_OK):
            return "no Python with the hybridnet package at '%s' (the binding is not built)" % tools.get("python")
        script = os.path.join(work, b.id + ".py")
        with open(script, "w", encoding="utf-8") as f:
            f.write(b.code)
        command = [tools["python"], script]
    else:
        script = os.path.join(work, b.id + ".sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write("set -euo pipefail\n" + b.code)
        command = ["bash", script]
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(tools["cli"]) + os.pathsep + env.get("PATH", "")
    env["R_LIBS"] = tools["rlibs"]
    proc = subprocess.run(command, cwd=work, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=300)
    sys.stdout.write(proc.stdout)
    if proc.returncode != 0:
        return "exit status %d" % proc.returncode
    return None


def run(docs_dir, work_dir, tools):
    pages = runnable_blocks(docs_dir)
    if not pages:
        sys.exit("no runnable code block found in %s" % docs_dir)
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(work_dir)
    count = 0
    for blocks in pages.values():
        for b in blocks:
            count += 1
            print("== %s" % b.where(), flush=True)
            error = run_block(b, work_dir, tools)
            if error:
                print("FAILED %s: %s (%d blocks run)" % (b.where(), error, count))
                return 1
    print("ok: %d runnable blocks in %d pages" % (count, len(pages)))
    return 0


def self_test(work_dir):
    docs = os.path.join(work_dir, "docs")
    shutil.rmtree(work_dir, ignore_errors=True)
    os.makedirs(docs)
    with open(os.path.join(docs, "page.md"), "w", encoding="utf-8") as f:
        f.write("# Page\n\n```sh\ntouch unmarked_ran\n```\n\n"
                "```{.sh .runnable}\ntouch first_ran\n```\n\n"
                "```{.sh .runnable}\nfalse\n```\n\n"
                "```{.sh .runnable}\ntouch after_failure_ran\n```\n")
    tools = {"cli": "/bin/true", "rlibs": ""}
    work = os.path.join(work_dir, "run")
    status = run(docs, work, tools)
    ran = sorted(n for n in os.listdir(work) if n.endswith("_ran"))
    print("status %d, ran: %s" % (status, ", ".join(ran)))
    if status != 1 or ran != ["first_ran"]:
        print("FAILED: expected status 1 with only first_ran")
        return 1
    print("ok: the failing block failed the run, the unmarked and later blocks did not run")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "self-test":
        sys.exit(self_test(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "extract":
        extract(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        tools = dict(arg.split("=", 1) for arg in sys.argv[4:])
        missing = [k for k in ("bin", "cli", "java", "jar", "rscript", "rlibs") if k not in tools]
        if missing:
            sys.exit("missing: " + ", ".join(missing))
        sys.exit(run(sys.argv[2], sys.argv[3], tools))
    else:
        sys.exit(__doc__)
