#!/usr/bin/env bash
# Installs the real third-party peers the tests run that npm does not bring: nginx and Chromium
# from Debian (the replica tests, test/e2e/replicas.test.ts; the status page in a real browser,
# test/e2e/status-page.test.ts) when they are missing, and the Python MCP SDK and
# FastMCP, pinned in fixtures/python/requirements.txt, into .peers/python (a venv, ignored by
# git). Idempotent: an installed nginx and a venv that already has the pinned versions are left
# alone. Uses pip's own configuration (index, mirror); `--retries 0` keeps an unreachable index
# from stalling it.
set -euo pipefail
cd "$(dirname "$0")/.."

# Installs Debian package $1 unless $2 (its program) is there.
debian_package() {
  [ -x "$2" ] && return 0
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null ||
      { echo "install-peers: $1 is missing and this user cannot install it: apt-get install $1" >&2; exit 1; }
    sudo=(sudo)
  fi
  # No service is started: the tests run their own nginx on a free port of 127.0.0.1.
  "${sudo[@]}" apt-get install -y --no-install-recommends "$1" >/dev/null 2>&1 ||
    { "${sudo[@]}" apt-get update >/dev/null && "${sudo[@]}" apt-get install -y --no-install-recommends "$1" >/dev/null; }
  echo "install-peers: installed $1 ($2)" >&2
}
debian_package nginx /usr/sbin/nginx
debian_package chromium /usr/bin/chromium
venv=.peers/python
requirements=fixtures/python/requirements.txt
stamp="$venv/.requirements"
if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
command -v python3 >/dev/null || { echo "install-peers: python3 is required (3.10 or later)" >&2; exit 1; }
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --retries 0 -r "$requirements" 2> >(grep -v "^WARNING: " >&2)
cp "$requirements" "$stamp"
echo "install-peers: Python peers in $venv ($(tr '\n' ' ' < "$requirements"))" >&2
