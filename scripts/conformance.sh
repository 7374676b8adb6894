#!/usr/bin/env bash
# The official MCP conformance suite against our conformance fixture, directly and through
# mcp-normalizer, for both protocol eras (npm run conformance). A development check, not part of
# npm test: it installs Node 22 and two versions of @modelcontextprotocol/conformance from the
# npm registry into node_modules/.cache/, and takes a few minutes.
#
#   0.1.16          the 2025 server scenarios (legacy era)
#   0.2.0-alpha.12  the frozen 2026-07-28 requirement set (modern era; needs Node >= 22)
#
# The gateway serves the fixture over stdio with prefix "" (the suite calls fixed tool names
# such as test_simple_text) and output.media: passthrough (the suite looks for image and resource
# blocks, which the default media mode carries as file fields) and client_features with roots (the
# suite's roots scenarios; roots are opt-in, Q4). Everything listens on 127.0.0.1.
# Results: one summary per run in $OUT (default: a temp folder), and a side-by-side table.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=$ROOT/node_modules/.cache/mcp-normalizer-conformance
OUT=${OUT:-$(mktemp -d -t mcp-normalizer-conformance-XXXXXX)}
LEGACY_VERSION=0.1.16
MODERN_VERSION=0.2.0-alpha.12

install() { # dir, packages...
  local dir=$1
  shift
  if [ ! -d "$dir/node_modules" ]; then
    mkdir -p "$dir"
    (cd "$dir" && echo '{"private":true}' > package.json && npm install --no-audit --no-fund --silent "$@" >&2)
  fi
}
install "$CACHE/legacy" "node@22" "@modelcontextprotocol/conformance@$LEGACY_VERSION"
install "$CACHE/modern" "@modelcontextprotocol/conformance@$MODERN_VERSION"
NODE22=$CACHE/legacy/node_modules/.bin/node
[ -x "$NODE22" ] || { echo "no Node 22 at $NODE22" >&2; exit 1; }

[ -f dist/fixtures/servers/conformance.js ] || npm run build >&2

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_url() { # log file, pattern → prints the URL once it appears (30 s at most)
  for _ in $(seq 1 300); do
    if url=$(grep -oE "$2" "$1" | grep -oE 'http://[^ ]+/mcp' | head -1) && [ -n "$url" ]; then
      echo "$url"
      return 0
    fi
    sleep 0.1
  done
  echo "no URL in $1:" >&2
  cat "$1" >&2
  return 1
}

node dist/fixtures/servers/conformance.js --http=0 2> "$OUT/fixture.log" &
pids+=($!)
DIRECT=$(wait_url "$OUT/fixture.log" 'listening http://[^ ]+/mcp')

cat > "$OUT/gateway.yaml" << YAML
output:
  media: passthrough
servers:
  conformance:
    command: $(command -v node)
    args: [$ROOT/dist/fixtures/servers/conformance.js]
    prefix: ""
    # The suite's roots scenarios need roots, which a server is offered only when asked (Q4).
    client_features: [elicitation, sampling, roots]
YAML
node dist/src/cli/main.js serve --http --port 0 --config "$OUT/gateway.yaml" 2> "$OUT/gateway.log" &
pids+=($!)
GATEWAY=$(wait_url "$OUT/gateway.log" 'MCP endpoint[^:]*: +http://[^ ]+/mcp')

run() { # name, conformance dir, url, extra args...
  local name=$1 dir=$2 url=$3
  shift 3
  echo "== $name: $url" >&2
  PATH=$(dirname "$NODE22"):$PATH "$NODE22" "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    server --url "$url" "$@" > "$OUT/$name.log" 2>&1 || true
  sed -n '/=== SUMMARY ===/,$p' "$OUT/$name.log" | grep -E '^[✓✗]|^Total' > "$OUT/$name.summary" || true
}
run legacy-direct "$CACHE/legacy" "$DIRECT"
run legacy-gateway "$CACHE/legacy" "$GATEWAY"
run modern-direct "$CACHE/modern" "$DIRECT" --requirements 2026-07-28
run modern-gateway "$CACHE/modern" "$GATEWAY" --requirements 2026-07-28

for era in legacy modern; do
  echo
  echo "### $era ($([ $era = legacy ] && echo $LEGACY_VERSION || echo "$MODERN_VERSION, 2026-07-28 requirements"))"
  echo
  echo "| scenario | direct | through mcp-normalizer |"
  echo "| --- | --- | --- |"
  join -t '|' -a1 -a2 -e '-' -o 0,1.2,2.2 \
    <(grep -E '^[✓✗]' "$OUT/$era-direct.summary" | sed -E 's/^([✓✗]) ([^:]+): (.*)$/\2|\1 \3/' | sort) \
    <(grep -E '^[✓✗]' "$OUT/$era-gateway.summary" | sed -E 's/^([✓✗]) ([^:]+): (.*)$/\2|\1 \3/' | sort) |
    sed -E 's/^([^|]*)\|([^|]*)\|(.*)$/| \1 | \2 | \3 |/'
  echo
  echo "direct: $(grep '^Total' "$OUT/$era-direct.summary"); gateway: $(grep '^Total' "$OUT/$era-gateway.summary")"
done
echo
echo "logs: $OUT" >&2
