#!/usr/bin/env bash
# The tool's own cost next to git's (issue 10): a benchmark, not a test.
#
#   cargo build --release && bash benches/figures.sh
#
# Builds one fixture repository deterministically (COMMITS commits, a sprint with TRANSITIONS
# evidence transitions, a spar series of ROUNDS rounds with FINDINGS findings each, a change of
# FILES files, a result of RECORD_FINDINGS findings), then measures each command side by side
# with its anchor in one hyperfine run, and prints per figure: both means, the wall-clock ratio,
# the ratio of instructions counted by callgrind (stable on a busy machine), our peak memory,
# and the target. Then how the costs grow: the gates at 10, 100 and 1,000 transitions and
# rounds, and the pre-push hook at 1,000, 10,000 and 50,000 commits. The gate and hook figures
# are measured again in a second fixture with Git 3.0's defaults (SHA-256 objects, reftable refs),
# where refs are read through git's plumbing (REFTABLE=0 skips it; needs git 2.45 or newer).
#
# Knobs (environment): RUNS (hyperfine runs per command, default 100), BIG_RUNS (for the
# 5,000-file run and the record, default 20), COMMITS (10000),
# TRANSITIONS (1000), ROUNDS (200), FINDINGS (20), FILES (5000), RECORD_FINDINGS (1000),
# GROWTH (1: measure growth too; 0: skip), GROWTH_SIZES ("10 100 1000"),
# GROWTH_COMMITS ("1000 10000 50000"), CALLGRIND (1: count instructions; 0: skip),
# REFTABLE (1: the reftable figures too; 0: skip), HOOK_MANAGERS (1: our hooks beside the no-op
# hooks of pre-commit, lefthook and husky, installed pinned into HOOK_MANAGERS_DIR, default
# .ci/hook-managers; needs python3 and npm; 0: skip),
# KEEP (1: keep the fixture folder and print where it is), BIN (the folder of the binaries),
# SPAR_GROWTH (1: the spar gate at SPAR_GROWTH_ROUNDS rounds and spar's memory with a 1 GiB
# reviewer output; 0: skip), SPAR_GROWTH_ROUNDS ("100 1000 5000").
#
# Needs hyperfine, valgrind (for CALLGRIND=1), jq, python3 and GNU time (/usr/bin/time).
# hyperfine 1.16 or later gives a hook its stdin itself (`--input`); with an older one a hook
# runs under one more `sh -c`, which counts against it, and the script says so.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-"$here/target/release"}
[ -x "$bin/git-rails" ] && [ -x "$bin/git-spar" ] || { echo "bench: build first: cargo build --release" >&2; exit 1; }
for t in hyperfine jq python3 /usr/bin/time; do
  command -v "$t" >/dev/null || { echo "bench: needs $t (apt-get install hyperfine jq python3 time valgrind)" >&2; exit 1; }
done
RUNS=${RUNS:-100} COMMITS=${COMMITS:-10000} TRANSITIONS=${TRANSITIONS:-1000}
ROUNDS=${ROUNDS:-200} FINDINGS=${FINDINGS:-20} FILES=${FILES:-5000}
RECORD_FINDINGS=${RECORD_FINDINGS:-1000} GROWTH=${GROWTH:-1} CALLGRIND=${CALLGRIND:-1}
BIG_RUNS=${BIG_RUNS:-20} REFTABLE=${REFTABLE:-1} HOOK_MANAGERS=${HOOK_MANAGERS:-1}
GROWTH_SIZES=${GROWTH_SIZES:-"10 100 1000"} GROWTH_COMMITS=${GROWTH_COMMITS:-"1000 10000 50000"}
if [ "$CALLGRIND" = 1 ] && ! command -v valgrind >/dev/null; then
  echo "bench: valgrind not found; instruction counts skipped (CALLGRIND=0)" >&2
  CALLGRIND=0
fi

work=$(mktemp -d)
if [ "${KEEP:-0}" = 1 ]; then echo "bench: fixture kept in $work" >&2; else trap 'rm -rf "$work"' EXIT; fi
mkdir -p "$work/home" "$work/xdg"
# Hermetic: no system or user git configuration, a fixed identity, spar's user file ours.
export PATH="$bin:$PATH" HOME="$work/home" XDG_CONFIG_HOME="$work/xdg" SPAR_CONFIG="$work/spar.toml"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
log() { printf 'bench: %s\n' "$*" >&2; }

# ---- the fixture -------------------------------------------------------------------------

commits() { # $1 = folder, $2 = commits on main (fast-import, deterministic), $3... = init options
  git init -q -b main "${@:3}" "$1"
  python3 - "$2" <<'PY' | git -C "$1" fast-import --quiet
import sys
n = int(sys.argv[1])
for i in range(1, n + 1):
    body = f"line {i}\n"
    print(f"commit refs/heads/main\nmark :{i}\ncommitter b <b@x> {1700000000 + i} +0000")
    msg = f"c{i}"
    print(f"data {len(msg)}\n{msg}")
    if i > 1:
        print(f"from :{i - 1}")
    print(f"M 644 inline dir{i % 100}/f{i % 1000}.txt\ndata {len(body)}\n{body}")
    print()
PY
  git -C "$1" reset -q --hard main
  echo ".rails/" >> "$1/.git/info/exclude"
}

