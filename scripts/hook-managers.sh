#!/usr/bin/env bash
# Installs the hook managers people pick instead of (or beside) our hooks, pinned, from their
# registries, into one folder: pre-commit from PyPI in a virtualenv, lefthook and husky from
# npm. `.ci/run` installs them for the tests (tests/cli/hook_managers.rs) and
# benches/figures.sh for the side-by-side figures, so both use the same versions.
#
#   bash scripts/hook-managers.sh <folder>
#
# Reuses what is there when it reports the pinned versions. --ignore-scripts: lefthook's npm
# postinstall would run `lefthook install` in the current repository.
set -euo pipefail
PRE_COMMIT_VERSION=4.7.0
LEFTHOOK_VERSION=2.2.2
HUSKY_VERSION=9.1.7
hm=${1:?usage: hook-managers.sh <folder>}
mkdir -p "$hm"
hm=$(cd "$hm" && pwd)
installed() {
  [ "$("$hm/venv/bin/pre-commit" --version 2>/dev/null)" = "pre-commit $PRE_COMMIT_VERSION" ] &&
    [ "$("$hm/node_modules/.bin/lefthook" version 2>/dev/null)" = "$LEFTHOOK_VERSION" ] &&
    [ "$(node -p "require('$hm/node_modules/husky/package.json').version" 2>/dev/null)" = "$HUSKY_VERSION" ]
}
if ! installed; then
  command -v python3 >/dev/null || { echo "hook-managers: python3 is not installed (pre-commit needs it)" >&2; exit 1; }
  command -v npm >/dev/null || { echo "hook-managers: npm is not installed (lefthook and husky come from npm)" >&2; exit 1; }
  echo "hook-managers: installing pre-commit $PRE_COMMIT_VERSION, lefthook $LEFTHOOK_VERSION and husky $HUSKY_VERSION into $hm" >&2
  python3 -m venv "$hm/venv"
  "$hm/venv/bin/pip" install --quiet --disable-pip-version-check "pre-commit==$PRE_COMMIT_VERSION"
  npm install --prefix "$hm" --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
    "lefthook@$LEFTHOOK_VERSION" "husky@$HUSKY_VERSION" >/dev/null
  installed || { echo "hook-managers: the hook managers do not report the pinned versions" >&2; exit 1; }
fi
echo "pre-commit $PRE_COMMIT_VERSION, lefthook $LEFTHOOK_VERSION, husky $HUSKY_VERSION"
