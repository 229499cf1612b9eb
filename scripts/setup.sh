#!/usr/bin/env bash
# swe-harvest machine setup: a running Docker engine and the base images
# swe-harvest/base:py3.9, :py3.11, :py3.13, :py3.14, plus those of the other languages asked
# for in SWE_HARVEST_LANGUAGES (go: :go1.19, :go1.24; rust: :rust1.63, :rust1.85;
# node: :node18, :node20; java: :jdk11, :jdk17, :jdk21; c: :gcc12, and :gcc14 when
# SWE_HARVEST_BASE_IMAGES names it).
#
# Idempotent: what is already there is reported and left alone, so a rerun on a
# ready machine takes seconds. Meant for Debian 12 run as root (CI's `.ci/run`);
# a non-root user with Docker access can run it too when nothing has to be built.
#
# Python base images are pulled (python:X-slim, plus a layer with the compiler) where
# Docker Hub answers a quick probe (one per run, SWE_HARVEST_PROBE_TIMEOUT seconds);
# otherwise they are built at once from Debian packages (debootstrap + `docker import`):
#   bullseye -> Python 3.9, bookworm -> Python 3.11, trixie -> Python 3.13,
#   forky (testing) -> Python 3.14.
# Go, Rust and Node images are always built from Debian's own toolchain packages
# (`golang-go`, `rustc` + `cargo`, `nodejs` + `npm`): bookworm -> Go 1.19 / Rust
# 1.63 / Node 18, trixie -> Go 1.24 / Rust 1.85 / Node 20. They are made only when
# SWE_HARVEST_LANGUAGES names their language (default: python only), e.g.
# SWE_HARVEST_LANGUAGES="python go node" (`javascript` and `typescript` are other
# names of `node`: one runtime runs both).
# Java images are Debian's OpenJDK and Maven (`openjdk-N-jdk-headless`, `maven`):
# bullseye -> JDK 11 / Maven 3.6, bookworm -> JDK 17 / Maven 3.8, trixie -> JDK 21 /
# Maven 3.9. No Gradle: Debian's gradle (4.4) builds no project of the last years,
# and a project's Gradle wrapper downloads its distribution from services.gradle.org.
# Python runtimes that no reachable Debian suite ships (3.7, 3.8, 3.10, 3.12) are made
# only where Docker Hub answers (python:X-slim plus the compiler layer, when
# SWE_HARVEST_BASE_IMAGES names them); elsewhere bring your own image and name it in
# validate.base_images (docs/languages/python.md, "Runtimes"). Nothing is built from CPython's source.
# C and C++ images (`c`, also named `cpp`) are Debian's compilers and build tools
# (gcc, g++, make, autoconf, automake, libtool, cmake, pkg-config, bison, flex):
# bookworm -> GCC 12 / CMake 3.25 (made for `c`), trixie -> GCC 14 / CMake 3.31 (only
# when SWE_HARVEST_BASE_IMAGES names gcc14: one image keeps CI's set-up short, and
# inference takes the newest GCC there that the task's date allows). No valgrind: the
# tests of autotools projects (jq's) use it only when it is installed.
# See scripts/README.md for the environment variables and the decisions.
set -euo pipefail

