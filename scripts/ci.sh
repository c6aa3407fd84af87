#!/bin/sh
# What a CI job runs to judge a commit with git rails and git spar, one step per call, shared by
# the GitHub Action (action.yml) and the GitLab CI template (ci/gitlab/rails-spar.yml), so both
# run the same commands; tests/cli/ci_action.rs runs them on a fresh clone with no git identity,
# no global configuration and no dotfiles.
#
#   sh scripts/ci.sh install <root>                  build and install both tools into <root>
#   sh scripts/ci.sh fetch [<remote>]                fetch the records (refs/rails, refs/spar, notes)
#   sh scripts/ci.sh verify <out> <commit> [<sprint>] [<base>]   re-run the proof of the sprint
#                                                    given, else of every sprint the commit (or
#                                                    the commits after <base>) names; JUnit + HTML
#   sh scripts/ci.sh review <out> <commit> <series> [required|optional]   the spar gate over every
#                                                    round of the series; SARIF, markdown, HTML
#   sh scripts/ci.sh finish <out>                    exit non-zero when a gate blocked
#
# verify and review exit 0 and leave their exit code in <out>/<step>.code, so the reports are
# written and uploaded before `finish` fails the job.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "rails-spar ci: $*" >&2; }
die() { say "$*"; exit 1; }

step=${1:-}
[ -n "$step" ] || die "usage: sh scripts/ci.sh install|fetch|verify|review|finish …"
shift

case $step in
install)
  root=${1:?install: the install root}
  mkdir -p "$root"
  if [ -x "$root/bin/git-rails" ] && [ -x "$root/bin/git-spar" ] && [ -x "$root/bin/rails-spar-extras" ]; then
    # A cached install: the man pages and completions again, no build.
    say "git-rails and git-spar are in $root/bin already; not building them again"
    RAILS_INSTALL_SKIP_CARGO=1 CARGO_INSTALL_ROOT=$root sh "$here/scripts/install.sh" >&2
  else
    command -v cargo >/dev/null 2>&1 ||
      die "cargo is not installed: the tools are built from source (Rust 1.89 or newer and a C compiler; https://rustup.rs)"
    say "building git-rails and git-spar (a release build: about 10 minutes on two cores)"
    # No static relink in CI: it saves 0.3 ms per hook run and costs 2 minutes here.
    RAILS_INSTALL_DYNAMIC=1 CARGO_INSTALL_ROOT=$root sh "$here/scripts/install.sh" >&2
  fi
  "$root/bin/git-rails" -h >/dev/null
  ;;

fetch)
  remote=${1:-origin}
  # No `+`: a record is never overwritten, and a rewritten one on the remote is refused by git.
  git fetch --no-tags "$remote" 'refs/rails/*:refs/rails/*' 'refs/spar/*:refs/spar/*' \
    'refs/notes/*:refs/notes/*'
  ;;

verify)
  out=${1:?verify: the output folder}
  commit=${2:?verify: the commit to judge}
  sprint=${3:-}
  base=${4:-}
  mkdir -p "$out"
  git rev-parse -q --verify "$commit^{commit}" >/dev/null ||
    die "$commit is not a commit of this clone (check out with the whole history: fetch-depth 0, GIT_DEPTH 0)"
  # The sprints: the one given, else every sprint the commit names in a Rails-Sprint trailer
  # (the commit-msg hook adds it on a bound branch), or with a base (a pull request's) every
  # sprint the commits after it name: git rails finds them from the commits itself.
  set --
  if [ -n "$sprint" ]; then
    set -- "$sprint"
  elif [ -n "$base" ]; then
    set -- --since "$base"
  fi
  say "git rails verify${*:+ $*} --rerun --commit $commit"
  code=0
  git rails verify "$@" --rerun --commit "$commit" --junit "$out/rails-verify.xml" || code=$?
  if [ "$code" = 64 ]; then
    say "no sprint: nothing after ${base:-the base} up to $commit names one in a Rails-Sprint trailer and none was given (the action's \`sprint\` input, the template's RAILS_SPRINT)"
    echo 1 >"$out/rails.code"
    exit 0
  fi
  git rails gate "$@" --commit "$commit" --format markdown >"$out/rails-gate.md" || true
  # The HTML report is one sprint's: rails-report.html for the first, rails-report-<sprint>.html
  # for each further one.
  if [ -n "$sprint" ]; then
    sprints=$sprint
  elif [ -n "$base" ]; then
    sprints=$(git log --format='%(trailers:key=Rails-Sprint,valueonly)' "$base..$commit" | sed '/^$/d' | sort -u)
  else
    sprints=$(git log -1 --format='%(trailers:key=Rails-Sprint,valueonly)' "$commit" | sed '/^$/d' | sort -u)
  fi
  file=rails-report.html
  for s in $sprints; do
    git rails report "$s" --commit "$commit" --html "$out/$file" || true
    file=rails-report-$s.html
  done
  echo "$code" >"$out/rails.code"
  ;;

review)
  out=${1:?review: the output folder}
  commit=${2:?review: the reviewed head}
  series=${3:?review: the series (by default the branch the rounds were run on)}
  need=${4:-required}
  mkdir -p "$out"
  git rev-parse -q --verify "$commit^{commit}" >/dev/null ||
    die "$commit is not a commit of this clone (check out with the whole history: fetch-depth 0, GIT_DEPTH 0)"
  # Every round of the series, as `git spar list` prints it: `<series> <round> <round> …`.
  targets=$(git spar list | awk -v s="$series" '$1 == s { for (i = 2; i <= NF; i++) printf "%s:%s ", s, $i }')
  if [ -z "$targets" ]; then
    if [ "$need" = optional ]; then
      say "no review rounds recorded for series $series; the review is optional here"
      echo 0 >"$out/spar.code"
    else
      say "no review rounds recorded for series $series: run \`git spar run --base <rev>\` on that branch and push the records (\`git rails sync\`)"
      echo 1 >"$out/spar.code"
    fi
    exit 0
  fi
  say "git spar gate $targets--expect-head $commit"
  code=0
  # shellcheck disable=SC2086 # one word per round
  git spar gate $targets --expect-head "$commit" --format sarif >"$out/spar.sarif" || code=$?
  # shellcheck disable=SC2086
  git spar gate $targets --expect-head "$commit" --format markdown >"$out/spar-gate.md" || true
  # shellcheck disable=SC2086
  git spar report $targets --html "$out/spar-report.html" || true
  echo "$code" >"$out/spar.code"
  ;;

finish)
  out=${1:?finish: the output folder}
  status=0
  for g in rails spar; do
    [ -f "$out/$g.code" ] || continue
    c=$(cat "$out/$g.code")
    if [ "$c" = 0 ]; then say "$g gate: passed"; else say "$g gate: blocked (exit $c)"; status=1; fi
  done
  exit $status
  ;;

*)
  die "unknown step $step (install, fetch, verify, review, finish)"
  ;;
esac
