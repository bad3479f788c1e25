#!/usr/bin/env bash
# Install rho-agent with every extra into .venv, start-able database servers included, and run
# every test. Used by the README and by CI (.ci/run). An empty test run is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

# apt waits for a lock held by another apt (an unattended upgrade) instead of failing at once.
export DEBIAN_FRONTEND=noninteractive
APT_WAIT=(-o DPkg::Lock::Timeout=600)

# bubblewrap: the read-only, network-less sandbox for restricted shell commands.
if ! command -v bwrap >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 \
        && [ "$(id -u)" = 0 ]; then
    echo "test.sh: installing bubblewrap (the sandbox the readonly shell tests exercise)" >&2
    apt-get install "${APT_WAIT[@]}" -y -q bubblewrap >/dev/null 2>&1 \
        || { apt-get update "${APT_WAIT[@]}" -q >/dev/null \
             && apt-get install "${APT_WAIT[@]}" -y -q bubblewrap >/dev/null; } \
        || echo "warning: bubblewrap not installed; restricted commands run without it" >&2
fi

if [ -f .ci/install-db-servers.sh ]; then
    bash .ci/install-db-servers.sh
fi
if [ -f .ci/install-browser.sh ]; then
    bash .ci/install-browser.sh
fi

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev]'

status=0
# Twice as many pytest-xdist workers as cores, at most 4 (4 on this 2-core machine): a third
# of the suite's time is waiting on processes, servers and sockets, which other workers fill
# (measured on 2 shared cores with 8,505 tests: 182 s with 4 workers, 184 s with 3, 296 s
# with 2; docs/testing.md).
cores=$(nproc 2>/dev/null || echo 2)
workers=$((cores * 2))
[ "$workers" -gt 4 ] && workers=4
.venv/bin/python -m pytest -n "$workers" "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: an empty run is not a pass" >&2
    exit 1
fi
exit "$status"
