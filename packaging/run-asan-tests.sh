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
# First the canary: each planted defect must be reported with these options, or a pass
# below would mean nothing.
canary="$dir/bin/asan_canary"
[ -x "$canary" ] || { echo "no $canary: build it with the suites (cmake --build --preset asan --target asan_canary)"; exit 1; }
"$canary" none >/dev/null 2>&1 || { echo "the ASan canary fails without a defect"; exit 1; }
for mode in heap ub leak; do
  if "$canary" "$mode" >"$dir/asan_canary.$mode.log" 2>&1; then
    echo "the ASan canary's planted '$mode' defect was not reported: sanitizer options are broken"; exit 1
  fi
done
echo "canary: heap overflow, signed overflow and leak each reported"

failed=()
total=0
t0=$(date +%s)
for t in "$@"; do
  echo "=== $t"
  start=$(date +%s)
  if "$dir/bin/$t" --gtest_brief=1 >"$dir/$t.asan.log" 2>&1; then
    n=$(sed -nE 's/^\[  PASSED  \] ([0-9]+) tests?\.$/\1/p' "$dir/$t.asan.log")
    [ -n "$n" ] || { failed+=("$t"); echo "    FAILED: no gtest summary (log: $dir/$t.asan.log)"; continue; }
    if grep -q '^\[  SKIPPED \]' "$dir/$t.asan.log"; then
      failed+=("$t"); echo "    FAILED: tests were skipped (log: $dir/$t.asan.log)"; continue
    fi
    total=$((total + n))
    echo "    $n tests passed in $(( $(date +%s) - start )) s"
  else
    failed+=("$t")
    grep -E "ERROR: (Address|Leak|UndefinedBehavior)Sanitizer|runtime error|FAILED" "$dir/$t.asan.log" | head -20
    echo "    FAILED (log: $dir/$t.asan.log)"
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "sanitizer run failed: ${failed[*]}"; exit 1; }
echo "all ${#} test binaries ($total tests) clean under ASan + UBSan in $(( $(date +%s) - t0 )) s"
