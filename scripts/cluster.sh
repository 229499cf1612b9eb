#!/usr/bin/env bash
# A Docker Swarm cluster on one machine, for trying and testing `--backend swarm`.
#
#   scripts/cluster.sh up N        a swarm of N nodes: the host's engine as manager
#                                  (and worker) plus N-1 engines, each in its own
#                                  network namespace; prints the registry address
#   scripts/cluster.sh down        removes the extra engines, their namespaces and
#                                  network, and leaves the swarm (if this script made it)
#   scripts/cluster.sh kill-node I kills node I (2..N) at once, engine and containers,
#                                  like a machine that vanished (the tests use it)
#   scripts/cluster.sh status      the nodes as the manager sees them
#
# Idempotent: `up` keeps what is there and adds what is missing (`up 3` after `up 2`
# adds node 3; `up 2` after `up 3` removes node 3); `down` on nothing does nothing.
#
# Layout (everything carries `swh` in its name, so nothing else is touched):
# - a bridge `swhbr0` (10.213.0.1/24) on the host; node I is the namespace `swh-node$I`
#   with a veth pair `swh-v$I` <-> eth0 (10.213.0.$I), its own dockerd (and managed
#   containerd) with data root /var/lib/swh-cluster/node$I, exec root, pidfile and
#   socket under /run/swh-cluster/node$I/ (also its /var/run/docker.sock, in a mount
#   namespace of its own), hostname `swh-node$I` (own UTS namespace),
#   cgroup parent `swh-node$I`.
# - the swarm: `docker swarm init --advertise-addr 10.213.0.1` on the host's engine
#   (does not touch its running containers; never restarted or reconfigured), overlay
#   subnets from 10.214.0.0/16; workers join with the worker token.
# - the registry (scripts/registry.sh, on the host's 127.0.0.1:5000) is reached by
#   every node under the same name, 127.0.0.1:5000: a forwarder (socat) in each
#   namespace carries it to the host, so image references are the same on every
#   node and every engine trusts them without TLS (loopback); the workers are also
#   given `--insecure-registry 10.213.0.1:5000` for direct use. Images reach the
#   workers only through this registry.
# - bridged traffic between the nodes is let through Docker's FORWARD DROP policy by
#   one rule in DOCKER-USER (`-i swhbr0 -o swhbr0`); the nodes have no route out.
set -euo pipefail
cd "$(dirname "$0")/.."

SUBNET_PREFIX=10.213.0
HOST_IP="$SUBNET_PREFIX.1"
BRIDGE=swhbr0
STATE=/run/swh-cluster
DATA=/var/lib/swh-cluster
REGISTRY_PORT="${SWE_HARVEST_REGISTRY_PORT:-5000}"
MAX_NODES=9

log() { printf 'cluster.sh: %s\n' "$*" >&2; }
die() { printf 'cluster.sh: error: %s\n' "$*" >&2; exit 1; }

need_root() {
    [ "$(id -u)" = 0 ] || die "needs root (network namespaces, veth pairs, extra Docker engines)"
    command -v ip >/dev/null || die "ip (iproute2) is missing: apt-get install iproute2"
    command -v dockerd >/dev/null || die "dockerd is missing: scripts/setup.sh installs Docker"
    if ! command -v socat >/dev/null; then
        log "installing socat (the registry forwarder)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends socat >/dev/null \
            || die "apt-get install socat failed"
    fi
}

sock() { echo "$STATE/node$1/docker.sock"; }
dnode() { local i=$1; shift; docker -H "unix://$(sock "$i")" "$@"; }
pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pidfile_pid() { cat "$1" 2>/dev/null || true; }

network_up() {
    if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link add "$BRIDGE" type bridge
        ip addr add "$HOST_IP/24" dev "$BRIDGE"
    fi
    ip link set "$BRIDGE" up
    iptables -C DOCKER-USER -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null \
        || iptables -I DOCKER-USER -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
    # The host's end of the registry forwarder: the bridge address -> loopback.
    mkdir -p "$STATE"
    if ! pid_alive "$(pidfile_pid "$STATE/registry-forward.pid")"; then
        setsid socat "TCP-LISTEN:$REGISTRY_PORT,bind=$HOST_IP,fork,reuseaddr" "TCP:127.0.0.1:$REGISTRY_PORT" \
            </dev/null >/dev/null 2>&1 &
        echo $! >"$STATE/registry-forward.pid"
    fi
}

