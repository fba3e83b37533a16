#!/usr/bin/env bash
# Builds the docker compose v2 plugin from the Go module proxy, for `docker compose config` on a
# machine that has the docker client but no plugin and no engine. `go install …@version` refuses
# this module (its go.mod has exclude directives), so build it from the downloaded module source.
set -euo pipefail
version="${COMPOSE_VERSION:-v2.40.3}"
plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
src="$(cd "$work" && go mod download -json "github.com/docker/compose/v2@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$src" ] || { echo "could not download github.com/docker/compose/v2@$version" >&2; exit 1; }
cp -r "$src" "$work/compose"
chmod -R u+w "$work/compose"
(cd "$work/compose" && go build -trimpath -o "$work/docker-compose" ./cmd)
mkdir -p "$plugins"
install -m 0755 "$work/docker-compose" "$plugins/docker-compose"
echo "installed docker compose $version into $plugins"
