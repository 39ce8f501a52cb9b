#!/usr/bin/env bash
# The Python binding's docstrings as HTML (pydoc), from the package installed in the build's
# virtualenv (bindings/python/CMakeLists.txt makes it):  pydoc.sh BUILD OUT
# Problems (a module that fails to import, say) go to stderr, which scripts/docs.sh counts.
set -euo pipefail
build=$1
out=$2
python=$build/bindings/python/venv/bin/python
if [ ! -x "$python" ]; then
  echo "pydoc: $python not found: the Python binding is not built (make build)" >&2
  exit 0
fi
mkdir -p "$out"
"$python" - "$out" <<'PY'
import os
import pkgutil
import pydoc
import re
import sys

import hybridnet

out = sys.argv[1]
names = ["hybridnet"] + sorted(
    m.name for m in pkgutil.walk_packages(hybridnet.__path__, "hybridnet.")
    if not any(part.startswith("_") for part in m.name.split(".")))
for name in names:
    try:
        obj, resolved = pydoc.resolve(name)
        page = pydoc.html.page(pydoc.describe(obj), pydoc.html.document(obj, resolved))
        # pydoc links each module's file in this build's virtualenv: name it within the package.
        page = re.sub(r'<a href="file:[^"]*">[^<]*/site-packages/([^<]*)</a>', r"\1", page)
    except Exception as e:  # reported, not fatal here: docs.sh fails on any stderr line
        print("pydoc: %s: %s" % (name, e), file=sys.stderr)
        continue
    with open(os.path.join(out, name + ".html"), "w", encoding="utf-8") as f:
        f.write(page)
with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
    f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><title>hybridnet Python API</title>'
            '<link rel="stylesheet" href="../style.css"></head><body><main>'
            '<p><a href="../index.html">hybridnet documentation</a></p>'
            "<h1>Python package hybridnet: reference</h1><ul>%s</ul></main></body></html>"
            % "".join('<li><a href="%s.html">%s</a></li>' % (n, n) for n in names))
PY
