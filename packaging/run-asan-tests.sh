#!/usr/bin/env bash
# `make test-asan`: runs test binaries built with -fsanitize=address,undefined (asan preset).
# Any sanitizer report fails the run. LibTorch itself is not instrumented; what LSan finds in
# its one-time allocations is suppressed in packaging/asan/lsan.supp (see the README).
set -euo pipefail
dir=${1:?usage: packaging/run-asan-tests.sh BUILD_DIR TEST...}
shift
here=$(cd "$(dirname "$0")" && pwd)
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:strict_init_order=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$here/asan/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
failed=()
for t in "$@"; do
  echo "=== $t"
  start=$(date +%s)
  if "$dir/bin/$t" --gtest_brief=1 >"$dir/$t.asan.log" 2>&1; then
    echo "    passed in $(( $(date +%s) - start )) s"
  else
    failed+=("$t")
    grep -E "ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error|FAILED" "$dir/$t.asan.log" | head -20
    echo "    FAILED (log: $dir/$t.asan.log)"
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "sanitizer run failed: ${failed[*]}"; exit 1; }
echo "all ${#} test binaries clean under ASan + UBSan"