sprint() { # $1 = sprint, $2 = transitions (red, green, surface, then cleanups); in the cwd
  local s=$1 n=$2
  mkdir -p .rails/contracts
  cat > ".rails/contracts/$s.json" <<JSON
{"version":"v1","id":"01JDQ7ZK3M8T5V2W9X4Y6Z0ABC","sprintId":"$s","createdAt":"2026-11-30T12:00:00Z",
 "type":"feature","dod":{"checks":[{"id":"c1","description":"proof exists","kind":"file_exists","spec":{"path":"proof-$s.txt"},"scope":["proof-$s.txt"]}]},
 "environmentPrerequisites":[],"nonGoals":[],"runtimeValidation":{"commands":[]},"riskFlags":[],
 "reviewerProfile":"static","approvalGates":{}}
JSON
  git rails contract freeze "$s" >/dev/null
  git rails evidence red "$s" c1 >/dev/null
  echo proof > "proof-$s.txt" && git add "proof-$s.txt" && git commit -q -m "proof $s"
  git rails evidence green "$s" c1 >/dev/null
  git rails evidence surface "$s" c1 --note bench >/dev/null
  local i
  for i in $(seq 4 "$n"); do git rails evidence cleanup "$s" c1 --note "receipt $i" >/dev/null; done
}

result_json() { # $1 = head, $2 = findings, $3 = id prefix: a result every G1–G6 rule accepts
  python3 - "$1" "$2" "$3" <<'PY'
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
}

repo="$work/repo"
log "fixture: $COMMITS commits, $TRANSITIONS transitions, $ROUNDS rounds x $FINDINGS findings, a $FILES-file change"
commits "$repo" "$COMMITS"
cd "$repo"
sprint B "$TRANSITIONS"
git rails contract bind B >/dev/null
git rails hooks install >/dev/null
git rails gate >/dev/null || { echo "bench: the fixture's gate does not pass" >&2; exit 1; }

# The reviewed change lives on its own small branch, so a round copies a small tree.
git checkout -q --orphan review
git rm -rq --cached . && git clean -fdxq -e .rails
mkdir -p app docs .jaekit
printf 'fn main() {}\n' > app/main.rs; printf 'pub fn f() {}\n' > app/lib.rs; printf 'notes\n' > docs/notes.md
printf '[caps]\ncode = 100000\n' > .jaekit/spar.toml
git add -A && git commit -q -m "review base"
review_base=$(git rev-parse HEAD)
printf 'fn main() {\n    println!("hi");\n}\n' > app/main.rs
printf 'pub fn f() -> u8 {\n    1\n}\n' > app/lib.rs
git commit -qam "review change"
review_head=$(git rev-parse HEAD)
# The big change: FILES new files on top of the review base.
git checkout -q -b big "$review_base"
python3 - "$FILES" <<'PY'
import os, sys
for i in range(int(sys.argv[1])):
    d = f"src/m{i % 50}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i}.rs", "w") as f:
        f.write(f"// file {i}\npub fn f{i}() -> usize {{\n    {i}\n}}\n")
PY
git add -A && git commit -q -m "a $FILES-file change"
big_head=$(git rev-parse HEAD)
git checkout -q review

reviewer="$work/reviewer.sh"
result_json "$review_head" "$FINDINGS" R > "$work/round-result.json"
printf '#!/bin/sh\ncat %s\n' "$work/round-result.json" > "$reviewer" && chmod +x "$reviewer"
cat > "$SPAR_CONFIG" <<TOML
timeout_seconds = 120

[[reviewers]]
name = "lint"
preset = "command"
argv = ["$reviewer", "{prompt}"]

[[reviewers]]
name = "host"
preset = "native"
TOML

