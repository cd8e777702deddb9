#!/usr/bin/env bash
# ctest "Format": every C and C++ source of the project is as clang-format leaves it (.clang-format
# at the root). Prints the files that are not; fix with `clang-format-14 -i FILE`.
set -euo pipefail
cd "$1"
tool=$2
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' 2>/dev/null | grep -v '^tests/transparency/' ||
                     find abi policy proxy hostshim sentry tests bench examples \
                          \( -name '*.cc' -o -name '*.h' -o -name '*.c' \) -not -path 'tests/transparency/*')
bad=0
for f in "${files[@]}"; do
  if ! "$tool" --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f"
    bad=$((bad + 1))
  fi
done
echo "format: ${#files[@]} files checked, $bad not formatted"
[ "$bad" -eq 0 ]
