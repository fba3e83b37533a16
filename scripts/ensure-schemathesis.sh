#!/usr/bin/env bash
# Prints the path of a Schemathesis command (the OpenAPI contract test's client, from PyPI),
# installing it first when it is missing: a Python virtual environment under the per-user cache
# (venv-schemathesis), with the version below, once per machine. Needs python3 with its venv
# module (Debian's python3-venv) and pip, which the venv brings.
#   "$(scripts/ensure-schemathesis.sh)" run http://127.0.0.1:8080/openapi.json --checks all
set -euo pipefail
# One version, so that a new release's checks change the test only when this line does.
version=4.32.5
cache="${AGENT_SESSIONS_CACHE_DIR:-}"
if [ -z "$cache" ]; then
  case "${XDG_CACHE_HOME:-}" in
    /*) cache="$XDG_CACHE_HOME/agent-sessions" ;;
    *) cache="$HOME/.cache/agent-sessions" ;;
  esac
fi
venv="$cache/venv-schemathesis"
bin="$venv/bin/schemathesis"
installed() { [ -x "$bin" ] && [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" = "$version" ]; }
if ! installed; then
  command -v python3 >/dev/null 2>&1 || { echo "python3 is needed for the OpenAPI contract test (Schemathesis): install it (Debian: apt-get install -y python3 python3-venv)" >&2; exit 1; }
  mkdir -p "$cache"
  # Two test runs installing at once would share one half-made folder: one at a time.
  exec 9>"$cache/venv-schemathesis.lock"
  flock 9
  if ! installed; then
    echo "installing Schemathesis $version from PyPI into $venv (once per machine)" >&2
    rm -rf "$venv"
    python3 -m venv "$venv" >&2 || { echo "python3 -m venv failed: install Python's venv module (Debian: apt-get install -y python3-venv)" >&2; exit 1; }
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$version" >&2
  fi
fi
echo "$bin"