rounds() { # $1 = series, $2 = rounds
  local i
  for i in $(seq 1 "$2"); do
    git spar run --base "$review_base" --head "$review_head" --series "$1" --reviewers lint >/dev/null 2>&1 \
      || { echo "bench: git spar run failed for $1 round $i" >&2; git spar run --base "$review_base" --head "$review_head" --series "$1" --reviewers lint >&2; exit 1; }
  done
}
log "spar series S: $ROUNDS rounds"
rounds S "$ROUNDS"
round_list() { local i; for i in $(seq 1 "$2"); do printf '%s:code-%s ' "$1" "$i"; done; }
# The same row as figure(), for commands whose cost is mostly the file system's (thousands of
# files created): the two commands run in turn, ours then the anchor, each after the prepare
# script and a `sync`, so a disk that drifts (other writers, ext4 discards of the last run's
# files) weighs on both alike; the means are medians and the ratio is the median of the pairs.
paired_figure() {
  local what=$1 ours=$2 aname=$3 anchor=$4 target=$5 mem=$6 stdin=$7 prep=$8
  printf '%s\n' "sh $prep" > "$work/prep.sh"
  python3 - "$RUNS" "$prep" "$ours" "$anchor" > "$work/paired.txt" <<'PY'
import statistics, subprocess, sys, time
runs, prep, ours, anchor = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def once(cmd):
    subprocess.run(["sh", prep], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    subprocess.run(["sync"])
    t = time.perf_counter()
    subprocess.run(["sh", "-c", cmd], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1000
once(ours); once(anchor)
pairs = [(once(ours), once(anchor)) for _ in range(runs)]
o = statistics.median(p[0] for p in pairs); a = statistics.median(p[1] for p in pairs)
r = statistics.median(p[0] / p[1] for p in pairs)
spread = max(p[0] / p[1] for p in pairs) / min(p[0] / p[1] for p in pairs)
print(o, a, r, spread)
PY
  local mo ma r spread io ia kib
  read -r mo ma r spread < "$work/paired.txt"
  io=$(instructions "$ours"); ia=$(instructions "$anchor")
  kib=$(peak_kib "$mem" "$stdin")
  python3 - "$what" "$mo" "$aname" "$ma" "$io" "$ia" "$target" "$kib" "$r" "$spread" >> "$table" <<'PY'
import sys
what, mo, aname, ma, io, ia, target, kib, r, spread = sys.argv[1:]
mo, ma, io, ia, target, kib, r = float(mo), float(ma), float(io), float(ia), float(target), float(kib or 0), float(r)
ins = f"{io / ia:.2f}" if ia else "–"
ok = "✓" if r <= target else "✗"
mem = f"{kib / 1024:.1f} MiB" + (" ✓" if kib <= 64 * 1024 else " ✗")
print(f"| {what} | {mo:.1f} ms | {aname} | {ma:.1f} ms | {r:.2f} {ok} (pairs spread {float(spread):.2f}×) | {ins} | ≤ {target:g}× | {mem} |")
PY
  log "measured: $what"
}

# The state right after a new record: the gate's memo (rails/cache/spar-gate, store::Memo) holds
# the series' view at the tip before the newest round, and none for the new tip.
# $1 series, $2 rounds, $3 the prepare script.
spar_after_record_prep() {
  local s=$1 n=$2 prep=$3 tip prev memo
  memo="$(git rev-parse --path-format=absolute --git-common-dir)/rails/cache/spar-gate"
  tip=$(git rev-parse "refs/spar/series/$s"); prev=$(git rev-parse "refs/spar/series/$s~1")
  rm -rf "$memo"
  git update-ref "refs/spar/series/$s" "$prev"
  git-spar gate $(round_list "$s" $((n - 1))) >/dev/null 2>&1 || true
  rm -rf "$work/memo-$s-before"; cp -r "$memo" "$work/memo-$s-before"
  git update-ref "refs/spar/series/$s" "$tip"
  cat > "$prep" <<SH
rm -rf "$memo"
cp -r "$work/memo-$s-before" "$memo"
SH
}

# A round with a pending native reviewer, for `git spar record`.
git spar run --base "$review_base" --head "$review_head" --series N --reviewers host >/dev/null 2>&1
result_json "$review_head" "$RECORD_FINDINGS" H > "$work/record-result.json"
n_series=$(git rev-parse refs/spar/series/N)
n_notes=$(git rev-parse -q --verify refs/notes/spar || true)
cat > "$work/prep-record.sh" <<SH
git update-ref refs/spar/series/N $n_series
${n_notes:+git update-ref refs/notes/spar $n_notes}
SH
cat > "$work/prep-dry.sh" <<SH
rm -rf "$work/out" "$work/arch"; mkdir -p "$work/arch"
git update-ref -d refs/spar/series/D 2>/dev/null || true
SH
git checkout -q main
# The pushed commit names its sprint (the commit-msg hook adds the trailer on a bound branch),
# so the pushes below are judged, not waved through as naming none.
# The ten newest commits of main are made here, as a user makes them: loose objects until a
# `git gc` (the 10,000 before them came packed from fast-import).
for i in $(seq 1 9); do git commit -q --allow-empty -m "bench: work $i"; done
git commit -q --allow-empty -m "bench: a commit on the bound branch"
git log -1 --format=%B | grep -q '^Rails-Sprint: B$' || { echo "bench: the commit-msg hook added no trailer" >&2; exit 1; }
head=$(git rev-parse HEAD)
# Two pushes of main: the common one updates a branch the remote has (10 new commits to read),
# the worst one creates it on a remote nothing is known of (every commit is new: the hook reads
# at most 1,000 of them for `Rails-Sprint:` trailers).
printf 'refs/heads/main %s refs/heads/main %s\n' "$head" "$(printf '0%.0s' $(seq 40))" > "$work/push.in"
printf 'refs/heads/main %s refs/heads/main %s\n' "$head" "$(git rev-parse HEAD~10)" > "$work/push-update.in"

# The same sprint in a Git 3.0 repository: SHA-256 objects, refs in reftable.
repo3="$work/repo3"
if [ "$REFTABLE" = 1 ]; then
  log "fixture with Git 3.0 defaults (sha256, reftable): $COMMITS commits, $TRANSITIONS transitions"
  (
    commits "$repo3" "$COMMITS" --object-format=sha256 --ref-format=reftable
    cd "$repo3"
    [ "$(git rev-parse --show-ref-format)" = reftable ] || { echo "bench: git made no reftable repository" >&2; exit 1; }
    sprint B "$TRANSITIONS"
    git rails contract bind B >/dev/null
    git rails hooks install >/dev/null
    for i in $(seq 1 9); do git commit -q --allow-empty -m "bench: work $i"; done
    git commit -q --allow-empty -m "bench: a commit on the bound branch"
    git rails gate >/dev/null || { echo "bench: the reftable fixture's gate does not pass" >&2; exit 1; }
    printf 'refs/heads/main %s refs/heads/main %s\n' "$(git rev-parse HEAD)" "$(git rev-parse HEAD~10)" > "$work/push3.in"
  )
fi

# ---- measuring ---------------------------------------------------------------------------

# Instructions of a command and of every process it starts (callgrind, summed). A trailing
# `< file` is its stdin, given by this script; a command with other shell syntax runs under
# `sh -c` (whose own start is then counted too); any other runs as it is, with no shell.
instructions() { # $1 = shell command
  [ "$CALLGRIND" = 1 ] || { echo 0; return; }
  local d cmd=$1 input=/dev/null
  case $cmd in *' < '*) input=${cmd##* < }; cmd=${cmd% < *} ;; esac
  d=$(mktemp -d)
  sh "$work/prep.sh" >/dev/null 2>&1 || true
  case $cmd in
    *'<'*|*'|'*|*'>'*|*';'*|*'&'*|*"'"*) set -- sh -c "$cmd" ;;
    # shellcheck disable=SC2086
    *) set -- $cmd ;;
  esac
  # --dump-before=execve: a process that execs another (a hook's sh execs git-rails) leaves
  # its own count too, not only the last image's.
  valgrind --tool=callgrind --trace-children=yes --dump-before=execve --callgrind-out-file="$d/cg.%p" \
    "$@" >/dev/null 2>&1 < "$input" || true
  cat "$d"/cg.* | awk '/^summary:/ { s += $2 } END { print s + 0 }'
  rm -rf "$d"
}

