#!/usr/bin/env bash
# Installs the real third-party peers the tests run that npm does not bring: the Python MCP SDK
# and FastMCP, pinned in fixtures/python/requirements.txt, into .peers/python (a venv, ignored by
# git). Idempotent: a venv that already has the pinned versions is left alone. Uses pip's own
# configuration (index, mirror); `--retries 0` keeps an unreachable index from stalling it.
set -euo pipefail
cd "$(dirname "$0")/.."
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
