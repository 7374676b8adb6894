#!/usr/bin/env bash
# The official MCP conformance suite, by requirement set, in both roles the specification defines
# (npm run conformance). A development check, not part of npm test: it installs Node 22 and
# @modelcontextprotocol/conformance from the npm registry into node_modules/.cache/ and takes
# about ten minutes.
#
#   server role: the suite as a client of our conformance fixture, directly and through
#                mcp-normalizer (`serve --http`), with --requirements 2025-11-25 and 2026-07-28
#                (each set runs at its own wire: initialize sessions, then stateless requests);
#   client role: the suite's scenario servers, reached by mcp-normalizer's own CLI through
#                scripts/conformance-client.mjs (login with a scripted browser, then call), with
#                the same two requirement sets.
#
# The gateway serves the fixture over stdio with prefix "" (the suite calls fixed tool names
# such as test_simple_text) and output.media: passthrough (the suite looks for image and resource
# blocks, which the default media mode carries as file fields) and client_features with roots (the
# suite's roots scenarios; roots are opt-in, Q4). Everything listens on 127.0.0.1.
# Results: the suite's logs in $OUT (default: a temp folder), and one table: scenario, role,
# revision, result.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
CACHE=$ROOT/node_modules/.cache/mcp-normalizer-conformance
OUT=${OUT:-$(mktemp -d -t mcp-normalizer-conformance-XXXXXX)}
mkdir -p "$OUT"
VERSION=0.2.0-alpha.12
REVISIONS="2025-11-25 2026-07-28"

install() { # dir, packages...
  local dir=$1
  shift
  if [ ! -d "$dir/node_modules" ]; then
    mkdir -p "$dir"
    (cd "$dir" && echo '{"private":true}' > package.json && npm install --no-audit --no-fund --silent "$@" >&2)
  fi
}
install "$CACHE/$VERSION" "node@22" "@modelcontextprotocol/conformance@$VERSION"
NODE22=$CACHE/$VERSION/node_modules/.bin/node
SUITE=$CACHE/$VERSION/node_modules/@modelcontextprotocol/conformance/dist/index.js
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

suite() { # log name, arguments...
  local name=$1
  shift
  echo "== $name" >&2
  PATH=$(dirname "$NODE22"):$PATH "$NODE22" "$SUITE" "$@" > "$OUT/$name.log" 2>&1 || true
}
for revision in $REVISIONS; do
  suite "server-direct-$revision" server --url "$DIRECT" --requirements "$revision"
  suite "server-gateway-$revision" server --url "$GATEWAY" --requirements "$revision"
  suite "client-$revision" client --command "node $ROOT/scripts/conformance-client.mjs" \
    --requirements "$revision" -o "$OUT/client-results-$revision"
done

# Extension scenarios (issues 47, 54), by name: the Skills extension (SEP-2640) against a skills
# fixture built with the SDK's SkillCatalog, and the Tasks extension (SEP-2663) against a tasks
# fixture written from the scenarios (fixtures/servers/conformance-tasks.ts), each directly, and
# through ONE gateway in front of several servers: the skills fixture twice (prefixes "skills"
# and "docs") and the tasks fixture with prefix "" (the suite calls greet, slow_compute...).

# One extension fixture ($1: conformance-<name>.js) served over HTTP: its MCP URL in FIXTURE_URL.
fixture() { # name
  node "dist/fixtures/servers/conformance-$1.js" --http=0 2> "$OUT/$1-fixture.log" &
  pids+=($!)
  FIXTURE_URL=$(wait_url "$OUT/$1-fixture.log" 'listening http://[^ ]+/mcp')
}
fixture skills
SKILLS_DIRECT=$FIXTURE_URL
fixture tasks
TASKS_DIRECT=$FIXTURE_URL
entry() { # name, fixture, extra config line
  printf '  %s:\n    command: %s\n    args: [%s]\n' "$1" "$(command -v node)" \
    "$ROOT/dist/fixtures/servers/conformance-$2.js"
  if [ -n "$3" ]; then echo "$3"; fi
}
{
  echo 'servers:'
  entry skills skills ''
  entry docs skills ''
  entry tasks tasks '    prefix: ""'
} > "$OUT/extensions-gateway.yaml"
node dist/src/cli/main.js serve --http --port 0 --config "$OUT/extensions-gateway.yaml" \
  2> "$OUT/extensions-gateway.log" &