# Peak resident memory (KiB) of one of our commands (not of the shell around it).
peak_kib() { # $1 = command line without shell syntax, $2 = stdin file
  sh "$work/prep.sh" >/dev/null 2>&1 || true
  # shellcheck disable=SC2086
  /usr/bin/time -f '%M' -o "$work/rss" $1 < "$2" >/dev/null 2>&1 || true
  tail -1 "$work/rss"
}

table="$work/table.md"
printf '| what | mean | anchor | anchor mean | wall ratio | instructions ratio | target | peak memory |\n|:---|---:|:---|---:|---:|---:|---:|---:|\n' > "$table"

# hyperfine's arguments for a command it starts without a shell: as it is, with a trailing
# `< file` given as its stdin by hyperfine itself (`--input`, hyperfine 1.16 and later), or
# under `sh -c` when it has other shell syntax (or this hyperfine cannot give a stdin), which
# counts against it. Each command is one `-n name command` group (`--input` applies to all
# commands of a run, so a run mixes no stdins: the anchor reads the same file).
HYPERFINE_INPUT=0
hyperfine --help 2>/dev/null | grep -q -- '--input' && HYPERFINE_INPUT=1
[ "$HYPERFINE_INPUT" = 1 ] || log "$(hyperfine --version) has no --input: a hook with its stdin runs under one more sh -c"
no_shell() {
  local cmd=$1
  if [ "$HYPERFINE_INPUT" = 1 ]; then
    case $cmd in *' < '*) cmd=${cmd% < *} ;; esac
  fi
  case $cmd in
    *'<'*|*'|'*|*'>'*|*';'*|*'&'*|*"'"*) printf "sh -c %q" "$cmd" ;;
    *) printf '%s' "$cmd" ;;
  esac
}
# The `--input` arguments for a command whose trailing `< file` hyperfine gives (none else).
input_of() {
  case $1 in *' < '*) [ "$HYPERFINE_INPUT" = 1 ] && printf -- '--input\n%s\n' "${1##* < }" ;; esac
  return 0
}