# ---------------------------------------------------------------- settings ---
LANGUAGES="${SWE_HARVEST_LANGUAGES:-python}"
# The images of each language (SWE_HARVEST_BASE_IMAGES, when set, is the whole list).
images_of_language() {
    case "$1" in
        python) echo "py3.9 py3.11 py3.13 py3.14" ;;
        go) echo "go1.19 go1.24" ;;
        rust) echo "rust1.63 rust1.85" ;;
        node | javascript | typescript) echo "node18 node20" ;;
        java) echo "jdk11 jdk17 jdk21" ;;
        c | cpp) echo "gcc12" ;;
        *) return 1 ;;
    esac
}
DEFAULT_IMAGES=""
for language in ${LANGUAGES//,/ }; do
    more=$(images_of_language "$language") || {
        printf 'setup.sh: error: unknown language %s in SWE_HARVEST_LANGUAGES (known: python go rust node java c)\n' "$language" >&2
        exit 2
    }
    DEFAULT_IMAGES="$DEFAULT_IMAGES $more"
done
IMAGES="${SWE_HARVEST_BASE_IMAGES:-${DEFAULT_IMAGES# }}"
WORK_DIR="${SWE_HARVEST_WORK_DIR:-/var/cache/swe-harvest}"
DOCKERD_LOG="${SWE_HARVEST_DOCKERD_LOG:-/var/log/swe-harvest-dockerd.log}"
DOCKERD_TIMEOUT="${SWE_HARVEST_DOCKERD_TIMEOUT:-60}"
PULL_TIMEOUT="${SWE_HARVEST_PULL_TIMEOUT:-120}"
PROBE_TIMEOUT="${SWE_HARVEST_PROBE_TIMEOUT:-5}"
# auto: pull python:X-slim when a quick probe finds Docker Hub answering; always; never.
PULL="${SWE_HARVEST_PULL:-auto}"
[ "${SWE_HARVEST_SKIP_PULL:-0}" = 1 ] && PULL=never # the older name of PULL=never
PARALLEL="${SWE_HARVEST_PARALLEL:-1}"
REBUILD="${SWE_HARVEST_REBUILD:-0}"
MIRROR_OVERRIDE="${SWE_HARVEST_DEBIAN_MIRROR:-}"
ALLOW_NO_GPG="${SWE_HARVEST_ALLOW_UNSIGNED_DEBIAN:-0}"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# The recipe: Python with venv and pip, git, and what sdists need to build (a C and
# C++ compiler, make, libc and Python headers, pkg-config). Bump RECIPE whenever the
# images' content changes: images labelled with another recipe are rebuilt.
RECIPE=2
PACKAGES=python3,python3-venv,python3-pip,git,ca-certificates,patch
BUILD_PACKAGES="gcc g++ make libc6-dev pkg-config"
PACKAGES="$PACKAGES,python3-dev,${BUILD_PACKAGES// /,}"
# Go: Debian's golang-go, git, and a C compiler for cgo. Rust: rustc and cargo (which
# bring gcc as the linker), git. Their recipes are counted apart from Python's.
GO_RECIPE=1
GO_PACKAGES=golang-go,git,ca-certificates,patch,gcc,libc6-dev
RUST_RECIPE=1
RUST_PACKAGES=rustc,cargo,git,ca-certificates,patch,gcc,libc6-dev
# Node: Debian's nodejs, git, and what node-gyp needs to build a native addon from
# source (python3, make, a C++ compiler); then npm, installed by apt inside the new
# system: debootstrap's own configure order breaks on npm's 300 node-* packages
# (node-gyp "depends on node-npmlog; however: not configured yet").
NODE_RECIPE=1
NODE_PACKAGES=nodejs,git,ca-certificates,patch,python3,make,g++,libc6-dev
NODE_APT_PACKAGES="npm"
# Java: the suite's headless JDK and Maven (ca-certificates-java makes the JVM's
# truststore from Debian's CA list).
JAVA_RECIPE=1
java_packages() { # tag -> packages
    echo "openjdk-${1#jdk}-jdk-headless,maven,ca-certificates-java,git,ca-certificates,patch"
}
# C and C++: the compilers and the build systems that C projects test with (autotools'
# `make check`, CMake's CTest, plain make), bison and flex for generated parsers.
C_RECIPE=1
C_PACKAGES=gcc,g++,make,libc6-dev,autoconf,automake,libtool,cmake,pkg-config,bison,flex,file,git,ca-certificates,patch
language_of() { # tag -> python | go | rust | node | java | c
    case "$1" in
        gcc*) echo c ;;
        py*) echo python ;;
        go*) echo go ;;
        rust*) echo rust ;;
        node*) echo node ;;
        jdk*) echo java ;;
    esac
}
recipe_for() { # tag
    case "$(language_of "$1")" in
        go) echo "$GO_RECIPE" ;;
        rust) echo "$RUST_RECIPE" ;;
        node) echo "$NODE_RECIPE" ;;
        java) echo "$JAVA_RECIPE" ;;
        c) echo "$C_RECIPE" ;;
        *) echo "$RECIPE" ;;
    esac
}
cmd_for() { # tag
    case "$(language_of "$1")" in
        python) echo python3 ;;
        *) echo bash ;;
    esac
}
packages_for() { # tag
    case "$(language_of "$1")" in
        go) echo "$GO_PACKAGES" ;;
        rust) echo "$RUST_PACKAGES" ;;
        node) echo "$NODE_PACKAGES" ;;
        java) java_packages "$1" ;;
        c) echo "$C_PACKAGES" ;;
        *) echo "$PACKAGES" ;;
    esac
}
RECIPE_LABEL=org.swe-harvest.base.recipe
IMAGE_REPO="${SWE_HARVEST_BASE_REPO:-swe-harvest/base}"

