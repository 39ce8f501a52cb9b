#!/usr/bin/env python3
"""Renders the guides (docs/*.md) into the site, with one navigation, and the operator table.

  render_guides.py DOCS_DIR OUT_DIR OPS_JSON VERSION

OPS_JSON is the output of `hybridnet ops --json` (the registry, through the C API); the line
`{{operator-table}}` of a guide becomes the table of every operator. Relative links that do not
resolve inside OUT_DIR are warnings (stderr), as is a guide missing from the navigation.
"""
import html
import json
import os
import re
import sys

import markdown

# The navigation: guides in reading order, then the references (built before the guides).
GUIDES = ["index", "getting-started", "migrating-from-mxnet", "operators", "performance",
          "quantization", "reliability", "packaging"]
REFERENCES = [("c/index.html", "C API"), ("cpp/index.html", "C++ API"),
              ("java/index.html", "Java (Javadoc)"), ("scala/index.html", "Scala (Scaladoc)"),
              ("spark/index.html", "Spark (Scaladoc)"),
              ("r/index.html", "R"), ("python/index.html", "Python")]

STYLE = """
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #1d1d1f; display: flex; }
nav { width: 15em; flex: none; padding: 1.5em 1em; background: #f4f5f7; min-height: 100vh; }
nav a { display: block; color: #1d1d1f; text-decoration: none; padding: .15em 0; }
nav a.current { font-weight: bold; }
nav h2 { font-size: .8em; text-transform: uppercase; color: #666; margin: 1.5em 0 .3em; }
main { max-width: 60em; padding: 1.5em 2.5em; overflow-x: auto; }
pre { background: #f6f8fa; padding: .8em 1em; overflow-x: auto; font-size: 14px; }
pre.runnable { border-left: 4px solid #2e8b57; }
pre.runnable::before { content: "runnable: compiled and run by ctest -L docs"; display: block;
  font: 12px system-ui, sans-serif; color: #2e8b57; margin-bottom: .4em; }
code { font-size: 90%; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #d0d7de; padding: .3em .6em; vertical-align: top; text-align: left; }
th { background: #f4f5f7; }
"""


def operator_table(ops):
    rows = []
    for op in sorted(ops, key=lambda o: o["name"].lower()):
        attrs = []
        for a in op["attributes"]:
            value = "required" if a["required"] else "= " + (a["default"] or '""')
            attrs.append("<code>%s</code> %s %s" % (html.escape(a["key"]), html.escape(a["type"]),
                                                   html.escape(value)))
        rows.append("<tr id=\"%s\"><td><code>%s</code></td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            html.escape(op["name"]), html.escape(op["name"]),
            ", ".join("<code>%s</code>" % html.escape(a) for a in op["aliases"]),
            "<br>".join(attrs), html.escape(op["description"])))
    return ("<p>%d operators, %d names with aliases.</p>\n<table>\n<tr><th>operator</th>"
            "<th>aliases</th><th>attributes (type, default)</th><th>description</th></tr>\n%s\n"
            "</table>" % (len(ops), len(ops) + sum(len(o["aliases"]) for o in ops), "\n".join(rows)))


def navigation(titles, current, out_dir, version):
    links = ['<a href="index.html"><strong>hybridnet %s</strong></a>' % html.escape(version),
             "<h2>Guides</h2>"]
    for page in GUIDES[1:]:
        if page in titles:
            cls = ' class="current"' if page == current else ""
            links.append('<a href="%s.html"%s>%s</a>' % (page, cls, html.escape(titles[page])))
    for page in sorted(set(titles) - set(GUIDES)):
        links.append('<a href="%s.html">%s</a>' % (page, html.escape(titles[page])))
    links.append("<h2>API reference</h2>")
    for target, label in REFERENCES:
        if os.path.exists(os.path.join(out_dir, target)):
            links.append('<a href="%s">%s</a>' % (target, label))
    return "<nav>\n%s\n</nav>" % "\n".join(links)


def check_links(page, body, out_dir):
    problems = []
    for target in re.findall(r'(?:href|src)="([^"]+)"', body):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        if path and not os.path.exists(os.path.join(out_dir, path)):
            problems.append("%s.md: link to %s, which is not in the site" % (page, target))
    return problems


def main():
    docs_dir, out_dir, ops_json, version = sys.argv[1:5]
    with open(ops_json, encoding="utf-8") as f:
        ops = json.load(f)
    sources, titles = {}, {}
    for name in sorted(os.listdir(docs_dir)):
        if name.endswith(".md"):
            page = name[:-3]
            with open(os.path.join(docs_dir, name), encoding="utf-8") as f:
                sources[page] = f.read()
            title = re.search(r"^# (.+)$", sources[page], re.M)
            titles[page] = title.group(1) if title else page
    problems = ["docs/%s.md is not in the navigation (render_guides.py GUIDES)" % p
                for p in sources if p not in GUIDES]
    problems += ["docs/%s.md is missing" % p for p in GUIDES if p not in sources]
    with open(os.path.join(out_dir, "style.css"), "w", encoding="utf-8") as f:
        f.write(STYLE)
    pages = {}
    for page, text in sources.items():
        table = "{{operator-table}}"
        if table in text:
            text = text.replace(table, operator_table(ops))
        md = markdown.Markdown(extensions=["fenced_code", "tables", "toc", "attr_list"])
        body = md.convert(text)
        # fenced_code puts a block's classes on <code>; the runnable mark goes on <pre> for CSS.
        body = re.sub(r'<pre><code class="([^"]*)\brunnable\b([^"]*)">',
                      lambda m: '<pre class="runnable"><code class="%s">'
                      % " ".join((m.group(1) + m.group(2)).split()), body)
        pages[page] = body
    for page, body in pages.items():
        document = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
                    '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                    "<title>%s - hybridnet %s</title>\n"
                    '<link rel="stylesheet" href="style.css"></head>\n<body>\n%s\n<main>\n%s\n'
                    "</main>\n</body></html>\n" % (html.escape(titles[page]), html.escape(version),
                                                  navigation(titles, page, out_dir, version), body))
        with open(os.path.join(out_dir, page + ".html"), "w", encoding="utf-8") as f:
            f.write(document)
    for page, body in pages.items():
        problems += check_links(page, body, out_dir)
    for p in problems:
        print(p, file=sys.stderr)


if __name__ == "__main__":
    main()