# $1 what, $2 our command (shell), $3 anchor name, $4 anchor command (shell), $5 target ratio,
# $6 our command for the memory figure (no shell syntax), $7 its stdin, $8 prepare script or ''
figure() {
  local what=$1 ours=$2 aname=$3 anchor=$4 target=$5 mem=$6 stdin=$7 prep=${8:-}
  printf '%s\n' "${prep:+sh $prep}" > "$work/prep.sh"
  # No shell between hyperfine and the command (-N): on a busy machine hyperfine's estimate of a
  # shell's start is noisier than a 2 ms command and clamps a mean to 0. A hook's stdin is given
  # by hyperfine (see no_shell); other shell syntax runs under `sh -c`, which counts against us.
  local args=(-N --warmup 5 --runs "$RUNS" -i --export-json "$work/h.json")
  [ -n "$prep" ] && args+=(--prepare "sh $prep")
  mapfile -t inp < <(input_of "$ours")
  hyperfine "${args[@]}" "${inp[@]}" -n ours "$(no_shell "$ours")" -n anchor "$(no_shell "$anchor")" >/dev/null 2>&1
  local mo ma io ia kib
  mo=$(jq '.results[0].mean * 1000' "$work/h.json"); ma=$(jq '.results[1].mean * 1000' "$work/h.json")
  io=$(instructions "$ours"); ia=$(instructions "$anchor")
  kib=$(peak_kib "$mem" "$stdin")
  python3 - "$what" "$mo" "$aname" "$ma" "$io" "$ia" "$target" "$kib" >> "$table" <<'PY'
import sys
what, mo, aname, ma, io, ia, target, kib = sys.argv[1:]
mo, ma, io, ia, target, kib = float(mo), float(ma), float(io), float(ia), float(target), float(kib or 0)
wall = mo / ma
ins = f"{io / ia:.2f}" if ia else "–"
ok = "✓" if wall <= target else "✗"
mem = f"{kib / 1024:.1f} MiB" + (" ✓" if kib <= 64 * 1024 else " ✗")
print(f"| {what} | {mo:.1f} ms | {aname} | {ma:.1f} ms | {wall:.2f} {ok} | {ins} | ≤ {target:g}× | {mem} |")
PY
  log "measured: $what"
}

figure "git rails gate (passing, $TRANSITIONS transitions)" "git-rails gate" \
  "git rev-parse HEAD" "git rev-parse HEAD" 2 "git-rails gate" /dev/null
# The hook script runs in its own /bin/sh, as when git runs it, its stdin given by hyperfine
# and by this script (see no_shell and instructions), so no other shell is counted.
figure "installed pre-push hook, main updated by 10 commits (passing)" ".git/hooks/pre-push origin url < $work/push-update.in" \
  "git rev-parse HEAD" "git rev-parse HEAD" 2 "git-rails hook pre-push origin url" "$work/push-update.in"
# The commit-msg hook on the bound branch: a fresh one-line message each run, to which it adds
# the sprint's trailer (the spec's hook target covers it as it covers pre-push).
printf 'a change\n' > "$work/cm.orig" && cp "$work/cm.orig" "$work/cm"
printf 'cp %s %s\n' "$work/cm.orig" "$work/cm" > "$work/prep-cm.sh"
figure "installed commit-msg hook on the bound branch (adds Rails-Sprint)" ".git/hooks/commit-msg $work/cm" \
  "git rev-parse HEAD" "git rev-parse HEAD" 2 "git-rails hook commit-msg $work/cm" /dev/null "$work/prep-cm.sh"
# The worst case reads 1,000 commit messages; its anchor is git reading the same messages.
figure "installed pre-push hook, main new on an empty remote (reads 1,000 commits)" ".git/hooks/pre-push origin url < $work/push.in" \
  "git log -1000 --format=%B" "git log -1000 --format=%B" 2 "git-rails hook pre-push origin url" "$work/push.in"
figure "git spar gate over $ROUNDS rounds ($FINDINGS findings each)" "git-spar gate $(round_list S "$ROUNDS")" \
  "git log --oneline -1 refs/spar/series/S" "git log --oneline -1 refs/spar/series/S" 3 \
  "git-spar gate $(round_list S "$ROUNDS")" /dev/null
spar_after_record_prep S "$ROUNDS" "$work/prep-after-record.sh"
figure "git spar gate over $ROUNDS rounds, first after a new record (decision not kept)" "git-spar gate $(round_list S "$ROUNDS")" \
  "git log --oneline -1 refs/spar/series/S" "git log --oneline -1 refs/spar/series/S" 3 \
  "git-spar gate $(round_list S "$ROUNDS")" /dev/null "$work/prep-after-record.sh"
cat > "$work/prep-cold.sh" <<SH
rm -rf "$repo/.git/rails/cache/spar-gate"
SH
figure "git spar gate over $ROUNDS rounds, nothing kept (a fresh clone's first gate)" "git-spar gate $(round_list S "$ROUNDS")" \
  "git log --oneline -1 refs/spar/series/S" "git log --oneline -1 refs/spar/series/S" 3 \
  "git-spar gate $(round_list S "$ROUNDS")" /dev/null "$work/prep-cold.sh"
RUNS_SMALL=$RUNS RUNS=$BIG_RUNS
paired_figure "git spar run --dry-run on a $FILES-file change (runs alternate with the anchor's; medians)" \
  "git-spar run --dry-run --base $review_base --head $big_head --series D --reviewers lint --out $work/out" \
  "git archive | tar -x" "git archive $big_head | tar -x -C $work/arch" 1.5 \
  "git-spar run --dry-run --base $review_base --head $big_head --series D --reviewers lint --out $work/out" /dev/null \
  "$work/prep-dry.sh"
