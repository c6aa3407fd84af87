#!/usr/bin/env bash
# The fuzz campaign (issue 24): every target of tests/fuzz, one after the other (one process,
# one thread, niced), for SECONDS each; prints the inputs per target and the total.
#
#   bash benches/fuzz.sh [SECONDS]            # default FUZZ_SECONDS or 60
#
# Knobs (environment): FUZZ_TARGETS (space-separated target names; default every target),
# FUZZ_OPT (1, the default: our crate built at opt-level 3 into target/fuzz-build, the
# dependencies as the dev build has them, so the rate is what a release binary parses at;
# 0: the plain test build), FUZZ_TIME_BOUND_MS (CPU per input: 50 with FUZZ_OPT=1, else the
# test default of 250), NICE (19),
# FUZZ_REPORT (a file the per-target lines are appended to; default a temporary one).
# A failure prints the saved input under target/fuzz-crashes/ and its minimised form, and the
# arbtest seed that reproduces it: ARBTEST_SEED=0x… cargo test --test fuzz <target>.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
secs=${1:-${FUZZ_SECONDS:-60}}
nice_level=${NICE:-19}
report=${FUZZ_REPORT:-$(mktemp)}
args=(--locked --test fuzz)
if [ "${FUZZ_OPT:-1}" = 1 ]; then
  export CARGO_TARGET_DIR="$here/target/fuzz-build"
  # Seeded from the dev build so the dependencies are not compiled again.
  # (the host folder too: proc macros and build scripts).
  if [ ! -d "$CARGO_TARGET_DIR" ] && [ -d "$here/target/debug" ]; then
    mkdir -p "$CARGO_TARGET_DIR"
    cp -a "$here/target/debug" "$CARGO_TARGET_DIR/"
  fi
  args+=(--config 'profile.dev.package.rails-spar.opt-level=3')
  export FUZZ_TIME_BOUND_MS=${FUZZ_TIME_BOUND_MS:-50}
fi
nice -n "$nice_level" cargo test "${args[@]}" --no-run -q
all=$(cargo test "${args[@]}" -q -- --list 2>/dev/null | sed -n 's/: test$//p')
targets=""
for t in ${FUZZ_TARGETS:-$all}; do
  full=$(printf '%s\n' $all | grep -E "(^|::)$t\$" | head -1)
  [ -n "$full" ] || { echo "fuzz.sh: no target $t (targets: $(printf '%s ' $all | sed 's/[a-z]*:://g'))" >&2; exit 64; }
  targets="$targets $full"
done
failed=0
start=$(date +%s)
for t in $targets; do
  rc=0
  out=$(FUZZ_SECONDS=$secs FUZZ_REPORT=$report nice -n "$nice_level" \
    cargo test "${args[@]}" -q -- --exact "$t" --nocapture --test-threads=1 2>&1) || rc=$?
  printf '%s\n' "$out" | grep -E '^fuzz |panicked|minimised|took|held|Seed' || true
  if [ "$rc" != 0 ]; then failed=$((failed + 1)); echo "fuzz.sh: $t FAILED"; fi
done
echo
echo "target inputs seconds inputs/s" | awk '{printf "%-24s %12s %9s %10s\n", $1, $2, $3, $4}'
awk -F'\t' '{n[$1]+=$2; s[$1]+=$3} END {for (t in n) printf "%-24s %12d %9.1f %10.0f\n", t, n[t], s[t], n[t]/(s[t]>0?s[t]:1); }' "$report" | sort
awk -F'\t' '{n+=$2; s+=$3} END {printf "%-24s %12d %9.1f\n", "total", n, s}' "$report"
echo "wall time $(( $(date +%s) - start )) s, $failed target(s) failed; report: $report"
[ "$failed" = 0 ]
