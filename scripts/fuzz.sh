#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang and runs each for
# SECONDS (default 600) on its checked-in seed corpus, keeping the inputs it
# finds in build-fuzz/corpus/<target>. Prints each target's executions and
# crashes; a crash stops that target, saves its input under
# build-fuzz/crashes/, and makes the script fail (once fixed, add the input
# to tests/fuzz/corpus/<target>/ as a regression input). CI runs it with 30.
#   scripts/fuzz.sh [seconds per target] [target...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
shift || true
scripts/install_packages.sh clang libclang-rt-14-dev
jobs=$(nproc 2>/dev/null || echo 2)
CC=clang cmake -S . -B build-fuzz -DCLRT_FUZZ=ON -DCLRT_WERROR=ON >/dev/null
cmake --build build-fuzz --target clrt-fuzz -j"$jobs" >/dev/null
targets=("$@")
if ((${#targets[@]} == 0)); then
  for f in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$f" .c)"); done
fi
mkdir -p build-fuzz/crashes build-fuzz/logs
failed=0
printf "%-22s %14s %8s %8s\n" target executions seconds crashes
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  log="build-fuzz/logs/$t.log"
  rc=0
  "build-fuzz/tests/fuzz/$t" -max_total_time="$seconds" -timeout=20 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/crashes/$t-" "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" \
    >"$log" 2>&1 || rc=$?
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  crashes=0
  if ((rc != 0)); then
    crashes=1
    failed=1
  fi
  printf "%-22s %14s %8s %8s\n" "$t" "${execs:-?}" "$seconds" "$crashes"
  if ((rc != 0)); then
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -5 >&2 || true
    echo "fuzz: $t failed (exit $rc); log: $log" >&2
  fi
done
exit "$failed"
