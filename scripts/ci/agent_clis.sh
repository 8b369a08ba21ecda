#!/bin/sh
# scripts/ci/agent_clis.sh — installs the pinned coding-agent CLIs that the adapter tests run
# (docs/coding_agents.md "Tests") into `.tools/agent-clis/<package>_<version>/` (git-ignored),
# once per machine: a CLI that is already there is kept, so a second run only checks paths.
# Each package is installed into a temporary directory first and renamed into place, so an
# interrupted install never leaves a half-filled directory behind.
#
# Usage: scripts/ci/agent_clis.sh   (NICEEVAL_AGENT_CLIS_DIR overrides the target directory)
# The versions must match PINNED_CLIS in tests/_helpers/agent_cli.ts.
set -eu
cd "$(dirname "$0")/../.."

dir=${NICEEVAL_AGENT_CLIS_DIR:-.tools/agent-clis}
mkdir -p "$dir"

install() { # <npm package> <version> <command>
  target="$dir/$(printf '%s' "$1" | tr '@/' '__')_$2"
  if [ -x "$target/node_modules/.bin/$3" ]; then
    echo "agent_clis: $1@$2 present"
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "agent_clis: npm is required to install $1@$2" >&2
    return 1
  fi
  tmp=$(mktemp -d "$dir/.install-XXXXXXXX")
  echo "agent_clis: installing $1@$2"
  if ! npm install --prefix "$tmp" --no-save --no-audit --no-fund --loglevel=error "$1@$2" \
    >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log" >&2
    rm -rf "$tmp"
    echo "agent_clis: npm install $1@$2 failed" >&2
    return 1
  fi
  rm -rf "$target"
  mv "$tmp" "$target"
}

install @anthropic-ai/claude-code 2.1.332 claude
install @openai/codex 0.171.0 codex
install opencode-ai 1.18.33 opencode
