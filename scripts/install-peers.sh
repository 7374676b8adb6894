#!/usr/bin/env bash
# `npm test`'s pretest: the real third-party peers the tests run that npm does not bring.
#
# - nginx, Chromium and Redis from Debian (the replica tests, the status page and the logins in a
#   real browser, the shared store). Run as root (CI is), a missing one is installed with apt-get, and checked to be
#   there afterwards: a failed install fails here, by name. Run as anyone else, nothing is
#   installed (a test command never asks for privileges): the missing ones are named with the one
#   command that installs them, and the suites that need them are skipped (test/helpers/peers.ts),
#   or fail when CI=true.
# - the Python MCP SDK and FastMCP, pinned in fixtures/python/requirements.txt, into .peers/python
#   (a venv, ignored by git), from pip's configured index; `--retries 0` keeps an unreachable
#   index from stalling it. Where pip cannot install them, their suites are skipped by name, as a
#   missing system peer's are (they fail when CI=true).
# A program is found at its Debian path or anywhere on the PATH.
#
# Idempotent: what is there already is left alone.
set -uo pipefail
cd "$(dirname "$0")/.."

missing=()
# Each Debian package and the program it brings (test/helpers/peers.ts looks for the same).
for pair in nginx:/usr/sbin/nginx chromium:/usr/bin/chromium redis-server:/usr/bin/redis-server; do
  package=${pair%%:*}
  program=${pair#*:}
  [ -x "$program" ] || command -v "$package" >/dev/null || missing+=("$package")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "install-peers: installing ${missing[*]} (apt-get, as root)" >&2
    # No service is started: the tests run their own nginx on a free port of 127.0.0.1.
    if ! apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/install-peers.log 2>&1; then
      apt-get update >>/tmp/install-peers.log 2>&1
      apt-get install -y --no-install-recommends "${missing[@]}" >>/tmp/install-peers.log 2>&1
    fi
    for pair in nginx:/usr/sbin/nginx chromium:/usr/bin/chromium redis-server:/usr/bin/redis-server; do
      package=${pair%%:*}
      program=${pair#*:}
      if [[ " ${missing[*]} " == *" $package "* ]]; then
        if [ -x "$program" ] || command -v "$package" >/dev/null; then
          echo "install-peers: installed $package ($program)" >&2
        else
          echo "install-peers: FAILED to install $package ($program is not there; see /tmp/install-peers.log)" >&2
          exit 1
        fi
      fi
    done
  else
    echo "install-peers: *** ${missing[*]} missing: the tests that need them are skipped (they fail under CI=true)." >&2
    echo "install-peers: *** install with (as root): apt-get install -y ${missing[*]}" >&2
    [ "${CI:-}" = true ] && exit 1
  fi
fi

venv=.peers/python
requirements=fixtures/python/requirements.txt
stamp="$venv/.requirements"
if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
# The Python peers' suites are skipped, named, when they cannot be installed (CI fails instead).
python_missing() {
  echo "install-peers: *** $1: the Python peers' suites are skipped (they fail under CI=true)." >&2
  echo "install-peers: *** install with: $2" >&2
  rm -rf "$venv"
  [ "${CI:-}" = true ] && exit 1
  exit 0
}
if ! command -v python3 >/dev/null; then
  python_missing "no python3 (3.10 or later)" "apt-get install -y python3 python3-venv (as root), then bash scripts/install-peers.sh"
fi
rm -rf "$venv"
if ! python3 -m venv "$venv"; then
  python_missing "python3 -m venv failed" "apt-get install -y python3-venv (as root), then bash scripts/install-peers.sh"
fi
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --retries 0 -r "$requirements" 2> >(grep -v "^WARNING: " >&2); then
  python_missing "pip could not install $requirements from its index" "bash scripts/install-peers.sh, where pip reaches its index"
fi
cp "$requirements" "$stamp"
echo "install-peers: Python peers in $venv ($(tr '\n' ' ' < "$requirements"))" >&2