log() { printf '%s\n' "$*"; }
die() { printf 'setup.sh: error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }

# ------------------------------------------------------------------ apt ------
APT_UPDATED=0
apt_install() {
    is_root || die "need root to install $* (rerun as root)"
    command -v apt-get >/dev/null || die "apt-get not found: install $* by hand"
    if [ "$APT_UPDATED" = 0 ]; then
        apt-get update -qq || die "apt-get update failed"
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
        || die "apt-get install $* failed"
}

# --------------------------------------------------------------- docker ------
docker_answers() { command -v docker >/dev/null && docker info >/dev/null 2>&1; }
dockerd_running() {
    if command -v pgrep >/dev/null; then pgrep -x dockerd >/dev/null; else pidof dockerd >/dev/null; fi
}

ensure_docker() {
    if docker_answers; then
        log "docker engine: already running (server $(docker version -f '{{.Server.Version}}' 2>/dev/null || echo '?'))"
        return
    fi
    is_root || die "docker engine does not answer and starting it needs root"
    local installed=""
    if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
        apt_install docker.io
        installed="installed docker.io, "
    fi
    local started="started dockerd"
    if dockerd_running; then
        # A dockerd is already starting (or stuck): wait for it, never start a second.
        started="waited for the running dockerd"
    else
        mkdir -p "$(dirname "$DOCKERD_LOG")"
        printf '\n==== %s: started by swe-harvest scripts/setup.sh\n' "$(date -u +%FT%TZ)" >>"$DOCKERD_LOG"
        # No systemd here: detach dockerd from this shell (own session, no inherited
        # stdio) so that it outlives the script and does not hold CI's pipes open.
        setsid nohup dockerd </dev/null >>"$DOCKERD_LOG" 2>&1 &
    fi
    local t0=$SECONDS
    until docker_answers; do
        if [ $((SECONDS - t0)) -ge "$DOCKERD_TIMEOUT" ]; then
            tail -n 20 "$DOCKERD_LOG" >&2 2>/dev/null || true
            die "docker engine did not answer within ${DOCKERD_TIMEOUT} s; see $DOCKERD_LOG"
        fi
        if [ "$started" = "started dockerd" ] && ! dockerd_running; then
            tail -n 20 "$DOCKERD_LOG" >&2 2>/dev/null || true
            die "dockerd exited during startup; see $DOCKERD_LOG"
        fi
        sleep 1
    done
    log "docker engine: ${installed}${started} in $((SECONDS - t0)) s (log: $DOCKERD_LOG)"
}

# ----------------------------------------------------------- base images -----
suite_of() {
    case "$1" in
        py3.9) echo bullseye ;;
        py3.11) echo bookworm ;;
        py3.13) echo trixie ;;
        py3.14) echo forky ;; # Debian testing: its python3 moves with it
        go1.19 | rust1.63 | node18) echo bookworm ;;
        go1.24 | rust1.85 | node20) echo trixie ;;
        jdk11) echo bullseye ;;
        jdk17) echo bookworm ;;
        jdk21) echo trixie ;;
        gcc12) echo bookworm ;;
        gcc14) echo trixie ;;
        *) return 1 ;;
    esac
}

http_ok() { # URL answers 200?
    if command -v curl >/dev/null; then
        curl -fsS -o /dev/null -m 15 "$1" 2>/dev/null
    else
        wget -q -T 15 -t 1 -O /dev/null "$1" 2>/dev/null
    fi
}

