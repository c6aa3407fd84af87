#!/bin/sh
# The README's picture, from a real run: a push of unproven work refused by the pre-push hook,
# then the same push passing once every criterion is proven. Runs git-rails on PATH in a
# throwaway repository and renders the terminal text into an SVG (python3, no network, no
# browser). tests/cli/docs.rs runs it; regenerate the committed picture with
#
#   PATH="$PWD/target/debug:$PATH" sh scripts/picture.sh docs/src/img/push-and-gate.svg
set -eu
out=${1:-docs/src/img/push-and-gate.svg}
case $out in /*) ;; *) out="$PWD/$out" ;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
command -v git-rails >/dev/null || { echo "picture: git-rails is not on PATH (sh scripts/install.sh)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "picture: python3 is needed to draw the SVG" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/rails-picture.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The same text on every run: fixed dates, names and no colour.
export GIT_AUTHOR_NAME="Ada" GIT_AUTHOR_EMAIL=ada@example.invalid
export GIT_COMMITTER_NAME="Ada" GIT_COMMITTER_EMAIL=ada@example.invalid
export GIT_AUTHOR_DATE="2026-01-01T12:00:00Z" GIT_COMMITTER_DATE="2026-01-01T12:00:00Z"
export NO_COLOR=1 TERM=dumb

cd "$work"
git init -q --bare -b main remote.git
git init -q -b main app
cd app
git remote add origin ../remote.git
echo "# app" > README.md
git add README.md && git commit -q -m "start"
git push -q origin main 2>/dev/null
git rails hooks install >/dev/null 2>&1
printf '# SPRINT-001: Release notes\n\n## Done criteria\n- `NOTES.md` exists\n' > sprint.md
git rails contract generate sprint.md >/dev/null 2>&1
git rails contract freeze SPRINT-001 >/dev/null 2>&1
git rails contract bind SPRINT-001 >/dev/null 2>&1
git add sprint.md .rails && git commit -q -m "sprint 1: what done means"

log="$work/transcript"
: > "$log"
run() { # one command line: shows it, runs it, then what it printed (stdout and stderr, in order)
  printf '$ %s\n' "$1" >> "$log"
  if sh -c "$1" >> "$log" 2>&1; then :; else echo "(exit $?)" >> "$log"; fi
}
run 'git push -q origin main'
run 'git rails evidence red notes-md-exists'
run 'echo "0.1: first release" > NOTES.md && git add NOTES.md && git commit -q -m notes'
run 'git rails evidence green notes-md-exists'
run 'git rails evidence surface notes-md-exists --note "shown in the PR"'
run 'git rails evidence cleanup notes-md-exists --note "nothing was started"'
run 'git rails gate'
run 'git push origin main'

mkdir -p "$(dirname "$out")"
python3 - "$log" "$out" <<'PY'
import sys, html
lines = open(sys.argv[1], encoding="utf-8").read().rstrip("\n").split("\n")
width = max(len(l) for l in lines)
cw, lh, pad = 8.4, 19, 16
w = int(width * cw + 2 * pad)
h = int(len(lines) * lh + 2 * pad + 24)
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
       'font-family="ui-monospace,SFMono-Regular,Menlo,Consolas,monospace" font-size="14">',
       f'<rect width="{w}" height="{h}" rx="8" fill="#1e1e2e"/>',
       '<circle cx="18" cy="14" r="5" fill="#f38ba8"/><circle cx="36" cy="14" r="5" fill="#f9e2af"/>'
       '<circle cx="54" cy="14" r="5" fill="#a6e3a1"/>']
y = pad + 24 + 4
for l in lines:
    color = "#cdd6f4"
    if l.startswith("$ "):
        color = "#89b4fa"
    elif "(exit" in l or "not done" in l or "refused" in l or "error:" in l:
        color = "#f38ba8"
    elif "passed" in l or "is done" in l:
        color = "#a6e3a1"
    out.append(f'<text x="{pad}" y="{y}" fill="{color}" xml:space="preserve">{html.escape(l)}</text>')
    y += lh
out.append("</svg>")
open(sys.argv[2], "w", encoding="utf-8").write("\n".join(out) + "\n")
PY
echo "picture: $out ($(wc -l < "$log" | tr -d ' ') lines)"