figure "git spar record of $RECORD_FINDINGS findings" "git-spar record N code-1 host --result $work/record-result.json" \
  "jq . (same JSON)" "jq . $work/record-result.json" 2 \
  "git-spar record N code-1 host --result $work/record-result.json" /dev/null "$work/prep-record.sh"
RUNS=$RUNS_SMALL
: > "$work/prep.sh"
if [ "$REFTABLE" = 1 ]; then
  cd "$repo3"
  figure "git rails gate, reftable + SHA-256 (passing, $TRANSITIONS transitions)" "git-rails gate" \
    "git rev-parse HEAD (reftable)" "git rev-parse HEAD" 3 "git-rails gate" /dev/null
  figure "installed pre-push hook, reftable + SHA-256, main updated by 10 commits (passing)" ".git/hooks/pre-push origin url < $work/push3.in" \
    "git rev-parse HEAD (reftable)" "git rev-parse HEAD" 3 "git-rails hook pre-push origin url" "$work/push3.in"
  cd "$repo"
fi

echo
echo "## Figures ($(date -u +%FT%TZ), $(nproc) cores, $RUNS runs each)"
echo
# How the measured binary is linked (what `cargo install` builds: a dynamically linked PIE).
if command -v file >/dev/null; then
  echo "git-rails: $(file -b "$bin/git-rails" | grep -oE 'pie executable|statically linked|dynamically linked' | paste -sd, - || echo 'linking unknown')"
  echo
fi
cat "$table"

# ---- beside the hook managers -------------------------------------------------------------
# Our installed pre-push and commit-msg hooks next to a plain `sh` hook and the no-op hooks of
# pre-commit, lefthook and husky (pinned in scripts/hook-managers.sh, installed from PyPI and
# npm), each in a clone of the fixture that shares its objects, run as git runs a hook.

hook_figure() { # $1 = folder, $2 = hook command (shell), $3 = prepare command or ''
  local args=(-N --warmup 3 --runs "$RUNS" -i --export-json "$work/m.json")
  [ -n "$3" ] && args+=(--prepare "$3")
  mapfile -t inp < <(input_of "$2")
  (cd "$1" && PATH="$mpath" hyperfine "${args[@]}" "${inp[@]}" "$(no_shell "$2")" >/dev/null 2>&1)
  local ms ins
  ms=$(jq '.results[0].mean * 1000' "$work/m.json")
  printf '%s\n' "$3" > "$work/prep.sh"
  ins=$(cd "$1" && PATH="$mpath" instructions "$2")
  : > "$work/prep.sh"
  echo "$ms $ins"
}

if [ "$HOOK_MANAGERS" = 1 ]; then
  hm=${HOOK_MANAGERS_DIR:-$here/.ci/hook-managers}
  log "hook managers: $(bash "$here/scripts/hook-managers.sh" "$hm")"
  mpath="$hm/venv/bin:$hm/node_modules/.bin:$PATH"
  printf 'a change\n' > "$work/msg.orig"
  manager_repo() { # $1 = name; prints the clone's folder
    local r="$work/hm-$1"
    git clone -q --shared "$repo" "$r"
    git -C "$r" checkout -q main
    echo "$r"
  }
  r_sh=$(manager_repo sh)
  for h in pre-push commit-msg; do
    printf '#!/bin/sh\nexit 0\n' > "$r_sh/.git/hooks/$h" && chmod +x "$r_sh/.git/hooks/$h"
  done
  r_pc=$(manager_repo pre-commit)
  cat > "$r_pc/.pre-commit-config.yaml" <<'YAML'
repos:
  - repo: local
    hooks:
      - id: noop
        name: no-op
        entry: "true"
        language: system
        always_run: true
        pass_filenames: false
        stages: [pre-push, commit-msg]
