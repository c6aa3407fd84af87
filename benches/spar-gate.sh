#!/usr/bin/env bash
# The spar gate at ROUNDS rounds next to `git log --oneline -1` of its series (issue 33's
# budget: the first gate after a new round, with the earlier rounds' memo warm, ≤ 3×): a
# benchmark, not a test.
#
#   cargo build --release && bash benches/spar-gate.sh
#
# The series is made as benches/figures.sh makes its series (its `rounds()`: `git spar run` of
# one command reviewer returning FINDINGS findings, ROUNDS times). Then, RUNS times each and
# side by side, medians in milliseconds:
#
#   log      git log --oneline -1 refs/spar/series/S
#   after    the gate over every round, the first after the newest round: the memo holds the
#            series as it was one round before (a gate over ROUNDS-1 rounds ran then)
#   again    the same gate asked again (its own memo entry there)
#   cold     the gate with nothing kept (a fresh clone's first gate; no memo at all)
#
# Knobs (environment): ROUNDS (1000), FINDINGS (20), RUNS (30), BIN (the folder of the
# binaries, default target/release), KEEP (1: keep the fixture and print where it is).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-"$here/target/release"}
[ -x "$bin/git-spar" ] || { echo "bench: build first: cargo build --release" >&2; exit 1; }
ROUNDS=${ROUNDS:-1000} FINDINGS=${FINDINGS:-20} RUNS=${RUNS:-30}

work=$(mktemp -d)
if [ "${KEEP:-0}" = 1 ]; then echo "bench: fixture kept in $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/home" "$work/xdg"
export PATH="$bin:$PATH" HOME="$work/home" XDG_CONFIG_HOME="$work/xdg" SPAR_CONFIG="$work/spar.toml"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
log() { printf 'bench: %s\n' "$*" >&2; }

repo="$work/repo"
git init -q -b review "$repo"
cd "$repo"
mkdir -p app docs .jaekit
printf 'fn main() {}\n' > app/main.rs; printf 'pub fn f() {}\n' > app/lib.rs; printf 'notes\n' > docs/notes.md
printf '[caps]\ncode = 100000\n' > .jaekit/spar.toml
git add -A && git commit -q -m "review base"
review_base=$(git rev-parse HEAD)
printf 'fn main() {\n    println!("hi");\n}\n' > app/main.rs
printf 'pub fn f() -> u8 {\n    1\n}\n' > app/lib.rs
git commit -qam "review change"
review_head=$(git rev-parse HEAD)

# The reviewer: a result every input rule accepts (benches/figures.sh's result_json).
python3 - "$review_head" "$FINDINGS" R > "$work/round-result.json" <<'PY'
import json, sys
head, n, prefix = sys.argv[1], int(sys.argv[2]), sys.argv[3]
angles = ["correctness", "regression", "checks", "contract", "security"]
files = ["app/main.rs", "app/lib.rs", "docs/notes.md"]
print(json.dumps({
    "reviewed_head": head,
    "verdict": "no_blocking_findings",
    "angles_checked": [{"angle": a, "result": "looked"} for a in angles],
    "angles_unchecked": [],
    "findings": [{
        "id": f"{prefix}{i}", "proposed_class": "note", "angle": angles[i % 5],
        "location": f"head/{files[i % 3]}:{1 + i % 3}", "claim": f"claim {i}",
        "failure_scenario": "none in practice", "evidence": "read the file", "link_kind": "none",
        "link": "", "introduced_by_change": "no", "regression": "no", "check_impact": "none",
        "confidence": "low"} for i in range(1, n + 1)],
    "limits": "",
}, indent=2))
PY
printf '#!/bin/sh\ncat %s\n' "$work/round-result.json" > "$work/reviewer.sh" && chmod +x "$work/reviewer.sh"
cat > "$SPAR_CONFIG" <<TOML
timeout_seconds = 120

[[reviewers]]
name = "lint"
preset = "command"
argv = ["$work/reviewer.sh", "{prompt}"]
TOML

log "series S: $ROUNDS rounds of $FINDINGS findings"
for i in $(seq 1 "$ROUNDS"); do
  git spar run --base "$review_base" --head "$review_head" --series S --reviewers lint >/dev/null 2>&1 \
    || { echo "bench: git spar run failed at round $i" >&2; exit 1; }
done
list() { local i; for i in $(seq 1 "$1"); do printf 'S:code-%s ' "$i"; done; }
list "$ROUNDS" > "$work/all"
common=$(git rev-parse --path-format=absolute --git-common-dir)

# The memo as it is right after the newest round: one gate over the rounds before it.
tip=$(git rev-parse refs/spar/series/S)
git update-ref refs/spar/series/S "$tip~1"
git-spar gate $(list $((ROUNDS - 1))) >/dev/null || true
git update-ref refs/spar/series/S "$tip"
rm -rf "$work/memo-before"
[ -d "$common/rails/cache" ] && cp -a "$common/rails/cache" "$work/memo-before"

python3 - "$RUNS" "$work" "$common" <<'PY'
import os, shutil, statistics, subprocess, sys, time
runs, work, common = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rounds = open(f"{work}/all").read().split()
cache = f"{common}/rails/cache"
def reset(to):
    shutil.rmtree(cache, ignore_errors=True)
    if to and os.path.isdir(to):
        shutil.copytree(to, cache)
def once(argv, prep=None):
    if prep:
        prep()
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
gate = ["git-spar", "gate", *rounds]
rows = {
    "log": (["git", "log", "--oneline", "-1", "refs/spar/series/S"], None),
    "after": (gate, lambda: reset(f"{work}/memo-before")),
    "again": (gate, None),
    "cold": (gate, lambda: reset(None)),
}
times = {k: [] for k in rows}
for _ in range(runs):
    for k, (argv, prep) in rows.items():
        if k == "again":
            once(gate)  # its entry written, then measured
        times[k].append(once(argv, prep))
log = statistics.median(times["log"])
print(f"| rows: {len(rounds)} rounds, {runs} runs each, medians | ms | × git log -1 |")
print("|---|---|---|")
for k in rows:
    m = statistics.median(times[k])
    print(f"| {k} | {m:.2f} | {m / log:.2f} |")
PY
