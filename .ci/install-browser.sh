#!/usr/bin/env bash
# Install Debian's headless-capable Chromium for the dashboard tests
# (tests/server/test_server_dashboard.py drive it with Playwright for Python, pointed at
# /usr/bin/chromium; Playwright's own browser download is never used). Idempotent.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "install-browser: need root and apt-get to install chromium; the dashboard tests" \
         "will skip (and fail under CI=true)" >&2
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt_wait=(-o DPkg::Lock::Timeout=600)
# apt's and dpkg's output goes to a log (scripts/test.sh names it), not to the terminal.
log="${RHO_AGENT_INSTALL_LOG:-${TMPDIR:-/tmp}/rho-agent-install.log}"
echo "install-browser: installing chromium (the dashboard tests run in a real browser; a" \
     "minute or two; output in $log)" >&2
if ! { apt-get install "${apt_wait[@]}" -y -q chromium >>"$log" 2>&1 \
        || { apt-get update "${apt_wait[@]}" -q >>"$log" 2>&1 \
             && apt-get install "${apt_wait[@]}" -y -q chromium >>"$log" 2>&1; }; }; then
    echo "install-browser: chromium could not be installed; the end of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
