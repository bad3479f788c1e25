#!/usr/bin/env bash
# Install the database servers the tests start (tests/db/conftest.py), on a fresh Debian
# machine. Idempotent: installs only what is missing. PostgreSQL (initdb/pg_ctl) and
# MariaDB (mariadbd/mariadb-install-db) are started by the test fixtures in temporary
# directories; nothing is enabled as a system service.
set -euo pipefail

# apt's and dpkg's output goes to a log (scripts/test.sh names it), not to the terminal.
log="${RHO_AGENT_INSTALL_LOG:-${TMPDIR:-/tmp}/rho-agent-install.log}"
quiet() {
    local status=0
    "$@" >>"$log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        echo "install-db-servers: failed ($status): $*; the end of $log:" >&2
        tail -n 30 "$log" >&2
    fi
    return "$status"
}

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || ls /usr/lib/postgresql/*/bin/"$1" >/dev/null 2>&1; }

packages=()
# MariaDB's packages bring gawk, which then becomes `awk` (Debian's default is mawk): named
# here so that it is installed on purpose, and said. The restricted shell runs gawk with
# --sandbox and mawk on its static check alone (rho_domain/shell/programs.py); tests cover both.
have mariadbd || have mysqld || packages+=(mariadb-server gawk)
have initdb || packages+=(postgresql)
have runuser || packages+=(util-linux)

if [ "${#packages[@]}" -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "install-db-servers: need root to install: ${packages[*]}" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    # Wait for a lock held by another apt (an unattended upgrade) instead of failing at once.
    apt_wait=(-o DPkg::Lock::Timeout=600)
    echo "install-db-servers: installing ${packages[*]} (the database tests start real" \
         "servers; a few minutes on a fresh machine; output in $log)" >&2
    quiet apt-get update "${apt_wait[@]}" -q
    # policy-rc.d keeps the packages from starting system services during install; the trap
    # removes it however apt ends, so a failed install never leaves services disabled.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    quiet apt-get install "${apt_wait[@]}" -y -q --no-install-recommends "${packages[@]}"
    if printf '%s\n' "${packages[@]}" | grep -qx gawk; then
        echo "install-db-servers: awk is now $(readlink -f "$(command -v awk)")" >&2
    fi
fi

# PostgreSQL's binaries live outside PATH on Debian; the fixtures also look there, but a
# link makes `initdb`/`pg_ctl` usable from a shell too.
if ! command -v initdb >/dev/null 2>&1; then
    bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -n "$bindir" ] && [ "$(id -u)" -eq 0 ]; then
        for tool in initdb pg_ctl postgres; do ln -sf "$bindir/$tool" "/usr/local/bin/$tool"; done
    fi
fi
echo "install-db-servers: mariadbd and initdb are available"
