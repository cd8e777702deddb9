#!/usr/bin/env python3
"""No function in the .cc files of sentry/ and proxy/ is longer than 60 lines (the project's
standard), counted from the line that names it to its closing brace. Universal Ctags parses the
sources (Debian: universal-ctags); each function's end line is its own, so a lambda counts inside
the function that holds it and is listed by itself only when it is too long on its own. Prints
every function over the limit and fails if there is one, or if ctags found no functions at all.
Run by ctest "FunctionLength": python3 tests/function_length.py <source dir> <ctags>."""
import json
import os
import subprocess
import sys

MAX_LINES = 60
ROOMS = ("sentry", "proxy")

root = sys.argv[1] if len(sys.argv) > 1 else "."
ctags = sys.argv[2] if len(sys.argv) > 2 else "ctags"
files = sorted(os.path.relpath(os.path.join(d, f), root)
               for room in ROOMS for d, _, names in os.walk(os.path.join(root, room))
               for f in names if f.endswith(".cc"))
if not files:
    sys.exit(f"function length: no .cc files under {', '.join(ROOMS)} of {root}")
run = subprocess.run([ctags, "--output-format=json", "--languages=C++", "--kinds-C++=f",
                      "--fields=+ne", "--sort=no", "-o", "-", *files],
                     cwd=root, capture_output=True, text=True)
if run.returncode != 0:
    sys.exit(f"function length: {ctags} failed ({run.stderr.strip()}); it must be Universal Ctags "
             "with JSON output (Debian: universal-ctags)")


def Name(tag):
    """Class::Function, or the function holding a lambda; namespaces are left out."""
    scope = tag.get("scope", "")
    last = scope.rsplit("::", 1)[-1]
    if tag["name"].startswith("__anon"):
        return f"a lambda in {last}"
    if tag.get("scopeKind") in ("class", "struct") and not last.startswith("__anon"):
        return f"{last}::{tag['name']}"
    return tag["name"]


functions = long = 0
for text in run.stdout.splitlines():
    tag = json.loads(text)
    if tag.get("_type") != "tag" or tag.get("kind") != "function":
        continue
    if "end" not in tag:
        sys.exit(f"function length: {ctags} gives no end line ({tag['path']}:{tag['line']}); it must "
                 "be Universal Ctags (Debian: universal-ctags)")
    functions += 1
    lines = tag["end"] - tag["line"] + 1
    if lines > MAX_LINES:
        long += 1
        print(f"{tag['path']}:{tag['line']}: {Name(tag)} is {lines} lines (at most {MAX_LINES}): "
              "split it into functions of one job each")
print(f"function length: {functions} functions in {len(files)} files of {', '.join(ROOMS)}, "
      f"{long} over {MAX_LINES} lines")
sys.exit(1 if long or functions == 0 else 0)
