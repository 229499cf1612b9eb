#!/usr/bin/env bash
# The browser of the review page's tests (tests/review.rs) and benchmark
# (scripts/bench-review.sh): Debian's `chromium` and `chromium-driver`, installed with
# apt where they are missing. Idempotent: on a machine that has them it only says so.
# Exits 0 when a chromium and a chromedriver are there afterwards, 1 otherwise (the
# tests then skip, saying why). Several test processes may call it at once: an flock
# lets one install while the others wait.
set -euo pipefail

log() { printf 'setup-browser.sh: %s\n' "$*" >&2; }

have_browser() { command -v chromedriver >/dev/null && { command -v chromium >/dev/null || command -v chromium-browser >/dev/null; }; }

if have_browser; then
    log "chromium and chromedriver: already installed ($(chromedriver --version 2>/dev/null | head -n 1))"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    log "chromium or chromedriver is missing and installing them needs root: run \`apt-get install chromium chromium-driver\` as root"
    exit 1
fi
if ! command -v apt-get >/dev/null; then
    log "chromium or chromedriver is missing and there is no apt-get: install a chromium and its chromedriver by hand"
    exit 1
fi

exec 9>/var/lock/swe-harvest-setup-browser.lock
flock 9
if have_browser; then
    log "chromium and chromedriver: installed by another process meanwhile"
    exit 0
fi
log "installing chromium and chromium-driver (Debian packages)"
apt-get update -qq || { log "apt-get update failed"; exit 1; }
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null \
    || { log "apt-get install chromium chromium-driver failed"; exit 1; }
have_browser || { log "installed, but chromium or chromedriver is still not on PATH"; exit 1; }
log "installed $(chromedriver --version | head -n 1)"