YAML
  r_lh=$(manager_repo lefthook)
  printf 'pre-push:\n  commands:\n    noop:\n      run: "true"\ncommit-msg:\n  commands:\n    noop:\n      run: "true"\n' > "$r_lh/lefthook.yml"
  r_hu=$(manager_repo husky)
  mkdir -p "$r_hu/.husky" && echo true > "$r_hu/.husky/pre-push" && echo true > "$r_hu/.husky/commit-msg"
  for r in "$r_pc" "$r_lh" "$r_hu"; do git -C "$r" add -A && git -C "$r" commit -q -m "hook manager configuration"; done
  (cd "$r_pc" && PATH="$mpath" pre-commit install -t pre-push -t commit-msg >/dev/null)
  (cd "$r_lh" && PATH="$mpath" lefthook install >/dev/null)
  (cd "$r_hu" && PATH="$mpath" husky >/dev/null)
  mtable="$work/managers.md"
  printf '| hook | pre-push (ms) | ours ÷ it | instructions | commit-msg (ms) | ours ÷ it | instructions |\n|:---|---:|---:|---:|---:|---:|---:|\n' > "$mtable"
  reset_msg="cp $work/msg.orig $work/msg"
  read -r our_pp our_ppi < <(hook_figure "$repo" ".git/hooks/pre-push origin url < $work/push-update.in" '')
  read -r our_cm our_cmi < <(hook_figure "$repo" ".git/hooks/commit-msg $work/msg" "$reset_msg")
  for m in "sh:$r_sh" "pre-commit:$r_pc" "lefthook:$r_lh" "husky:$r_hu" "ours (git rails):$repo"; do
    name=${m%%:*} r=${m#*:}
    if [ "$r" = "$repo" ]; then
      pp=$our_pp ppi=$our_ppi cm=$our_cm cmi=$our_cmi
    else
      pp_hook=$(cd "$r" && git rev-parse --path-format=absolute --git-path hooks/pre-push)
      cm_hook=$(cd "$r" && git rev-parse --path-format=absolute --git-path hooks/commit-msg)
      read -r pp ppi < <(hook_figure "$r" "$pp_hook origin url < $work/push-update.in" '')
      read -r cm cmi < <(hook_figure "$r" "$cm_hook $work/msg" "$reset_msg")
    fi
    python3 - "$name" "$pp" "$ppi" "$cm" "$cmi" "$our_pp" "$our_cm" >> "$mtable" <<'PY'
import sys
name, pp, ppi, cm, cmi, opp, ocm = sys.argv[1:]
pp, cm, opp, ocm = float(pp), float(cm), float(opp), float(ocm)
print(f"| {name} | {pp:.1f} | {opp / pp:.2f} | {ppi} | {cm:.1f} | {ocm / cm:.2f} | {cmi} |")
PY
    log "measured hooks: $name"
  done
  echo
  echo "## Beside the hook managers (their hooks do nothing; ours gates the fixture's sprint)"
  echo
  cat "$mtable"
fi

# ---- growth ------------------------------------------------------------------------------

mean_ms() { # hyperfine mean of one command, in ms
  hyperfine -N --warmup 5 --runs "$RUNS" -i --export-json "$work/g.json" "$1" >/dev/null 2>&1
  jq '.results[0].mean * 1000' "$work/g.json"
}

if [ "$GROWTH" = 1 ]; then
  log "growth: sprints and series of $GROWTH_SIZES"
  git checkout -q review
  for n in $GROWTH_SIZES; do rounds "R$n" "$n"; done
  git checkout -q main
  for n in $GROWTH_SIZES; do [ "$n" -ge 3 ] && sprint "G$n" "$n"; done
  echo
  echo "## Growth"
  echo
  echo "| records | git rails gate G<n> (ms) | its instructions | git spar gate over n rounds (ms) | its instructions | the same, nothing kept: instructions |"
  echo "|---:|---:|---:|---:|---:|---:|"
  for n in $GROWTH_SIZES; do
    g=$(mean_ms "git-rails gate G$n"); gi=$(instructions "git-rails gate G$n")
    s=$(mean_ms "git-spar gate $(round_list "R$n" "$n")"); si=$(instructions "git-spar gate $(round_list "R$n" "$n")")
    printf 'sh %s\n' "$work/prep-cold.sh" > "$work/prep.sh"
    ci=$(instructions "git-spar gate $(round_list "R$n" "$n")")
    : > "$work/prep.sh"
    printf '| %s | %.2f | %s | %.2f | %s | %s |\n' "$n" "$g" "$gi" "$s" "$si" "$ci"
  done
  echo
  echo "| commits | git rev-parse HEAD (ms) | pre-push hook (ms) | hook instructions |"
  echo "|---:|---:|---:|---:|"
  for c in $GROWTH_COMMITS; do
    r="$work/c$c"
    commits "$r" "$c"
    (
      cd "$r"
      sprint B 10 && git rails contract bind B >/dev/null
      git commit -q --allow-empty -m "bench: on the bound branch" -m "Rails-Sprint: B"
      h=$(git rev-parse HEAD)
      printf 'refs/heads/main %s refs/heads/main %s\n' "$h" "$(printf '0%.0s' $(seq 40))" > "$work/push-$c.in"
      rp=$(mean_ms "git rev-parse HEAD")
      hook="git-rails hook pre-push origin url < $work/push-$c.in"
      mapfile -t inp < <(input_of "$hook")
      hyperfine -N --warmup 5 --runs "$RUNS" -i --export-json "$work/g.json" "${inp[@]}" \
        "$(no_shell "$hook")" >/dev/null 2>&1
      hk=$(jq '.results[0].mean * 1000' "$work/g.json")
      hi=$(instructions "git-rails hook pre-push origin url < $work/push-$c.in")
      printf '| %s | %.2f | %.2f | %s |\n' "$c" "$rp" "$hk" "$hi"
    )
    rm -rf "$r"
  done
fi

# ---- spar: the gate as rounds grow, and memory with a 1 GiB reviewer output ---------------

SPAR_GROWTH=${SPAR_GROWTH:-1} SPAR_GROWTH_ROUNDS=${SPAR_GROWTH_ROUNDS:-"100 1000 5000"}
spar_growth() {
  git checkout -q review
  echo
  echo "## spar gate as rounds grow ($RUNS runs each; ratios to \`git log --oneline -1\` of the series, measured in the same run)"
  echo
  echo "| rounds | git log -1 (ms) | gate, decision kept (ms) | × | first gate after a new record (ms) | × | nothing kept (ms) | × | its instructions: after a record / nothing kept |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  local n s list have
  for n in $SPAR_GROWTH_ROUNDS; do
    s="W$n"
    have=$(git rev-list --count "refs/spar/series/$s" 2>/dev/null || echo 0)
    [ "$have" -ge "$n" ] || { log "spar growth: series $s of $n rounds"; rounds "$s" "$n"; }
    list=$(round_list "$s" "$n")
    git-spar gate $list >/dev/null 2>&1 || true
    spar_after_record_prep "$s" "$n" "$work/prep-w.sh"
    printf 'rm -rf "%s/rails/cache/spar-gate"\n' "$(git rev-parse --absolute-git-dir)" > "$work/prep-w-cold.sh"
    git-spar gate $list >/dev/null 2>&1 || true
    hyperfine -N --warmup 3 --runs "$RUNS" -i --export-json "$work/w.json" \
      -n log "git log --oneline -1 refs/spar/series/$s" -n kept "git-spar gate $list" >/dev/null 2>&1
    hyperfine -N --warmup 3 --runs "$RUNS" -i --export-json "$work/w2.json" --prepare "sh $work/prep-w.sh" \
      -n after "git-spar gate $list" >/dev/null 2>&1
    hyperfine -N --warmup 1 --runs "$(( RUNS < 10 ? RUNS : 10 ))" -i --export-json "$work/w3.json" --prepare "sh $work/prep-w-cold.sh" \
      -n cold "git-spar gate $list" >/dev/null 2>&1
    printf 'sh %s\n' "$work/prep-w.sh" > "$work/prep.sh"; ia=$(instructions "git-spar gate $list")
    # Counting a cold gate over thousands of rounds under callgrind takes longer than the rest of
    # the run; its wall time is in the table.
    ic="–"
    if [ "$n" -le 1000 ]; then
      printf 'sh %s\n' "$work/prep-w-cold.sh" > "$work/prep.sh"; ic=$(instructions "git-spar gate $list")
    fi
    : > "$work/prep.sh"
    python3 - "$n" "$work/w.json" "$work/w2.json" "$work/w3.json" "$ia" "$ic" <<'PY'
import json, sys
n, a, b, c, ia, ic = sys.argv[1:]
m = lambda f, i: json.load(open(f))["results"][i]["mean"] * 1000
log, kept, after, cold = m(a, 0), m(a, 1), m(b, 0), m(c, 0)
print(f"| {n} | {log:.2f} | {kept:.2f} | {kept / log:.2f} | {after:.2f} | {after / log:.2f} | {cold:.1f} | {cold / log:.1f} | {ia} / {ic} |")
PY
  done
  git checkout -q main
}

spar_memory() {
  git checkout -q review
  local gib=1073741824 big="$work/big-reviewer.sh"
  # A command reviewer that prints 1 GiB; the run keeps only the last 8 MiB of it.
  printf '#!/bin/sh\nhead -c %s /dev/zero | tr "\\000" " "\n' "$gib" > "$big" && chmod +x "$big"
  cat > "$work/spar-big.toml" <<TOML
timeout_seconds = 600

[[reviewers]]
name = "big"
preset = "command"
argv = ["$big", "{prompt}"]

[[reviewers]]
name = "host"
preset = "native"
TOML
  echo
  echo "## spar memory with a 1 GiB reviewer output"
  echo
  echo "| command | outcome | peak memory |"
  echo "|:---|:---|---:|"
  local rc kib
  rc=0; SPAR_CONFIG="$work/spar-big.toml" /usr/bin/time -f '%M' -o "$work/rss-run" \
    git-spar run --base "$review_base" --head "$review_head" --series M --reviewers big >/dev/null 2>"$work/run-big.err" || rc=$?
  kib=$(tail -1 "$work/rss-run")
  printf '| `git spar run`, a command reviewer printing 1 GiB | exit %s: %s | %.1f MiB |\n' "$rc" \
    "$(grep -o 'big [a-z_]*' "$work/run-big.err" | tail -1)" "$(awk "BEGIN { print $kib / 1024 }")"
  SPAR_CONFIG="$work/spar-big.toml" git spar run --base "$review_base" --head "$review_head" --series M2 --reviewers host >/dev/null 2>&1
  rc=0; head -c "$gib" /dev/zero | tr '\000' ' ' | SPAR_CONFIG="$work/spar-big.toml" /usr/bin/time -f '%M' -o "$work/rss-rec" \
    git-spar record M2 code-1 host --result /dev/stdin >/dev/null 2>"$work/rec-big.err" || rc=$?
  kib=$(tail -1 "$work/rss-rec")
  printf '| `git spar record --result /dev/stdin`, 1 GiB on the stream | exit %s: %s | %.1f MiB |\n' "$rc" \
    "$(head -1 "$work/rec-big.err" | cut -c1-60)" "$(awk "BEGIN { print $kib / 1024 }")"
  git checkout -q main
}

if [ "$SPAR_GROWTH" = 1 ]; then
  spar_growth
  spar_memory
fi