pids+=($!)
EXT_GATEWAY=$(wait_url "$OUT/extensions-gateway.log" 'MCP endpoint[^:]*: +http://[^ ]+/mcp')
SKILLS_GATEWAY=$EXT_GATEWAY TASKS_GATEWAY=$EXT_GATEWAY
EXTENSIONS="sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory"
TASKS=$("$NODE22" "$SUITE" list 2>/dev/null | grep -oE 'tasks-[a-z-]+' | sort -u || true)
for scenario in $EXTENSIONS; do
  suite "ext-$scenario-direct" server --url "$SKILLS_DIRECT" --scenario "$scenario"
  suite "ext-$scenario-gateway" server --url "$SKILLS_GATEWAY" --scenario "$scenario"
done
for scenario in $TASKS; do
  suite "ext-$scenario-direct" server --url "$TASKS_DIRECT" --scenario "$scenario"
  suite "ext-$scenario-gateway" server --url "$TASKS_GATEWAY" --scenario "$scenario"
done

# Client-role extension scenarios (issue 58), by name: the machine grants (client credentials,
# workload identity, enterprise-managed authorization), DPoP, and the Skills host scenarios, each
# played by the CLI through scripts/conformance-client.mjs against the suite's servers.
AUTH_EXTENSIONS="auth/client-credentials-jwt auth/client-credentials-basic auth/wif-jwt-bearer
  auth/enterprise-managed-authorization auth/dpop auth/dpop-nonce sep-2640-client-no-prefetch
  sep-2640-client-verify-digest sep-2640-client-verify-size sep-2640-client-verify-frontmatter"
for scenario in $AUTH_EXTENSIONS; do
  suite "client-ext-${scenario//\//-}" client --command "node $ROOT/scripts/conformance-client.mjs" \
    --scenario "$scenario"
done

# One row per scenario of a run's summary: "name|✓ 3 passed, 0 failed", and for a scenario the
# revision runs without scoring it (an extension, added after the release), why.
rows() { # log file
  awk '
    /SUMMARY ===/ { summary = 1; next }
    /^Not scored/ { notscored = 1; next }
    notscored && /^  (✓|✗) / { reason = $0; sub(/^[^(]*\(/, "", reason); sub(/\)$/, "", reason); why[$2] = reason; next }
    summary && !notscored && /^(✓|✗) / {
      name = $2; sub(/:$/, "", name); result = $0; sub(/^[^:]*: /, "", result)
      line[name] = $1 " " result; order[++n] = name
    }
    END { for (i = 1; i <= n; i++) { nm = order[i]; print nm "|" line[nm] (nm in why ? " (not scored: " why[nm] ")" : "") } }
  ' "$1"
}

echo
echo "| scenario | role | revision | through mcp-normalizer | directly |"
echo "| --- | --- | --- | --- | --- |"
for revision in $REVISIONS; do
  join -t '|' -a1 -e '-' -o 0,1.2,2.2 \
    <(rows "$OUT/server-gateway-$revision.log" | sort -t'|' -k1,1) \
    <(rows "$OUT/server-direct-$revision.log" | sort -t'|' -k1,1) |
    sed -E "s/^([^|]*)\|([^|]*)\|(.*)$/| \1 | server | $revision | \2 | \3 |/"
  rows "$OUT/client-$revision.log" | sort -t'|' -k1,1 |
    sed -E "s/^([^|]*)\|(.*)$/| \1 | client | $revision | \2 | - |/"
done
echo
echo "| extension scenario | through mcp-normalizer | directly |"
echo "| --- | --- | --- |"
for scenario in $EXTENSIONS $TASKS; do
  result() { grep -E '^Passed:' "$OUT/ext-$scenario-$1.log" | tail -1 || echo '-'; }
  echo "| $scenario | $(result gateway) | $(result direct) |"
done
echo
echo "| client extension scenario | mcp-normalizer's CLI |"
echo "| --- | --- |"
for scenario in $AUTH_EXTENSIONS; do
  echo "| $scenario | $(grep -E '^Passed:' "$OUT/client-ext-${scenario//\//-}.log" | tail -1 || echo '-') |"
done
echo
for log in "$OUT"/server-*.log "$OUT"/client-[0-9]*.log; do
  echo "$(basename "$log" .log): $(grep -E '^Total' "$log" | tail -1)"
done
echo
echo "logs: $OUT" >&2
