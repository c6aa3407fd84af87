#!/bin/sh
# A demo of both tools on a throwaway repository.
# git rails: draft a contract from a sprint document, freeze it, earn a real failure for each
# criterion (RED), do the work, prove it (GREEN), surface it, pass the gate, and read the
# records back with plain git.
# git spar: review a change with a small local command reviewer that finds a real defect, fix
# it, triage the finding as fixed, pass the spar gate, and read the round's note.
set -eu
for t in git-rails git-spar; do
  command -v $t >/dev/null || { echo "demo: $t is not on PATH (sh scripts/install.sh)" >&2; exit 1; }
done
demo=$(mktemp -d "${TMPDIR:-/tmp}/rails-demo.XXXXXX")
mkdir "$demo/repo" "$demo/tools"
cd "$demo/repo"
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

echo
echo "== git spar: review a change"
git switch -q -c feature
cat > docs/criteria.md <<'DOC'
# Criteria
- AC-1: `sh shout.sh` prints the greeting of hello.txt in capitals
DOC
printf '#!/bin/sh\ntr A-Z a-z < hello.txt\n' > shout.sh
git add docs/criteria.md shout.sh && git commit -q -m "shout"
# The reviewer: a command of your own (here a few lines of sh) that runs shout.sh in the
# reviewed copy and reports a defect when the output is not in capitals. spar gives it
# {prompt} (the path of its instructions), {workspace} (read-only base/ and head/ copies and
# packet.md) and {schema}; it prints one result object on stdout.
cat > "$demo/tools/review.sh" <<'SH'
#!/bin/sh
ws=$2
head=$(sed -n 's/^- head: //p' "$ws/packet.md")
got=$(cd "$ws/head" && sh shout.sh)
want=$(tr a-z A-Z < "$ws/head/hello.txt")
findings=""
verdict=no_blocking_findings
if [ "$got" != "$want" ]; then
  verdict=blocking_findings
  findings=$(cat <<JSON
{"id": "1", "proposed_class": "defect", "angle": "correctness", "location": "head/shout.sh:2",
 "claim": "shout.sh lowercases the greeting instead of capitalising it",
 "failure_scenario": "sh shout.sh prints '$got', not '$want'",
 "evidence": "ran sh shout.sh in head/", "link_kind": "criterion", "link": "AC-1",
 "introduced_by_change": "yes", "regression": "no", "check_impact": "none",
 "confidence": "high", "smallest_fix": "tr a-z A-Z"}
JSON
)
fi
checked=""
for a in correctness regression checks contract security; do
  checked="$checked${checked:+,}{\"angle\": \"$a\", \"result\": \"ran shout.sh\"}"
done
printf '{"reviewed_head": "%s", "verdict": "%s", "angles_checked": [%s], "angles_unchecked": [], "findings": [%s], "limits": "only runs shout.sh"}\n' \
  "$head" "$verdict" "$checked" "$findings"
SH
chmod +x "$demo/tools/review.sh"
cat > "$demo/tools/spar.toml" <<TOML
[[reviewers]]
name = "shout-check"
preset = "command"
argv = ["$demo/tools/review.sh", "{prompt}", "{workspace}", "{schema}"]
TOML
export SPAR_CONFIG="$demo/tools/spar.toml"   # the demo's own reviewer; yours go in ~/.config/jaekit/spar.toml
echo "\$ git spar run --base main --criteria docs/criteria.md"
git spar run --base main --criteria docs/criteria.md
reviewed=$(git rev-parse HEAD)
echo "\$ git spar gate feature:code-1                # the defect is not triaged: blocked (exit 2)"
git spar gate feature:code-1 || echo "(exit $?)"
printf '#!/bin/sh\ntr a-z A-Z < hello.txt\n' > shout.sh
git commit -q -am "shout in capitals"
echo "\$ git spar triage feature code-1 shout-check-F1 fixed --failed-before … --passed-after … --commit HEAD"
git spar triage feature code-1 shout-check-F1 fixed \
  --failed-before "sh shout.sh printed 'hello, world!'" --passed-after "sh shout.sh prints 'HELLO, WORLD!'" --commit HEAD
echo "\$ git spar show feature:code-1 | grep shout-check-F1     # the triage in force"
git spar show feature:code-1 | grep '^| shout-check-F1'
echo "\$ git spar run --base main --criteria docs/criteria.md    # the fixed head: no findings"
git spar run --base main --criteria docs/criteria.md
echo "\$ git spar gate feature:code-1 feature:code-2 --expect-head HEAD   # passed: exit 0"
git spar gate feature:code-1 feature:code-2 --expect-head HEAD
echo "\$ git notes --ref=spar show $(git rev-parse --short "$reviewed")    # the first round's summary, with plain git"
git notes --ref=spar show "$reviewed"
echo "demo repository: $demo/repo"