# Debian mirrors to try: the override, those configured for apt on this machine,
# then the public defaults (old releases end up on archive.debian.org).
mirror_candidates() {
    {
        [ -n "$MIRROR_OVERRIDE" ] && echo "$MIRROR_OVERRIDE"
        local f
        for f in /etc/apt/sources.list.d/*.sources; do
            [ -f "$f" ] && sed -n 's/^URIs:[[:space:]]*//p' "$f" | tr ' ' '\n'
        done
        for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
            [ -f "$f" ] && awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
        done
        echo http://deb.debian.org/debian
        echo http://archive.debian.org/debian
    } | sed 's:/*$::' | grep -E '^https?://' | grep -v -- '-security$' | awk '!seen[$0]++'
}

find_mirror() { # suite -> first mirror that serves it
    local suite=$1 m
    while read -r m; do
        if http_ok "$m/dists/$suite/InRelease" || http_ok "$m/dists/$suite/Release"; then
            echo "$m"
            return 0
        fi
    done < <(mirror_candidates)
    return 1
}

ensure_build_tools() {
    local need=()
    command -v debootstrap >/dev/null || need+=(debootstrap)
    [ -f "$KEYRING" ] || need+=(debian-archive-keyring)
    command -v curl >/dev/null || command -v wget >/dev/null || need+=(wget)
    command -v gpgv >/dev/null || need+=(gpgv)
    if [ "${#need[@]}" -gt 0 ]; then
        apt_install "${need[@]}"
        log "build tools: installed ${need[*]}"
    fi
    # Older debootstrap releases lack the scripts of newer suites; every modern
    # Debian suite uses the same script as sid.
    local s dir=/usr/share/debootstrap/scripts
    for s in bullseye bookworm trixie forky; do
        if [ ! -e "$dir/$s" ] && [ -e "$dir/sid" ]; then
            ln -s sid "$dir/$s"
            log "build tools: linked debootstrap script $s -> sid"
        fi
    done
}

# Check the suite's InRelease against the Debian keyring ourselves, so that an
# expired or missing key gives a clear message instead of a debootstrap failure.
signature_ok() { # mirror suite
    local tmp rc=0
    tmp=$(mktemp)
    if curl -fsS -m 30 -o "$tmp" "$1/dists/$2/InRelease" 2>/dev/null \
        || wget -q -T 30 -t 1 -O "$tmp" "$1/dists/$2/InRelease" 2>/dev/null; then
        gpgv --keyring "$KEYRING" "$tmp" >/dev/null 2>&1 || rc=1
    else
        rc=1
    fi
    rm -f "$tmp"
    return "$rc"
}

