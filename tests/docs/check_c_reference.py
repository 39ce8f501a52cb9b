#!/usr/bin/env python3
"""Every public C function is in the C API reference, documented, in one of its groups.

  check_c_reference.py SRC LIBRARY WORK          the repository's c_api.h against libhybridnet
  check_c_reference.py SRC LIBRARY WORK --self-test
      the same check on a copy of the header with one function's comment removed and one
      function added without a comment: it must find exactly those two

Runs Doxygen (docs/reference/doxygen.sh c) on c_api.h, then compares three lists: the functions
the header declares (HN_API), the hn_* functions the library exports, and the functions of the
reference's groups that have a description. Doxygen must also report no warning.
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

from report import finish

DECLARATION = re.compile(r"HN_API\s+[\w\s\*]*?\b(hn_\w+)\s*\(")


def declared(header_text):
    return set(DECLARATION.findall(header_text))


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return {line.split()[-1] for line in out.splitlines()
            if len(line.split()) == 3 and line.split()[1] == "T" and line.split()[-1].startswith("hn_")}


def text_of(element):
    return "".join(element.itertext()).strip() if element is not None else ""


def documented_in_groups(xml_dir):
    documented, grouped = set(), {}
    for name in os.listdir(xml_dir):
        if not name.startswith("group__"):
            continue
        root = ET.parse(os.path.join(xml_dir, name)).getroot()
        group = root.find("compounddef/compoundname").text
        for member in root.iter("memberdef"):
            if member.get("kind") != "function":
                continue
            fn = member.find("name").text
            grouped.setdefault(fn, []).append(group)
            if text_of(member.find("briefdescription")) or text_of(member.find("detaileddescription")):
                documented.add(fn)
    return documented, grouped


def check(src, library, work):
    """Returns the problems found (empty when the reference is complete)."""
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run(["bash", os.path.join(src, "docs/reference/doxygen.sh"), "c", work], check=True)
    with open(os.path.join(src, "c_api/include/hybridnet/c_api.h"), encoding="utf-8") as f:
        header = declared(f.read())
    documented, grouped = documented_in_groups(os.path.join(work, "xml"))
    problems = []
    with open(os.path.join(work, "warnings.log"), encoding="utf-8") as f:
        problems += ["doxygen: " + line for line in f.read().splitlines() if line.strip()]
    for fn in sorted(header | (exported(library) if library else set())):
        if fn not in header:
            problems.append("%s: exported by the library but not declared in c_api.h" % fn)
        elif fn not in grouped:
            problems.append("%s: not in any group of the reference" % fn)
        elif len(grouped[fn]) > 1:
            problems.append("%s: in several groups (%s)" % (fn, ", ".join(grouped[fn])))
        elif fn not in documented:
            problems.append("%s: in the reference without a description" % fn)
    if len(header) < 50:
        problems.append("only %d functions found in c_api.h: the declaration pattern is stale" % len(header))
    return problems, len(header)


def self_test(src, work):
    """The check finds a removed comment and an undocumented new function, and nothing else."""
    copy = os.path.join(work, "src")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(os.path.join(src, "docs/reference"), os.path.join(copy, "docs/reference"))
    os.makedirs(os.path.join(copy, "c_api/include/hybridnet"))
    with open(os.path.join(src, "c_api/include/hybridnet/c_api.h"), encoding="utf-8") as f:
        text = f.read()
    doc = re.search(r"/\*\*[^/]*?\*/\n(HN_API int hn_tensor_ndim\()", text)
    assert doc, "hn_tensor_ndim's comment not found"
    text = text.replace(doc.group(0), doc.group(1), 1)
    text = text.replace("HN_API int hn_tensor_ndim(",
                        "HN_API int hn_tensor_undocumented(int x) HN_NOEXCEPT;\n\n"
                        "HN_API int hn_tensor_ndim(", 1)
    with open(os.path.join(copy, "c_api/include/hybridnet/c_api.h"), "w", encoding="utf-8") as f:
        f.write(text)
    problems, _ = check(copy, None, os.path.join(work, "reference"))
    named = {fn for fn in ("hn_tensor_ndim", "hn_tensor_undocumented")
             if any(fn + ":" in p or fn + "(" in p or ("Member " + fn) in p for p in problems)}
    print("\n".join(problems))
    if named != {"hn_tensor_ndim", "hn_tensor_undocumented"}:
        print("FAILED: the check missed %s" % ({"hn_tensor_ndim", "hn_tensor_undocumented"} - named))
        return 1
    print("ok: the check reports the removed comment and the undocumented function")
    return 0


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    src, library, work = sys.argv[1:4]
    if len(sys.argv) == 5:
        sys.exit(self_test(src, work))
    problems, count = check(src, library, work)
    finish(problems, "problems",
           "all %d functions of c_api.h are exported, documented and grouped in the reference" % count)


if __name__ == "__main__":
    main()
