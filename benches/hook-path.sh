#!/usr/bin/env bash
# Benchmark of the hook path (not a test): what a passing pre-push and commit-msg hook cost,
# next to a bare `git rev-parse HEAD`, on a repository with N commits and 1,000 evidence
# transitions; and whether the cost grows with the number of commits.
#
#   cargo build --release && bash benches/hook-path.sh            # 10,000 commits
#   COMMITS="1000 10000 50000" bash benches/hook-path.sh           # growth
#
# Needs hyperfine (apt-get install hyperfine). Prints a table per repository size.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin="$here/target/x86_64-unknown-linux-gnu/release"   # .cargo/config.toml sets the build target
[ -x "$bin/git-rails" ] || bin="$here/target/release"
[ -x "$bin/git-rails" ] || { echo "bench: build first: cargo build --release" >&2; exit 1; }
command -v hyperfine >/dev/null || { echo "bench: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
export PATH="$bin:$PATH" GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.invalid
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.invalid
TRANSITIONS=${TRANSITIONS:-1000}

make_repo() { # $1 = folder, $2 = commits
  local dir=$1 n=$2
  git init -q -b main "$dir"
  cd "$dir"
  python3 - "$n" <<'PY' | git fast-import --quiet
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
  git reset -q --hard main
  mkdir -p .rails/contracts
  cat > .rails/contracts/B.json <<'JSON'
{"version":"v1","id":"01JDQ7ZK3M8T5V2W9X4Y6Z0ABC","sprintId":"B","createdAt":"2026-11-30T12:00:00Z",
 "type":"feature","dod":{"checks":[{"id":"c1","description":"proof exists","kind":"file_exists","spec":{"path":"proof.txt"}}]},
 "environmentPrerequisites":[],"nonGoals":[],"runtimeValidation":{"commands":[]},"riskFlags":[],
 "reviewerProfile":"static","approvalGates":{}}
JSON
  echo ".rails/" >> .git/info/exclude
  git rails contract freeze B >/dev/null
  git rails contract bind B >/dev/null
  git rails evidence red c1 >/dev/null
  echo proof > proof.txt && git add proof.txt && git commit -q -m proof
  git rails evidence green c1 >/dev/null
  git rails evidence surface c1 --note bench >/dev/null
  for i in $(seq 4 "$TRANSITIONS"); do git rails evidence cleanup c1 --note "receipt $i" >/dev/null; done
  git rails hooks install >/dev/null
  git rails gate >/dev/null
  cd - >/dev/null
}

for n in ${COMMITS:-10000}; do
  dir=$(mktemp -d)/repo
  echo "== $n commits, $TRANSITIONS evidence transitions ($(date -u +%FT%TZ))"
  make_repo "$dir" "$n"
  cd "$dir"
  head=$(git rev-parse HEAD)
  printf 'refs/heads/main %s refs/heads/main %s\n' "$head" "$(printf '0%.0s' $(seq 40))" > "$dir/../push.in"
  printf 'done\n\nRails-Done: B\n' > "$dir/../msg.txt"
  # Debian's hyperfine has no --input, so the commands that read the pre-push stdin run under
  # `sh -c '… < file'`; the baseline pays for the same shell.
  hyperfine -N --warmup 30 --runs 500 --export-markdown "$dir/../table.md" \
    -n "git rev-parse HEAD" "git rev-parse HEAD" \
    -n "sh -c 'git rev-parse HEAD < input' (baseline with the same shell)" "sh -c 'git rev-parse HEAD < ../push.in'" \
    -n "sh -c 'git-rails hook pre-push < input' (passing)" "sh -c 'git-rails hook pre-push origin url < ../push.in'" \
    -n "installed pre-push script (sh + git-rails)" "sh -c '.git/hooks/pre-push origin url < ../push.in'" \
    -n "git-rails hook commit-msg (Rails-Done, passing)" "git-rails hook commit-msg ../msg.txt" \
    -n "git-rails gate" "git-rails gate" \
    -n "git-rails --version (process start)" "git-rails --version" >/dev/null
  cat "$dir/../table.md"
  cd - >/dev/null
  rm -rf "$(dirname "$dir")"
done