# Build one image from Debian packages and import it. Progress goes to stdout
# (the caller sends it to the image's log). Returns non-zero on failure.
build_image() { # tag suite mirror
    local tag=$1 suite=$2 mirror=$3 image="$IMAGE_REPO:$1"
    local rootfs="$WORK_DIR/rootfs/$tag"
    local cache="$WORK_DIR/debs/$suite"
    # Another language's image of the same suite may be built at the same time: its
    # own package cache, so that two debootstraps never write one folder.
    [ "$(language_of "$tag")" = python ] || cache="$cache-$(language_of "$tag")"
    local gpg_opts=(--keyring "$KEYRING")
    if ! signature_ok "$mirror" "$suite"; then
        if [ "$ALLOW_NO_GPG" = 1 ]; then
            # Last resort, opted into by the operator: the Release file's key has
            # expired (or is not in the keyring). Packages are still checked against
            # the Release file's hashes, but the Release file itself is not verified.
            echo "WARNING: $mirror $suite: Release signature does not verify; building with --no-check-gpg"
            gpg_opts=(--no-check-gpg)
        else
            echo "ERROR: $mirror/dists/$suite/InRelease does not verify against $KEYRING"
            echo "       (expired or unknown key?). Set SWE_HARVEST_ALLOW_UNSIGNED_DEBIAN=1 to"
            echo "       build with debootstrap --no-check-gpg anyway."
            return 1
        fi
    fi
    # Every step is checked explicitly: this runs on the left of `||`, where
    # bash ignores `set -e`.
    remove_rootfs "$rootfs" && mkdir -p "$rootfs" "$cache" || return 1
    # Remove the rootfs however this function ends (it runs in a subshell; the
    # trap fires after the function's locals are gone, hence the global).
    BUILD_ROOTFS=$rootfs
    trap 'remove_rootfs "$BUILD_ROOTFS"' EXIT
    # Two stages, so that dpkg in the second one runs with force-unsafe-io (no
    # fsync per file; what Debian's own Docker images set, too): builds take
    # about a quarter less time here. The setting stays in the image and speeds
    # up apt in the environment layers built on it.
    debootstrap --foreign --variant=minbase "${gpg_opts[@]}" --cache-dir="$cache" \
        --include="$(packages_for "$tag")" "$suite" "$rootfs" "$mirror" || return 1
    echo force-unsafe-io >"$rootfs/etc/dpkg/dpkg.cfg.d/swe-harvest-unsafe-io" || return 1
    chroot "$rootfs" /debootstrap/debootstrap --second-stage || {
        tail -n 30 "$rootfs/debootstrap/debootstrap.log" 2>/dev/null
        return 1
    }
    if [ "$(language_of "$tag")" = node ]; then
        chroot "$rootfs" sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $NODE_APT_PACKAGES" ||
            return 1
    fi
    # Keep the image small: no package lists, no caches, no logs; and, like the
    # Debian "slim" images that python:X-slim starts from, no documentation
    # (copyright files stay), man pages or translations, now or in later layers.
    cat >"$rootfs/etc/dpkg/dpkg.cfg.d/swe-harvest-slim" <<'EOF_DPKG' || return 1
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/bin/*lto-dump*
path-exclude /usr/lib/x86_64-linux-gnu/libasan.so.*
path-exclude /usr/lib/x86_64-linux-gnu/libhwasan.so.*
path-exclude /usr/lib/x86_64-linux-gnu/liblsan.so.*
path-exclude /usr/lib/x86_64-linux-gnu/libtsan.so.*
path-exclude /usr/lib/x86_64-linux-gnu/libubsan.so.*
path-exclude /usr/lib/python3*/config-*/libpython3*.a
path-exclude /usr/lib/x86_64-linux-gnu/libpython3*.a
EOF_DPKG
    # Nor what no sdist build uses (about 90 MB): gcc's LTO dump tool, the
    # sanitizers' runtimes and the static libpython (extensions link to nothing;
    # embedding links the shared one, which stays).
    rm -f "$rootfs"/usr/bin/*lto-dump* \
        "$rootfs"/usr/lib/x86_64-linux-gnu/lib{a,hwa,l,t,ub}san.so.* \
        "$rootfs"/usr/lib/python3*/config-*/libpython3*.a \
        "$rootfs"/usr/lib/x86_64-linux-gnu/libpython3*.a
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
    rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
        "$rootfs"/usr/share/groff/* "$rootfs"/usr/share/lintian/* \
        "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* \
        "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/lib/dpkg/*-old \
        "$rootfs"/var/log/* "$rootfs"/root/.cache "$rootfs"/tmp/* "$rootfs"/var/tmp/*
    mkdir -p "$rootfs"/var/lib/apt/lists/partial
    tar -C "$rootfs" --numeric-owner -c . | docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'WORKDIR /' \
        --change "CMD [\"$(cmd_for "$tag")\"]" \
        --change "LABEL org.swe-harvest.base.source=debootstrap org.swe-harvest.base.suite=$suite org.swe-harvest.base.mirror=$mirror $RECIPE_LABEL=$(recipe_for "$tag")" \
        - "$image" || return 1
    remove_rootfs "$rootfs"
}

# debootstrap mounts /proc and /sys inside the target while it runs; never let
# rm follow them into the host's.
remove_rootfs() { # dir
    local m
    [ -d "$1" ] || return 0
    awk -v d="$1" 'index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r |
        while read -r m; do umount -l "$m" || true; done
    rm -rf --one-file-system -- "$1"
}

# Whether Docker Hub (or the registry mirror the engine is configured with) answers:
# one quick probe per run, so that a machine without it falls back to Debian at once
# instead of waiting out a pull per image. Any HTTP answer counts (the registry's
# /v2/ says 401 to anonymous clients).
docker_hub_answers() {
    local url code
    url=$(docker info --format '{{range .RegistryConfig.Mirrors}}{{.}} {{end}}' 2>/dev/null | awk '{ print $1 }')
    url="${url:-https://registry-1.docker.io/}"
    if command -v curl >/dev/null; then
        code=$(curl -sS -o /dev/null -m "$PROBE_TIMEOUT" -w '%{http_code}' "${url%/}/v2/" 2>/dev/null) || true
        [ -n "$code" ] && [ "$code" != 000 ]
    else
        # wget: 0, 6 (authentication) or 8 (an error status) mean that the server answered.
        wget -q -T "$PROBE_TIMEOUT" -t 1 -O /dev/null "${url%/}/v2/" 2>/dev/null || code=$?
        case "${code:-0}" in 0 | 6 | 8) return 0 ;; *) return 1 ;; esac
    fi
}

# python:X-slim has Python's headers (in /usr/local) but no compiler: one layer adds
# the build packages, cleaned as in the debootstrap images.
pull_image() { # tag -> 0 if python:X-slim was pulled and the build packages added
    local tag=$1 upstream="python:${1#py}-slim"
    [ "$PULL" = never ] && return 1
    [ "$PULL" = always ] || [ "$HUB" = yes ] || return 1
    # Go, Rust, Node, Java and C: Debian's toolchain packages everywhere, never an upstream image.
    [ "$(language_of "$tag")" = python ] || return 1
    timeout "$PULL_TIMEOUT" docker pull -q "$upstream" >/dev/null 2>&1 || {
        echo "docker pull $upstream failed within $PULL_TIMEOUT s"
        return 1
    }
    printf '%s\n' \
        "FROM $upstream" \
        "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $BUILD_PACKAGES git patch && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/*" \
        "LABEL org.swe-harvest.base.source=$upstream $RECIPE_LABEL=$RECIPE" |
        docker build -q -t "$IMAGE_REPO:$tag" - || {
        echo "pulled $upstream, but adding the build packages to it failed"
        return 1
    }
}

# Does the image run Python of the version its tag promises? Prints the version.
verify_image() { # tag
    local tag=$1 out
    case "$(language_of "$tag")" in
        go)
            out=$(docker run --rm --network none "$IMAGE_REPO:$tag" go version 2>&1) || { echo "$out"; return 1; }
            case "$out" in
                "go version ${tag}"[.\ ]*) echo "$out"; return 0 ;;
                *) echo "$out (expected ${tag}.x)"; return 1 ;;
            esac
            ;;
        rust)
            out=$(docker run --rm --network none "$IMAGE_REPO:$tag" sh -c 'rustc --version && cargo --version' 2>&1) ||
                { echo "$out"; return 1; }
            case "$out" in
                "rustc ${tag#rust}."*) echo "$out" | tr '\n' ' '; return 0 ;;
                *) echo "$out (expected rustc ${tag#rust}.x)"; return 1 ;;
            esac
            ;;
        node)
            out=$(docker run --rm --network none "$IMAGE_REPO:$tag" sh -c 'echo "node $(node --version) npm $(npm --version)"' 2>&1) ||
                { echo "$out"; return 1; }
            case "$out" in
                "node v${tag#node}."*" npm "[0-9]*) echo "$out"; return 0 ;;
                *) echo "$out (expected node v${tag#node}.x and npm)"; return 1 ;;
            esac
            ;;
        java)
            out=$(docker run --rm --network none "$IMAGE_REPO:$tag" sh -c \
                'javac -version 2>&1 && mvn -B -v 2>&1 | head -n 1 && test -s /etc/ssl/certs/java/cacerts' 2>&1) ||
                { echo "$out (or no /etc/ssl/certs/java/cacerts)"; return 1; }
            case "$out" in
                "javac ${tag#jdk}."*) echo "$out" | tr '\n' ' '; return 0 ;;
                *) echo "$out (expected javac ${tag#jdk}.x)"; return 1 ;;
            esac
            ;;
        c)
            out=$(docker run --rm --network none "$IMAGE_REPO:$tag" sh -c \
                'gcc -dumpversion && autoreconf --version | head -n 1 && cmake --version | head -n 1 && make --version | head -n 1' 2>&1) ||
                { echo "$out"; return 1; }
            case "$out" in
                "${tag#gcc}"*) echo "gcc $out" | tr '\n' ' '; return 0 ;;
                *) echo "$out (expected gcc ${tag#gcc})"; return 1 ;;
            esac
            ;;
    esac
    out=$(docker run --rm --network none "$IMAGE_REPO:$tag" python3 --version 2>&1) || {
        echo "$out"
        return 1
    }
    case "$out" in
        "Python ${tag#py}."*) ;;
        *) echo "$out (expected Python ${tag#py}.x)"; return 1 ;;
    esac
    # The compiler finds Python's headers (what a C extension's sdist needs).
    # shellcheck disable=SC2016 # expanded in the container
    docker run --rm --network none "$IMAGE_REPO:$tag" sh -c \
        'printf "#include <Python.h>\nint main(void) { return Py_IsInitialized(); }\n" |
         gcc -fsyntax-only -x c -I"$(python3 -c "import sysconfig; print(sysconfig.get_paths()[\"include\"])")" -' \
        >/dev/null 2>&1 || {
        echo "$out, but gcc cannot compile against Python.h in it"
        return 1
    }
    echo "$out"
}

# Make one image: pull, else build. Runs in a subshell with output to $2;
# the last line of the log is the one-line summary.
make_image() { # tag logfile
    local tag=$1 logf=$2 t0=$SECONDS suite mirror how version old
    exec >"$logf" 2>&1
    old=$(docker image inspect -f '{{.Id}}' "$IMAGE_REPO:$tag" 2>/dev/null || true)
    suite=$(suite_of "$tag" || true)
    if pull_image "$tag"; then
        how="pulled python:${tag#py}-slim"
    else
        if [ -z "$suite" ]; then
            echo "no reachable Debian suite ships Python ${tag#py}, and python:${tag#py}-slim could not be pulled" \
                "(Docker Hub: $HUB, SWE_HARVEST_PULL=$PULL); bring your own image for it and name it in" \
                "validate.base_images (docs/languages/python.md, "Runtimes")"
            return 1
        fi
        if [ "$(language_of "$tag")" = python ]; then
            echo "python:${tag#py}-slim not pulled (Docker Hub: $HUB, SWE_HARVEST_PULL=$PULL); building from Debian $suite"
        fi
        mirror=$(find_mirror "$suite") || { echo "no Debian mirror serves $suite (tried: $(mirror_candidates | tr '\n' ' '))"; return 1; }
        echo "mirror for $suite: $mirror"
        (build_image "$tag" "$suite" "$mirror") || { echo "debootstrap/import of $suite failed"; return 1; }
        how="built from Debian $suite ($mirror)"
    fi
    version=$(verify_image "$tag") || {
        echo "verification failed: $version"
        docker rmi "$IMAGE_REPO:$tag" >/dev/null 2>&1 || true # so that a rerun retries
        return 1
    }
    # The image this one replaces, unless something still uses it (then it stays).
    if [ -n "$old" ] && [ "$old" != "$(docker image inspect -f '{{.Id}}' "$IMAGE_REPO:$tag")" ]; then
        docker rmi "$old" >/dev/null 2>&1 && echo "removed the previous image ${old#sha256:}" ||
            echo "kept the previous image ${old#sha256:} (in use)"
    fi
    echo "SUMMARY: $IMAGE_REPO:$tag: $how in $((SECONDS - t0)) s, $version, $(docker image inspect -f '{{.Size}}' "$IMAGE_REPO:$tag" | awk '{printf "%d MB", $1/1e6}')"
}

# The recipe an existing image was made by: its label, "none" for images from
# before recipes were labelled, empty when the image does not exist.
recipe_of() { # tag
    docker image inspect -f "{{with index .Config.Labels \"$RECIPE_LABEL\"}}{{.}}{{else}}none{{end}}" \
        "$IMAGE_REPO:$1" 2>/dev/null || true
}

# Is the image there, made by the current recipe, and not to be rebuilt anyway?
image_current() { # tag
    [ "$REBUILD" != 1 ] && [ "$(recipe_of "$1")" = "$(recipe_for "$1")" ]
}

ensure_images() {
    local tag todo=() recipe
    for tag in $IMAGES; do
        recipe=$(recipe_of "$tag")
        if image_current "$tag"; then
            log "$IMAGE_REPO:$tag: already present ($(docker image inspect -f '{{.Id}}' "$IMAGE_REPO:$tag" | cut -c8-19), recipe $recipe)"
        else
            [ -n "$recipe" ] && [ "$recipe" != "$(recipe_for "$tag")" ] &&
                log "$IMAGE_REPO:$tag: present but made by recipe $recipe, not $(recipe_for "$tag"): rebuilding"
            todo+=("$tag")
        fi
    done
    [ "${#todo[@]}" -eq 0 ] && return 0

    is_root || die "building ${todo[*]} needs root (debootstrap); rerun as root"
    mkdir -p "$WORK_DIR/logs"
    # One setup at a time per machine (CI jobs or tests may start several).
    exec 9>"$WORK_DIR/setup.lock"
    if ! flock -n 9; then
        log "waiting for another setup.sh run (lock $WORK_DIR/setup.lock)"
        flock 9
        # It may have made some of them meanwhile.
        local left=()
        for tag in "${todo[@]}"; do
            if image_current "$tag"; then
                log "$IMAGE_REPO:$tag: made meanwhile by the other run"
            else
                left+=("$tag")
            fi
        done
        [ "${#left[@]}" -eq 0 ] && return 0
        todo=("${left[@]}")
    fi
    ensure_build_tools
    HUB=no
    if [ "$PULL" = auto ] && printf '%s\n' "${todo[@]}" | grep -q '^py'; then
        if docker_hub_answers; then HUB=yes; fi
        log "Docker Hub: $([ "$HUB" = yes ] && echo "answers; pulling python:X-slim" || echo "does not answer within $PROBE_TIMEOUT s; building from Debian")"
    fi

    # Each image is made in a background subshell (so that `set -e` holds inside
    # it); in parallel unless SWE_HARVEST_PARALLEL=0 (debootstrap is one process
    # at a time, mostly waiting on downloads and dpkg, so two cores help). Its
    # log's last line says how it went. Wait for these pids only: a dockerd
    # started above is a child of this shell too.
    local failed=0 t pids=() pid
    for tag in "${todo[@]}"; do
        log "$IMAGE_REPO:$tag: making (log: $WORK_DIR/logs/$tag.log)"
        make_image "$tag" "$WORK_DIR/logs/$tag.log" &
        pids+=($!)
        [ "$PARALLEL" = 1 ] || wait $! || true
    done
    for pid in "${pids[@]}"; do wait "$pid" || true; done
    for tag in "${todo[@]}"; do
        t=$(tail -n 1 "$WORK_DIR/logs/$tag.log")
        case "$t" in
            SUMMARY:*) log "${t#SUMMARY: }" ;;
            *)
                failed=1
                printf 'setup.sh: error: %s:%s failed; last lines of %s:\n' "$IMAGE_REPO" "$tag" "$WORK_DIR/logs/$tag.log" >&2
                tail -n 15 "$WORK_DIR/logs/$tag.log" | sed 's/^/    /' >&2
                ;;
        esac
    done
    [ "$failed" = 0 ] || die "some base images could not be made (see above)"
}

T_START=$SECONDS
for tag in $IMAGES; do
    # A Python runtime of no Debian suite (py3.8) can still be pulled where Docker Hub answers.
    suite_of "$tag" >/dev/null || [[ "$tag" =~ ^py3\.[0-9]+$ ]] ||
        die "unknown base image '$tag' in SWE_HARVEST_BASE_IMAGES (known: py3.9 py3.11 py3.13 py3.14, another py3.N only from Docker Hub, go1.19 go1.24 rust1.63 rust1.85 node18 node20 jdk11 jdk17 jdk21 gcc12 gcc14)"
done
ensure_docker
ensure_images
log "setup: done in $((SECONDS - T_START)) s"