swarm_up() {
    local state
    state="$(docker info -f '{{.Swarm.LocalNodeState}}')"
    if [ "$state" = active ]; then
        local addr
        addr="$(docker info -f '{{.Swarm.NodeAddr}}')"
        [ "$addr" = "$HOST_IP" ] || die "the host's engine is already in a swarm (advertised on $addr), not this script's; leave it or use that swarm"
        return
    fi
    docker swarm init --advertise-addr "$HOST_IP" --listen-addr "$HOST_IP:2377" \
        --default-addr-pool 10.214.0.0/16 >/dev/null
    touch "$STATE/swarm-made-here"
    log "swarm initialised on the host's engine ($HOST_IP)"
}

# Whether network namespace $1 exists. grep reads all of ip's output: `grep -q` may
# exit at the first match and, under pipefail, ip's SIGPIPE would read as "absent".
netns_exists() {
    ip netns list | grep -w -- "$1" >/dev/null
}

node_up() {
    local i=$1 ns="swh-node$1" veth="swh-v$1" dir="$STATE/node$1"
    mkdir -p "$dir" "$DATA/node$i"
    netns_exists "$ns" || ip netns add "$ns"
    if ! ip link show "$veth" >/dev/null 2>&1; then
        ip link add "$veth" type veth peer name eth0 netns "$ns"
        ip link set "$veth" master "$BRIDGE" up
        ip -n "$ns" addr add "$SUBNET_PREFIX.$i/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
    fi
    if ! pid_alive "$(pidfile_pid "$dir/registry-forward.pid")"; then
        nsenter --net="/run/netns/$ns" setsid socat "TCP-LISTEN:$REGISTRY_PORT,bind=127.0.0.1,fork,reuseaddr" \
            "TCP:$HOST_IP:$REGISTRY_PORT" </dev/null >/dev/null 2>&1 &
        echo $! >"$dir/registry-forward.pid"
    fi
    if ! pid_alive "$(pidfile_pid "$dir/dockerd.pid")"; then
        # nsenter, not `ip netns exec`: the latter remounts /sys, which hides the
        # cgroup mounts the engine needs. A mount namespace of its own, in which the
        # engine's socket is also /var/run/docker.sock: what a container of this node
        # mounts from there (the job-image clean-up, pipeline/sandbox/job_images.rs)
        # reaches this node's engine, as on a machine of its own.
        rm -f "$(sock "$i")"
        nsenter --net="/run/netns/$ns" unshare --uts --mount sh -c "hostname $ns; setsid dockerd \
            --data-root $DATA/node$i/data --exec-root $dir/exec --pidfile $dir/dockerd.pid \
            -H unix://$(sock "$i") --cgroup-parent $ns --insecure-registry $HOST_IP:$REGISTRY_PORT \
            --log-driver json-file --log-opt max-size=64m --log-opt max-file=2 --label swh.node=$i & \
            n=0; until [ -S $(sock "$i") ] || [ \$n -ge 600 ]; do sleep 0.1; n=\$((n + 1)); done; \
            mount --bind $(sock "$i") /var/run/docker.sock" \
            </dev/null >>"$dir/dockerd.log" 2>&1 &
        local t0=$SECONDS
        until dnode "$i" info >/dev/null 2>&1; do
            if [ $((SECONDS - t0)) -ge 60 ] || ! pid_alive "$(pidfile_pid "$dir/dockerd.pid")" && [ $((SECONDS - t0)) -ge 5 ]; then
                tail -n 5 "$dir/dockerd.log" >&2
                die "node $i's engine did not start; see $dir/dockerd.log"
            fi
            sleep 0.5
        done
    fi
    if [ "$(dnode "$i" info -f '{{.Swarm.LocalNodeState}}')" != active ]; then
        dnode "$i" swarm join --advertise-addr "$SUBNET_PREFIX.$i" \
            --token "$(docker swarm join-token -q worker)" "$HOST_IP:2377" >/dev/null
        log "node $i ($ns) joined the swarm"
    fi
}

