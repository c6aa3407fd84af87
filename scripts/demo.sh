#!/bin/sh
# A demo of git rails on a throwaway repository: draft a contract from a sprint document,
# freeze it, earn a real failure for each criterion (RED), do the work, prove it (GREEN),
# surface it, pass the gate, and read the records back with plain git.
set -eu
command -v git-rails >/dev/null || { echo "demo: git-rails is not on PATH (cargo install --path .)" >&2; exit 1; }
demo=$(mktemp -d "${TMPDIR:-/tmp}/rails-demo.XXXXXX")
cd "$demo"
git init -q -b main
git config user.name "Rails Demo"
git config user.email demo@example.invalid
mkdir -p docs
cat > docs/SPRINT-001.md <<'DOC'
# SPRINT-001: Greeting

## Done criteria
- `hello.txt` exists
- `hello.txt` contains /^Hello, world!$/
- `sh ./greet.sh` passes

## Verification commands
- `test -d .git`

## Prerequisites
- `sh` command

## Non-goals
- No web UI
DOC
git add docs && git commit -q -m "sprint document"
echo "\$ git rails contract generate docs/SPRINT-001.md"
git rails contract generate docs/SPRINT-001.md
echo "\$ git rails contract freeze SPRINT-001"
git rails contract freeze SPRINT-001
git rails contract bind SPRINT-001
echo "\$ git rails contract validate SPRINT-001    # nothing is built yet: FAIL (exit 1)"
git rails contract validate SPRINT-001 || echo "(exit $?)"
criteria="hello-txt-exists hello-txt-contains-hello-world sh-greet-sh-passes"
echo "\$ git rails evidence red <criterion>        # failing first: each criterion earns a real failure"
for c in $criteria; do git rails evidence red "$c"; done
echo "\$ git rails gate                             # unproven: exit 2 with every missing step"
git rails gate || echo "(exit $?)"
printf 'Hello, world!\n' > hello.txt
printf '#!/bin/sh\ngrep -q "Hello" hello.txt\n' > greet.sh
git add hello.txt greet.sh && git commit -q -m "greet"
echo "\$ git rails evidence green / surface / cleanup <criterion>"
for c in $criteria; do
  git rails evidence green "$c"
  git rails evidence surface "$c" --note "shown in the demo transcript"
  git rails evidence cleanup "$c" --note "nothing was started"
done
echo "\$ git rails status"
git rails status
echo "\$ git rails gate                             # done: exit 0"
git rails gate
echo "\$ git rails contract validate SPRINT-001    # PASS"
git rails contract validate SPRINT-001
echo "\$ git notes --ref=rails show HEAD | head -5"
git notes --ref=rails show HEAD | head -5
echo "\$ git log --format='%h %s' refs/rails/evidence/SPRINT-001 | head -3"
git log --format='%h %s' refs/rails/evidence/SPRINT-001 | head -3
echo "demo repository: $demo"
