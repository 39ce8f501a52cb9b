#!/usr/bin/env python3
"""Every public Scala definition has a Scaladoc comment (Scaladoc itself has no such check).

  check_scaladoc.py DIR...        the .scala files under each DIR
  check_scaladoc.py --self-test   a sample with known gaps: it must find exactly those

A definition (class, trait, object, def, val, var, type) is public API when it sits directly in
a package, class, trait or object body whose owners are public too, and carries no private or
protected modifier. `override` members inherit their comment and are skipped, as Scaladoc
copies the overridden member's. Its comment is the /** ... */ right before it (annotations may
come between). Bodies of defs and vals are not templates: what is declared there is local.
"""
import os
import re
import sys

from report import finish

DEFINITION = re.compile(
    r"^\s*(?P<mods>(?:(?:private|protected)(?:\[\w+\])?\s+|(?:final|sealed|abstract|case|implicit|"
    r"override|lazy)\s+)*)(?:package\s+)?(?P<kind>class|trait|object|def|val|var|type)\s+(?P<name>`[^`]+`|[^\s\[(:=]+)")
ANNOTATION = re.compile(r"^\s*@\w+(\([^)]*\))?\s*$")


def code_lines(text):
    """Each line's code without comments and string contents, and whether a /** */ ends on it."""
    result = []
    in_block, block_is_doc = False, False
    for raw in text.split("\n"):
        code, doc_end, i = [], False, 0
        while i < len(raw):
            if in_block:
                end = raw.find("*/", i)
                if end < 0:
                    i = len(raw)
                    break
                in_block, doc_end, i = False, block_is_doc, end + 2
                continue
            c = raw[i]
            if raw.startswith("//", i):
                break
            if raw.startswith("/*", i):
                in_block, block_is_doc = True, raw.startswith("/**", i) and not raw.startswith("/**/", i)
                i += 3 if block_is_doc else 2
                continue
            if raw.startswith('"""', i):
                end = raw.find('"""', i + 3)
                code.append('""')
                i = len(raw) if end < 0 else end + 3
                continue
            if c == '"':
                j = i + 1
                while j < len(raw) and raw[j] != '"':
                    j += 2 if raw[j] == "\\" else 1
                code.append('""')
                i = j + 1
                continue
            if c == "'" and i + 2 < len(raw) and (raw[i + 2] == "'" or raw[i + 1] == "\\"):
                end = raw.find("'", i + 2)
                code.append("' '")
                i = len(raw) if end < 0 else end + 1
                continue
            code.append(c)
            i += 1
        line = "".join(code)
        result.append((line, doc_end and not line.strip()))
    return result


def documented(lines, i):
    for j in range(i - 1, -1, -1):
        code, doc_end = lines[j]
        if doc_end:
            return True
        if not code.strip() or ANNOTATION.match(code):
            continue
        return False
    return False


def check_text(text, where):
    lines = code_lines(text)
    problems = []
    # Each open brace: (is a template body, is public).
    stack = [(True, True)]
    pending = None  # a class/trait/object header waiting for its "{": its visibility
    parens = 0  # open parentheses: a line inside a parameter list declares parameters
    for i, (code, _) in enumerate(lines):
        m = DEFINITION.match(code) if parens == 0 else None
        if m:
            template, public = stack[-1]
            mods = m.group("mods")
            hidden = "private" in mods or "protected" in mods
            if template and public and not hidden and "override" not in mods:
                if not documented(lines, i):
                    problems.append("%s:%d: %s %s has no Scaladoc comment"
                                    % (where, i + 1, m.group("kind"), m.group("name")))
            if m.group("kind") in ("class", "trait", "object"):
                pending = public and not hidden and template
        for c in code:
            if c == "{":
                if pending is not None:
                    stack.append((True, pending))
                    pending = None
                else:
                    stack.append((False, False))
            elif c == "}" and len(stack) > 1:
                stack.pop()
            elif c == "(":
                parens += 1
            elif c == ")" and parens > 0:
                parens -= 1
        # A header ending on this line without "{" has no body, unless the next code line
        # continues it ("extends ...", "with ...", "{").
        if pending is not None and "{" not in code and code.strip() and parens == 0 \
                and not re.search(r"\b(extends|with)\s*$|[(,]\s*$", code):
            following = next((c.strip() for c, _ in lines[i + 1:] if c.strip()), "")
            if not re.match(r"(extends|with)\b|\{", following):
                pending = None
    return problems


def check(dirs):
    problems = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for name in sorted(files):
                if name.endswith(".scala"):
                    path = os.path.join(root, name)
                    with open(path, encoding="utf-8") as f:
                        problems += check_text(f.read(), path)
    return problems


SAMPLE = '''package x

/** Documented. */
final class A(val n: Int,
              val m: Int) extends AutoCloseable {
  /** Documented. */
  def a: Int = 1
  def missingDef: Int = { val local = 2; local }
  override def close(): Unit = ()
  private def hidden: Int = 3
  private[x] val alsoHidden = 4
  /** Documented, with a brace in a string. */
  @deprecated("use a", "1")
  def b: String = "{"
}

object MissingObject {
  val missingVal = 1
  def body(): Unit = {
    def local(): Int = 1
    object LocalObject
  }
}

private[x] object Internal {
  def notApi: Int = 1
}

/** Documented. */
sealed trait T

/** Documented, its header on two lines. */
final class B private (val n: Int)
    extends T {
  def missingMember: Int = n
}

/** Documented. */
package object pkg {
  type MissingAlias = Int
}
'''


def self_test():
    problems = check_text(SAMPLE, "sample")
    print("\n".join(problems))
    expected = ["def missingDef", "object MissingObject", "val missingVal", "def body",
                "type MissingAlias", "def missingMember"]
    found = [e for e in expected if any(e in p for p in problems)]
    if found != expected or len(problems) != len(expected):
        print("FAILED: expected exactly %s" % expected)
        return 1
    print("ok: the check reports the undocumented public definitions and nothing else")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    finish(check(sys.argv[1:]), "public Scala definitions without a Scaladoc comment",
           "every public Scala definition has a Scaladoc comment")


if __name__ == "__main__":
    main()