# Kills every process of node I: its engine, containerd and shims (in the namespace)
# and its containers (in the cgroup parent `swh-node$I`).
node_kill() {
    local i=$1 ns="swh-node$1"
    local pids=""
    netns_exists "$ns" && pids="$(ip netns pids "$ns" 2>/dev/null || true)"
    for procs in /sys/fs/cgroup/*/"$ns"; do
        [ -d "$procs" ] && pids="$pids $(find "$procs" -name cgroup.procs -exec cat {} + 2>/dev/null || true)"
    done
    # shellcheck disable=SC2086
    [ -n "${pids// /}" ] && kill -9 $pids 2>/dev/null || true
}

node_down() {
    local i=$1 ns="swh-node$1" dir="$STATE/node$1"
    if pid_alive "$(pidfile_pid "$dir/dockerd.pid")"; then
        dnode "$i" swarm leave --force >/dev/null 2>&1 || true
        local pid
        pid="$(pidfile_pid "$dir/dockerd.pid")"
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 40); do pid_alive "$pid" || break; sleep 0.5; done
    fi
    node_kill "$i"
    sleep 0.5
    # What the engine had mounted (overlay layers, shm, netns files) goes before its folders.
    { grep -E " ($DATA/node$i|$dir)[/ ]" /proc/self/mounts || true; } | awk '{print $2}' | sort -r | while read -r mount; do
        umount -l "$mount" 2>/dev/null || true
    done
    rm -rf "$dir" "$DATA/node$i"
    ip link del "swh-v$i" 2>/dev/null || true
    netns_exists "$ns" && ip netns del "$ns"
    for controller in /sys/fs/cgroup/*/"$ns"; do
        [ -d "$controller" ] && find "$controller" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
    # The manager forgets the node (it is down now).
    docker node ls --format '{{.ID}} {{.Hostname}} {{.Status}}' 2>/dev/null | awk -v h="$ns" '$2 == h && $3 != "Ready" {print $1}' \
        | xargs -r docker node rm --force >/dev/null 2>&1 || true
    return 0
}

existing_nodes() {
    ip netns list | awk '{print $1}' | sed -n 's/^swh-node\([0-9]\+\)$/\1/p' | sort -n
}

up() {
    local n=${1:-}
    [[ "$n" =~ ^[1-9]$ ]] || die "usage: scripts/cluster.sh up N (N nodes, 1..$MAX_NODES, the host's engine counts as one)"
    need_root
    scripts/registry.sh up >/dev/null
    network_up
    swarm_up
    for i in $(existing_nodes); do
        [ "$i" -le "$n" ] || { node_down "$i"; log "node $i removed"; }
    done
    for i in $(seq 2 "$n"); do node_up "$i"; done
    # Wait until the manager sees every node ready.
    local t0=$SECONDS
    while [ "$(docker node ls --format '{{.Status}}' | grep -c Ready)" -lt "$n" ]; do
        [ $((SECONDS - t0)) -lt 60 ] || die "the swarm has not $n ready nodes after 60 s: $(docker node ls)"
        sleep 1
    done
    # Entries of earlier engines of these nodes (killed, or left without the manager knowing).
    docker node ls --format '{{.ID}} {{.Hostname}} {{.Status}}' | awk '$2 ~ /^swh-node[0-9]+$/ && $3 != "Ready" {print $1}' \
        | xargs -r docker node rm --force >/dev/null 2>&1 || true
    log "swarm of $n node(s) ready; registry 127.0.0.1:$REGISTRY_PORT"
    echo "127.0.0.1:$REGISTRY_PORT"
}

down() {
    [ "$(id -u)" = 0 ] || die "needs root"
    for i in $(existing_nodes); do node_down "$i"; done
    # Nodes whose namespace went but whose state did not (a half-done earlier down).
    for dir in "$STATE"/node*; do
        [ -d "$dir" ] && node_down "${dir##*node}"
    done
    if [ -f "$STATE/swarm-made-here" ]; then
        docker swarm leave --force >/dev/null 2>&1 || true
        rm -f "$STATE/swarm-made-here"
        log "left the swarm"
    fi
    local pid
    pid="$(pidfile_pid "$STATE/registry-forward.pid")"
    pid_alive "$pid" && kill "$pid"
    rm -f "$STATE/registry-forward.pid"
    while iptables -C DOCKER-USER -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null; do
        iptables -D DOCKER-USER -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT
    done
    ip link del "$BRIDGE" 2>/dev/null || true
    log "down"
}

case "${1:-}" in
    up) up "${2:-}" ;;
    down) down ;;
    kill-node)
        [[ "${2:-}" =~ ^[2-9]$ ]] || die "usage: scripts/cluster.sh kill-node I (2..$MAX_NODES)"
        node_kill "$2"
        log "node $2 killed"
        ;;
    status) docker node ls ;;
    *) die "usage: scripts/cluster.sh up N | down | kill-node I | status" ;;
esac
