#!/usr/bin/env python3
"""Doxygen INPUT_FILTER for c_api.h: the header's own section banners become the reference's groups.

A banner is a plain comment framed by '=' rules:

    /* ======== ...
     * Tensors: what the section holds ...
     * ======== ... */

It becomes a `@defgroup` named after the text before the first ':', '(' or '.', whose
description is the banner text, and it closes the previous group. The file comment becomes the
`@file` documentation, its indented example a code block; inside a banner, a line indented by
two spaces starts an HTML list item (the Blocks banner's table of kinds; HTML because a
Markdown list would swallow the next paragraph, and no blank line may be added). Line numbers are kept, so Doxygen's
warnings point at the header's real lines; the header itself carries no Doxygen markup for this.
"""
import re
import sys

RULE_OPEN = re.compile(r"^/\* =+$")
RULE_CLOSE = re.compile(r"^ \* =+ \*/$")
LIST_ITEM = re.compile(r"^ \*   (\S.*)$")


def group_id(title):
    words = re.sub(r"[^a-z ]", "", title.lower()).split()
    return "_".join(words) or "section"


def main(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    in_header_comment = lines and lines[0] == "/*"
    example_open = False
    groups_open = 0
    in_banner = False
    in_list = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if i == 0 and in_header_comment:
            out.append("/** @file")
        elif in_header_comment:
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            if line == " *" and nxt.startswith(" *   ") and not example_open:
                out.append(" * @code{.c}")
                example_open = True
            elif line == " *" and example_open:
                out.append(" * @endcode")
                example_open = False
            else:
                out.append(line)
            if line.endswith("*/"):
                in_header_comment = False
        elif RULE_OPEN.match(line) and i + 1 < len(lines):
            title = re.split(r"[:(.]", lines[i + 1][3:], maxsplit=1)[0].strip()
            prefix = "/** @} */ " if groups_open else ""
            out.append(prefix + "/** @defgroup %s %s" % (group_id(title), title))
            groups_open = 1
            in_banner = True
        elif RULE_CLOSE.match(line):
            out.append((" * </li></ul>" if in_list else "") + " * @{ */")
            in_banner = in_list = False
        elif in_banner and LIST_ITEM.match(line):
            out.append(" * %s%s" % ("</li><li>" if in_list else "<ul><li>", LIST_ITEM.match(line).group(1)))
            in_list = True
        elif in_list and not line.startswith(" *    "):
            out.append(" * </li></ul>" + line[2:])
            in_list = False
        else:
            out.append(line)
        i += 1
    if groups_open:
        out.append("/** @} */")
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main(sys.argv[1])
