#!/usr/bin/env bash
# A local image registry for swe-harvest: Debian's `docker-registry` package (Docker's
# distribution registry, v2 API) on 127.0.0.1:$SWE_HARVEST_REGISTRY_PORT (5000).
#
#   scripts/registry.sh up     install (apt) and start it unless one answers already;
#                              prints the address to put in `validate.registry` /
#                              `release.registry`
#   scripts/registry.sh down   stop the one this script started (its pidfile)
#   scripts/registry.sh addr   print the address
#   scripts/registry.sh gc     garbage collection: frees the layers of removed images
#
# Idempotent: when something already answers the registry API on the port, it is
# used as it is and nothing is started (another user's registry, or ours from an
# earlier run). Decisions:
# - Loopback only, no TLS, no auth: the Docker engine trusts 127.0.0.0/8 registries
#   without TLS, so the host's engine needs no new setting (and no restart). The
#   test cluster (scripts/cluster.sh) reaches it through a forwarder of its own.
# - Its own config and storage under $SWE_HARVEST_REGISTRY_DIR, not the package's
#   /etc/docker/registry (which asks for an htpasswd file nobody made).
# - No systemd here: started detached (setsid), pid in the pidfile.
set -euo pipefail

PORT="${SWE_HARVEST_REGISTRY_PORT:-5000}"
DIR="${SWE_HARVEST_REGISTRY_DIR:-/var/lib/swe-harvest/registry}"
ADDR="127.0.0.1:$PORT"
PIDFILE="$DIR/registry.pid"

log() { printf 'registry.sh: %s\n' "$*" >&2; }
die() { printf 'registry.sh: error: %s\n' "$*" >&2; exit 1; }

answers() { curl -fsS -m 3 "http://$ADDR/v2/" >/dev/null 2>&1; }

up() {
    if answers; then
        log "a registry already answers on $ADDR"
        echo "$ADDR"
        return
    fi
    if ! command -v docker-registry >/dev/null; then
        [ "$(id -u)" = 0 ] || die "docker-registry is not installed and installing it needs root"
        log "installing Debian's docker-registry"
        apt-get update -qq || die "apt-get update failed"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-registry >/dev/null \
            || die "apt-get install docker-registry failed"
    fi
    mkdir -p "$DIR/storage"
    cat >"$DIR/config.yml" <<EOF
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $DIR/storage
  delete:
    enabled: true
http:
  addr: $ADDR
EOF
    # The package's service may hold the port with its own config (htpasswd): say so.
    # Not `grep -q`: under pipefail, ss killed by SIGPIPE after an early match reads as free.
    if ss -ltn "sport = :$PORT" 2>/dev/null | grep LISTEN >/dev/null; then
        die "port $PORT is taken by something that is not a registry; set SWE_HARVEST_REGISTRY_PORT"
    fi
    setsid nohup docker-registry serve "$DIR/config.yml" </dev/null >>"$DIR/registry.log" 2>&1 &
    echo $! >"$PIDFILE"
    for _ in $(seq 1 50); do
        if answers; then
            log "started docker-registry on $ADDR (pid $(cat "$PIDFILE"), storage $DIR/storage)"
            echo "$ADDR"
            return
        fi
        sleep 0.2
    done
    tail -n 20 "$DIR/registry.log" >&2 || true
    die "docker-registry did not answer on $ADDR; see $DIR/registry.log"
}

down() {
    if [ -f "$PIDFILE" ]; then
        local pid
        pid="$(cat "$PIDFILE")"
        if kill -0 "$pid" 2>/dev/null && grep -q docker-registry "/proc/$pid/cmdline" 2>/dev/null; then
            kill "$pid"
            log "stopped docker-registry (pid $pid)"
        fi
        rm -f "$PIDFILE"
    fi
}

# The registry's garbage collection: removes the layers that no manifest names any
# more (after `swe-harvest gc` or a run removed job images). Distribution requires no
# push while it runs: the registry is stopped for it, and started again if it ran.
collect() {
    [ -f "$DIR/config.yml" ] || die "no registry of this script's under $DIR"
    local was_up=
    if [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then was_up=1; down; sleep 0.5; fi
    local before after
    before=$(du -sm "$DIR/storage" | cut -f1)
    docker-registry garbage-collect --delete-untagged "$DIR/config.yml" >>"$DIR/registry.log" 2>&1 \
        || die "garbage-collect failed; see $DIR/registry.log"
    after=$(du -sm "$DIR/storage" | cut -f1)
    log "garbage collection: storage ${before} MiB -> ${after} MiB"
    if [ -n "$was_up" ]; then up >/dev/null; fi
}

case "${1:-up}" in
    up) up ;;
    down) down ;;
    addr) echo "$ADDR" ;;
    gc) collect ;;
    *) die "usage: scripts/registry.sh up|down|addr|gc" ;;
esac
