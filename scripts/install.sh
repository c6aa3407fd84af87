#!/bin/sh
# Installs git-rails and git-spar as a git command is expected to be installed: the binaries
# (cargo install; rails-spar-extras, which serves `git rails mcp` and runs db_query checks, goes
# beside git-rails, the only place git-rails looks for it), their man pages where `man` finds them, so `git rails --help`,
# `git help rails` and `man git-rails` work, and shell completions, so `git rails <TAB>` works.
#
#   sh scripts/install.sh            # into $CARGO_INSTALL_ROOT, else $CARGO_HOME, else ~/.cargo
#
# Where each part goes (nothing else is touched; run it again to update):
#   <root>/bin/git-rails, git-spar, rails-spar-extras     cargo install --locked
#   <root>/share/man/man1/git-rails*.1, git-spar*.1       man finds <prefix>/share/man for each
#                                                          <prefix>/bin on PATH
#   ~/.local/share/bash-completion/completions/git-*      loaded by bash-completion when git's
#                                                          completion asks for `git rails`
#   <root>/share/zsh/site-functions/_git-rails, _git-spar  put that folder on zsh's fpath
#   ~/.config/fish/completions/git-rails.fish, …          only when fish is installed
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
root=${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}
say() { echo "install: $*"; }

# The build needs Rust and a C compiler (README: Requirements); say so rather than end in
# `cargo: not found`.
if [ "${RAILS_INSTALL_SKIP_CARGO:-}" != 1 ] && ! command -v cargo >/dev/null 2>&1; then
  echo "install: cargo is not installed: git-rails and git-spar are built from this checkout. Install Rust 1.89 or newer (https://rustup.rs) and a C compiler (cc), then run \`sh scripts/install.sh\` again." >&2
  exit 1
fi

# RAILS_INSTALL_SKIP_CARGO=1: the binaries are already in <root>/bin (the project's tests).
if [ "${RAILS_INSTALL_SKIP_CARGO:-}" != 1 ]; then
  # The binaries are what plain `cargo install --locked --path .` builds.
  cargo install --locked --path "$here" --root "$root"
fi
bin="$root/bin"
for b in git-rails git-spar rails-spar-extras; do
  [ -x "$bin/$b" ] || { echo "install: $bin/$b is missing" >&2; exit 1; }
done

man1="$root/share/man/man1"
mkdir -p "$man1"
cp "$here"/man/*.1 "$man1/"
say "man pages in $man1 ($(ls "$here"/man/*.1 | wc -l | tr -d ' ') pages)"

bash_dir="${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion}/completions"
mkdir -p "$bash_dir"
for t in rails spar; do "$bin/git-$t" completions bash > "$bash_dir/git-$t"; done
say "bash completions in $bash_dir (bash-completion loads them for \`git rails <TAB>\`)"

zsh_dir="$root/share/zsh/site-functions"
mkdir -p "$zsh_dir"
for t in rails spar; do "$bin/git-$t" completions zsh > "$zsh_dir/_git-$t"; done
say "zsh completions in $zsh_dir (add \`fpath+=($zsh_dir)\` before compinit in ~/.zshrc)"

if command -v fish >/dev/null 2>&1; then
  fish_dir="${XDG_CONFIG_HOME:-$HOME/.config}/fish/completions"
  mkdir -p "$fish_dir"
  for t in rails spar; do "$bin/git-$t" completions fish > "$fish_dir/git-$t.fish"; done
  say "fish completions in $fish_dir"
fi

case ":$PATH:" in
  *":$bin:"*) ;;
  *) say "note: $bin is not on PATH; add it so git finds \`git rails\` and \`git spar\`" ;;
esac
