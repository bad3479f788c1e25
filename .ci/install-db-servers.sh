#!/usr/bin/env bash
# Install the database servers the tests start (tests/db/conftest.py), on a fresh Debian
# machine. Idempotent: installs only what is missing. PostgreSQL (initdb/pg_ctl) and
# MariaDB (mariadbd/mariadb-install-db) are started by the test fixtures in temporary
# directories; nothing is enabled as a system service.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ] || ls /usr/lib/postgresql/*/bin/"$1" >/dev/null 2>&1; }

packages=()
have mariadbd || have mysqld || packages+=(mariadb-server)
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
    echo "install-db-servers: installing ${packages[*]} (the database tests start real servers)" >&2
    apt-get update "${apt_wait[@]}" -qq
    # policy-rc.d keeps the packages from starting system services during install; the trap
    # removes it however apt ends, so a failed install never leaves services disabled.
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
        trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt-get install "${apt_wait[@]}" -y -qq --no-install-recommends "${packages[@]}"
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
