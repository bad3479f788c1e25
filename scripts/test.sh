#!/usr/bin/env bash
# Install rho-agent with every extra into .venv, start-able database servers included, and run
# every test. Used by the README and by CI (.ci/run). An empty test run is a failure.
#
# Each install step says on stderr what it installs and roughly how long it takes; what the
# installers print (pip, apt, dpkg) goes to one log file, named at the start and shown when a
# step fails. How long a first and a later run take: docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."

export RHO_AGENT_INSTALL_LOG="${RHO_AGENT_INSTALL_LOG:-${TMPDIR:-/tmp}/rho-agent-install.log}"
: >"$RHO_AGENT_INSTALL_LOG"
say() { echo "test.sh: $*" >&2; }
# Run a command with its output in the log; on failure, show the log's last lines.
logged() {
    local status=0
    "$@" >>"$RHO_AGENT_INSTALL_LOG" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        say "failed ($status): $*; the end of $RHO_AGENT_INSTALL_LOG:"
        tail -n 30 "$RHO_AGENT_INSTALL_LOG" >&2
    fi
    return "$status"
}
say "installer output goes to $RHO_AGENT_INSTALL_LOG"

# apt waits for a lock held by another apt (an unattended upgrade) instead of failing at once.
export DEBIAN_FRONTEND=noninteractive
APT_WAIT=(-o DPkg::Lock::Timeout=600)

# bubblewrap: the read-only, network-less sandbox for restricted shell commands. ripgrep and
# tree: programs the grep tool and the restricted shell use where a machine has them (their
# tests skip without them, so a machine without them leaves those paths untested).
missing=()
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v tree >/dev/null 2>&1 || missing+=(tree)
if [ "${#missing[@]}" -gt 0 ] && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "installing ${missing[*]} (the programs the shell tests exercise; under a minute)"
    logged apt-get install "${APT_WAIT[@]}" -y -q "${missing[@]}" \
        || { logged apt-get update "${APT_WAIT[@]}" -q \
             && logged apt-get install "${APT_WAIT[@]}" -y -q "${missing[@]}"; } \
        || say "warning: ${missing[*]} not installed; restricted commands run without" \
            "bubblewrap if it is missing, and the tests of the others skip"
fi

if [ -f .ci/install-db-servers.sh ]; then
    bash .ci/install-db-servers.sh
fi
if [ -f .ci/install-browser.sh ]; then
    bash .ci/install-browser.sh
fi

started=$SECONDS
if [ -x .venv/bin/python ]; then
    say "updating rho-agent and every extra in .venv (pip; seconds when nothing changed)"
else
    say "installing rho-agent with every extra into a new .venv (pip; about 4-5 minutes on" \
        "2 cores, most of it downloading and unpacking wheels)"
fi
logged python3 -m venv .venv
logged .venv/bin/python -m pip install --upgrade pip
logged .venv/bin/python -m pip install -e '.[dev]'
say "installed in $((SECONDS - started)) s; awk is $(readlink -f "$(command -v awk)")"

status=0
# Twice as many pytest-xdist workers as cores, at most 4 (4 on this 2-core machine): a third
# of the suite's time is waiting on processes, servers and sockets, which other workers fill
# (measured on 2 shared cores with 8,505 tests: 182 s with 4 workers, 184 s with 3, 296 s
# with 2; docs/testing.md).
cores=$(nproc 2>/dev/null || echo 2)
workers=$((cores * 2))
[ "$workers" -gt 4 ] && workers=4
# --dist worksteal: a worker that runs out of tests takes queued ones from the others, so the
# run does not end on one worker finishing its long queue alone (with the default
# distribution one worker ran ~40 s after the other three were done; docs/testing.md). With
# worksteal, tests/conftest.py also puts the known-long tests (LONG_TESTS) at the heads of the
# workers' first batches, so none of them starts late and ends the run alone.
say "running the tests with $workers workers (minutes on 2 cores: see docs/testing.md)"
.venv/bin/python -m pytest -n "$workers" --dist worksteal "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "pytest collected no tests: an empty run is not a pass" >&2
    exit 1
fi
exit "$status"
