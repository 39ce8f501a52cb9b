#!/usr/bin/env python3
"""Every public C++ symbol of core/include has a comment in the C++ API reference.

  check_cpp_reference.py SRC WORK               the repository's headers
  check_cpp_reference.py SRC WORK --self-test
      the same check on a copy of the headers with one class's comment removed, one function
      and one namespace added without a comment: it must report exactly those three

Runs Doxygen (docs/reference/doxygen.sh cpp-coverage: EXTRACT_ALL off, WARN_IF_UNDOCUMENTED
on) and fails on any warning it prints. Doxygen checks a namespace's free functions only when
the namespace itself is documented, so every namespace (std and internal ones aside) must have
a comment too.
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

from report import finish

SKIPPED_NAMESPACES = {"std"}


def text_of(element):
    return "".join(element.itertext()).strip() if element is not None else ""


def check(src, work):
    """Returns the problems found (empty when every public symbol is documented)."""
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run(["bash", os.path.join(src, "docs/reference/doxygen.sh"), "cpp-coverage", work],
                   check=True)
    problems = []
    with open(os.path.join(work, "warnings.log"), encoding="utf-8") as f:
        problems += ["doxygen: " + line.replace(src + "/", "")
                     for line in f.read().splitlines() if line.strip()]
    xml_dir = os.path.join(work, "xml")
    for name in sorted(os.listdir(xml_dir)):
        if not name.startswith("namespace"):
            continue
        compound = ET.parse(os.path.join(xml_dir, name)).getroot().find("compounddef")
        if compound is None or compound.get("kind") != "namespace":
            continue
        ns = compound.find("compoundname").text
        if ns in SKIPPED_NAMESPACES or re.search(r"(^|::)(internal|detail)(::|$)", ns):
            continue
        if not (text_of(compound.find("briefdescription")) or
                text_of(compound.find("detaileddescription"))):
            problems.append("namespace %s has no comment (so its free functions go unchecked)" % ns)
    return problems


def self_test(src, work):
    """The check finds a removed class comment, an undocumented function and namespace."""
    copy = os.path.join(work, "src")
    shutil.rmtree(copy, ignore_errors=True)
    for part in ("docs/reference", "core/include", "c_api/include"):
        shutil.copytree(os.path.join(src, part), os.path.join(copy, part))
    op_h = os.path.join(copy, "core/include/hybridnet/op.h")
    with open(op_h, encoding="utf-8") as f:
        text = f.read()
    doc = re.search(r"((?:[ \t]*///[^\n]*\n)+)(class OpRegistry \{)", text)
    assert doc, "OpRegistry's comment not found"
    text = text.replace(doc.group(0), doc.group(2), 1)
    with open(op_h, "w", encoding="utf-8") as f:
        f.write(text)
    operators_h = os.path.join(copy, "core/include/hybridnet/operators.h")
    with open(operators_h, encoding="utf-8") as f:
        text = f.read()
    anchor = "}  // namespace op\n"
    assert anchor in text, "operators.h's namespace op not found"
    text = text.replace(anchor, "NDArray undocumented_function(const NDArray& x);\n\n" + anchor, 1)
    text = text.replace(anchor, anchor + "\nnamespace undocumented_namespace {\nint f();\n}\n", 1)
    with open(operators_h, "w", encoding="utf-8") as f:
        f.write(text)
    problems = check(copy, os.path.join(work, "reference"))
    print("\n".join(problems))
    expected = {"OpRegistry": False, "undocumented_function": False,
                "undocumented_namespace": False}
    for p in problems:
        for key in expected:
            expected[key] = expected[key] or key in p
    missed = [key for key, found in expected.items() if not found]
    if missed or len(problems) != 3:
        print("FAILED: expected exactly 3 problems; missed %s" % missed)
        return 1
    print("ok: the check reports the removed comment, the undocumented function and namespace")
    return 0


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    src, work = sys.argv[1:3]
    if len(sys.argv) == 4:
        sys.exit(self_test(src, work))
    finish(check(src, work), "public C++ symbols or namespaces without a comment",
           "every public C++ symbol of core/include is documented")


if __name__ == "__main__":
    main()
