#!/usr/bin/env bash
# One brace style: every C/C++ source is as clang-format (.clang-format) leaves it.
# Usage: check_format.sh SOURCE_DIR. Lists the files that differ; exits 1 if any.
set -uo pipefail
cd "$1"
command -v clang-format >/dev/null || { echo "check_format: clang-format not installed (scripts/deps.sh installs it)"; exit 1; }
bad=0
for f in $(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' 2>/dev/null || find src include tools apps bench tests -name '*.[ch]' -o -name '*.[ch]pp'); do
  if ! clang-format --style=file "$f" | cmp -s - "$f"; then echo "not formatted: $f (clang-format -i $f)"; bad=1; fi
done
echo "check_format: $([ $bad = 0 ] && echo ok || echo 'files differ')"
exit $bad
