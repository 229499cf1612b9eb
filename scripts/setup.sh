#!/usr/bin/env bash
# swe-harvest machine setup: a running Docker engine and the base images of the
# languages named in SWE_HARVEST_LANGUAGES (default: python), or exactly the images
# named in SWE_HARVEST_BASE_IMAGES.
#
# What to build is not written here: the runtime catalogue (pipeline/ecosystem/,
# one declaration per language) says it, and `swe-harvest images plan --tsv` prints
# it: the Debian suites to bootstrap, then per image its tag, suite, packages and
# check. So this script needs the binary: SWE_HARVEST_BIN, else it builds it with
# cargo (`cargo build --bin swe-harvest`, the debug profile that the tests use too).
# Or a plan printed before: SWE_HARVEST_IMAGE_PLAN names a file of `images plan
# --tsv`'s output, which then says exactly what to build (SWE_HARVEST_LANGUAGES and
# SWE_HARVEST_BASE_IMAGES are not read); the test set-up starts with the suite's plan
# (scripts/test-image-plan.tsv, which a test keeps equal to the catalogue's), beside
# the build instead of after it.
#
# How it builds (scripts/README.md has the decisions and the figures):
#   1. one root file system per Debian suite (bullseye, bookworm, trixie, forky):
#      mmdebstrap --variant=minbase with the packages every image holds (git, patch,
#      CA certificates, a C and C++ toolchain), slimmed, `docker import`ed as
#      $SWE_HARVEST_BASE_REPO:debian-<suite>, checked, labelled with its recipe;
#   2. every image as one `docker build` layer on its suite's image that apt-installs
#      its packages from the suite's mirror; or, for a Python image where Docker Hub
#      answers a quick probe, python:X-slim plus the compiler (nothing is ever built
#      from CPython's source);
#   3. each image checked by its command, without network.
# The suites are bootstrapped in parallel, and each suite's images start as soon as
# it is ready. Downloads are retried (apt's Acquire::Retries; a failed bootstrap
# or layer build once more), so a mirror that drops a connection under load does not
# fail the run.
#
# Idempotent: an image is rebuilt only when its recipe (a hash of the catalogue's
# entry, its suite's recipe and this script's BUILD_METHOD) changed, or with
# SWE_HARVEST_REBUILD=1; a rerun on a ready machine takes about a second. Meant for
# Debian 12 run as root (CI's `.ci/run`); a non-root user with Docker access can run
# it too when nothing has to be built.
set -euo pipefail

# ---------------------------------------------------------------- settings ---
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LANGUAGES="${SWE_HARVEST_LANGUAGES:-python}"
SELECTED_IMAGES="${SWE_HARVEST_BASE_IMAGES:-}"
WORK_DIR="${SWE_HARVEST_WORK_DIR:-/var/cache/swe-harvest}"
DOCKERD_LOG="${SWE_HARVEST_DOCKERD_LOG:-/var/log/swe-harvest-dockerd.log}"
DOCKERD_TIMEOUT="${SWE_HARVEST_DOCKERD_TIMEOUT:-60}"
PULL_TIMEOUT="${SWE_HARVEST_PULL_TIMEOUT:-120}"
PROBE_TIMEOUT="${SWE_HARVEST_PROBE_TIMEOUT:-5}"
# auto: pull an upstream image (python:X-slim) when a quick probe finds Docker Hub
# answering; always; never.
PULL="${SWE_HARVEST_PULL:-auto}"
[ "${SWE_HARVEST_SKIP_PULL:-0}" = 1 ] && PULL=never # the older name of PULL=never
PARALLEL="${SWE_HARVEST_PARALLEL:-1}"
REBUILD="${SWE_HARVEST_REBUILD:-0}"
MIRROR_OVERRIDE="${SWE_HARVEST_DEBIAN_MIRROR:-}"
ALLOW_NO_GPG="${SWE_HARVEST_ALLOW_UNSIGNED_DEBIAN:-0}"
IMAGE_REPO="${SWE_HARVEST_BASE_REPO:-swe-harvest/base}"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
# How images are made (this script's steps, not their packages: those are the
# catalogue's). Bump it when a step changes what an image holds; every recipe changes
# with it, so every image is rebuilt once.
BUILD_METHOD=4
RECIPE_LABEL=org.swe-harvest.base.recipe

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

# ------------------------------------------------------------- the plan ------
# The swe-harvest binary that prints the plan: SWE_HARVEST_BIN, else this checkout's,
# built (or found up to date) by cargo.
swe_harvest_bin() {
    if [ -n "${SWE_HARVEST_BIN:-}" ]; then
        [ -x "$SWE_HARVEST_BIN" ] || die "SWE_HARVEST_BIN=$SWE_HARVEST_BIN is not an executable"
        echo "$SWE_HARVEST_BIN"
        return
    fi
    command -v cargo >/dev/null ||
        die "the image plan comes from \`swe-harvest images plan\`: install Rust (cargo) or set SWE_HARVEST_BIN to a built swe-harvest"
    local t0=$SECONDS target
    target="${CARGO_TARGET_DIR:-$ROOT/target}"
    [[ "$target" = /* ]] || target="$ROOT/$target"
    (cd "$ROOT" && cargo build --quiet --locked --bin swe-harvest) >&2 ||
        die "cargo build --bin swe-harvest failed (the image plan needs the binary; or set SWE_HARVEST_BIN)"
    [ $((SECONDS - t0)) -lt 2 ] || log "swe-harvest: built for the image plan in $((SECONDS - t0)) s" >&2
    echo "$target/debug/swe-harvest"
}

# Reads the plan into these tables, keyed by suite or by tag.
declare -A SUITE_TAG SUITE_PACKAGES SUITE_CHECK SUITE_EXPECT SUITE_RECIPE
declare -A LANGUAGE SUITE PACKAGES COMMAND CHECK EXPECT UPSTREAM UPSTREAM_PACKAGES RECIPE
SUITES=()
TAGS=()

recipe_hash() { printf '%s' "$*" | sha256sum | cut -c1-12; }
dash_empty() { [ "$1" = - ] && echo "" || echo "$1"; }

read_plan() {
    local bin args=() word plan kind a b c d e f g h i j suite_recipe
    if [ -n "${SWE_HARVEST_IMAGE_PLAN:-}" ]; then
        plan=$(cat "$SWE_HARVEST_IMAGE_PLAN") ||
            die "SWE_HARVEST_IMAGE_PLAN=$SWE_HARVEST_IMAGE_PLAN cannot be read (a file of \`swe-harvest images plan --tsv\`'s output)"
        grep -q $'^image\t' <<<"$plan" ||
            die "SWE_HARVEST_IMAGE_PLAN=$SWE_HARVEST_IMAGE_PLAN names no image (a file of \`swe-harvest images plan --tsv\`'s output)"
    else
        bin=$(swe_harvest_bin)
        if [ -n "$SELECTED_IMAGES" ]; then
            for word in ${SELECTED_IMAGES//,/ }; do args+=(--image "$word"); done
        else
            for word in ${LANGUAGES//,/ }; do args+=(--language "$word"); done
        fi
        plan=$("$bin" images plan --tsv "${args[@]}") ||
            die "no plan for SWE_HARVEST_LANGUAGES='$LANGUAGES' SWE_HARVEST_BASE_IMAGES='$SELECTED_IMAGES' (see above)"
    fi
    while IFS=$'\t' read -r kind a b c d e f g h i j; do
        case "$kind" in
            suite)
                SUITES+=("$b")
                SUITE_TAG[$b]=$a
                SUITE_PACKAGES[$b]=$c
                SUITE_CHECK[$b]=$d
                SUITE_EXPECT[$b]=$e
                SUITE_RECIPE[$b]=$(recipe_hash "$BUILD_METHOD" "$kind" "$a" "$b" "$c" "$d" "$e")
                ;;
            image)
                TAGS+=("$a")
                LANGUAGE[$a]=$c
                SUITE[$a]=$(dash_empty "$d")
                PACKAGES[$a]=$e
                COMMAND[$a]=$f
                CHECK[$a]=$g
                EXPECT[$a]=$h
                UPSTREAM[$a]=$(dash_empty "$i")
                UPSTREAM_PACKAGES[$a]=$(dash_empty "$j")
                # Its suite's recipe too: a new root file system means new layers.
                suite_recipe=-
                [ "$d" = - ] || suite_recipe=${SUITE_RECIPE[$d]}
                RECIPE[$a]=$(recipe_hash "$BUILD_METHOD" "$suite_recipe" "$kind" "$a" "$b" "$c" "$d" "$e" "$f" "$g" "$h" "$i" "$j")
                ;;
        esac
    done <<<"$plan"
}

# ------------------------------------------------------------- Debian --------
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
    command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
    [ -f "$KEYRING" ] || need+=(debian-archive-keyring)
    command -v curl >/dev/null || command -v wget >/dev/null || need+=(wget)
    command -v gpgv >/dev/null || need+=(gpgv)
    if [ "${#need[@]}" -gt 0 ]; then
        apt_install "${need[@]}"
        log "build tools: installed ${need[*]}"
    fi
}

# Check the suite's InRelease against the Debian keyring ourselves, so that an
# expired or missing key gives a clear message instead of a bootstrap failure.
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

# Whether the suite's Release file is past its Valid-Until date on this mirror.
release_expired() { # mirror suite
    local until expires
    until=$({ curl -fsS -m 30 "$1/dists/$2/InRelease" 2>/dev/null ||
        wget -q -T 30 -t 1 -O - "$1/dists/$2/InRelease" 2>/dev/null; } | sed -n 's/^Valid-Until: //p' | head -n 1)
    [ -n "$until" ] && expires=$(date -d "$until" +%s 2>/dev/null) && [ "$expires" -lt "$(date +%s)" ]
}

# mmdebstrap mounts /proc, /sys and /dev inside the target while it runs; never let
# rm follow them into the host's (after a killed run, they may still be there).
remove_rootfs() { # dir
    local m
    [ -d "$1" ] || return 0
    awk -v d="$1" 'index($2, d "/") == 1 { print $2 }' /proc/mounts | sort -r |
        while read -r m; do umount -l "$m" || true; done
    rm -rf --one-file-system -- "$1"
}

# Bootstrap one suite's root file system and import it as its image. Progress goes
# to stdout (the caller sends it to the suite's log). Returns non-zero on failure.
build_suite() { # suite mirror
    local suite=$1 mirror=$2 image="$IMAGE_REPO:${SUITE_TAG[$1]}"
    local rootfs="$WORK_DIR/rootfs/$suite"
    local apt_opts=(--keyring="$KEYRING")
    if ! signature_ok "$mirror" "$suite"; then
        if [ "$ALLOW_NO_GPG" = 1 ]; then
            # Last resort, opted into by the operator: the Release file's key has
            # expired (or is not in the keyring). Packages are still checked against
            # the Release file's hashes, but the Release file itself is not verified.
            echo "WARNING: $mirror $suite: Release signature does not verify; building without checking it"
            apt_opts=(--aptopt='Acquire::AllowInsecureRepositories "true"' --aptopt='APT::Get::AllowUnauthenticated "true"')
        else
            echo "ERROR: $mirror/dists/$suite/InRelease does not verify against $KEYRING"
            echo "       (expired or unknown key?). Set SWE_HARVEST_ALLOW_UNSIGNED_DEBIAN=1 to"
            echo "       build without checking it anyway."
            return 1
        fi
    fi
    # apt retries a download that fails: mmdebstrap's here, and (the file written
    # below) every layer's and environment image's.
    apt_opts+=(--aptopt='Acquire::Retries "5"')
    local stale=0
    # A mirror that stopped refreshing a suite (forky, Debian testing, here on
    # 2026-11-26: Valid-Until 20 days past) still serves signed packages, but apt
    # refuses its Release file as expired. apt here and in this suite's images then
    # accepts it, saying so: the signature is still checked; what is lost is the
    # protection against a stale Release file, which is what such a mirror serves.
    if release_expired "$mirror" "$suite"; then
        echo "WARNING: $mirror/dists/$suite/InRelease is past its Valid-Until date;" \
            "apt in the images of $suite accepts it (its signature is still checked)"
        apt_opts+=(--aptopt='Acquire::Check-Valid-Until "false"')
        stale=1
    fi
    # Keep the images small: no package lists, no caches, no logs; and, like the
    # Debian "slim" images that python:X-slim starts from, no documentation
    # (copyright files stay), man pages or translations, now or in later layers; nor
    # what no build uses (about 90 MB): gcc's LTO dump tool, the sanitizers' runtimes
    # and static libpython (extensions link to nothing; embedding links the shared one).
    # dpkg runs with force-unsafe-io (no fsync per file), as in Debian's own Docker
    # images: in the bootstrap and in every layer's apt. mmdebstrap writes these
    # into the root file system (dpkg.cfg.d/99mmdebstrap), so they hold in every
    # layer built on it.
    local dpkg_opts="$WORK_DIR/dpkg-$suite.cfg"
    cat >"$dpkg_opts" <<'EOF_DPKG' || return 1
force-unsafe-io
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
    # Remove the rootfs however this function ends (it runs in a subshell; the
    # trap fires after the function's locals are gone, hence the global).
    BUILD_ROOTFS=$rootfs
    trap 'remove_rootfs "$BUILD_ROOTFS"' EXIT
    # mmdebstrap, not debootstrap: apt resolves and downloads, and dpkg installs the
    # whole set at once instead of package by package in a second stage: 38 s for
    # bookworm where debootstrap took 140 s (2026-11-28, scripts/README.md). A mirror
    # that drops a download beyond apt's retries gets one more try of the whole step.
    # Every step is checked explicitly: this runs on the left of `||`, where bash
    # ignores `set -e`.
    local attempt
    for attempt in 1 2; do
        remove_rootfs "$rootfs" && mkdir -p "$rootfs" || return 1
        if mmdebstrap --variant=minbase --mode=root "${apt_opts[@]}" --dpkgopt="$dpkg_opts" \
            --include="${SUITE_PACKAGES[$suite]// /,}" "$suite" "$rootfs" "$mirror"; then
            break
        fi
        [ "$attempt" = 2 ] && return 1
        echo "mmdebstrap of $suite failed; trying once more"
        sleep 5
    done
    # apt's settings stay under names of ours (one file each: the tests turn the
    # retries off by overwriting theirs).
    rm -f "$rootfs/etc/apt/apt.conf.d/99mmdebstrap"
    echo 'Acquire::Retries "5";' >"$rootfs/etc/apt/apt.conf.d/80swe-harvest-retries" || return 1
    if [ "$stale" = 1 ]; then
        echo 'Acquire::Check-Valid-Until "false";' >"$rootfs/etc/apt/apt.conf.d/80swe-harvest-stale-mirror" || return 1
    fi
    # mmdebstrap unpacks the essential packages before dpkg reads the exclusions:
    # remove what they brought.
    rm -f "$rootfs"/usr/bin/*lto-dump* \
        "$rootfs"/usr/lib/x86_64-linux-gnu/lib{a,hwa,l,t,ub}san.so.*
    find "$rootfs/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$rootfs/usr/share/doc" -mindepth 1 -type d -empty -delete
    find "$rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
    rm -rf "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
        "$rootfs"/usr/share/groff/* "$rootfs"/usr/share/lintian/* \
        "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/* \
        "$rootfs"/var/cache/debconf/*-old "$rootfs"/var/lib/dpkg/*-old \
        "$rootfs"/var/log/* "$rootfs"/root/.cache "$rootfs"/tmp/* "$rootfs"/var/tmp/*
    # OpenJDK's postinst links its man pages with update-alternatives, which fails
    # where the folder does not exist (dpkg excludes what would go in it).
    mkdir -p "$rootfs"/var/lib/apt/lists/partial "$rootfs"/usr/share/man/man1
    tar -C "$rootfs" --numeric-owner -c . | docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'WORKDIR /' \
        --change 'CMD ["bash"]' \
        --change "LABEL org.swe-harvest.base.source=mmdebstrap org.swe-harvest.base.suite=$suite org.swe-harvest.base.mirror=$mirror $RECIPE_LABEL=${SUITE_RECIPE[$suite]}" \
        - "$image" || return 1
    remove_rootfs "$rootfs"
}

# One image as a layer on its suite's image: its packages from the suite's mirror
# (the one the root file system was bootstrapped from). One more try when it fails.
build_layer() { # tag
    local tag=$1 suite=${SUITE[$1]} attempt
    local from="$IMAGE_REPO:${SUITE_TAG[$suite]}"
    local dockerfile
    dockerfile=$(printf '%s\n' \
        "FROM $from" \
        "RUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${PACKAGES[$tag]} >/dev/null && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/* /tmp/* /var/tmp/* /root/.cache && mkdir -p /var/lib/apt/lists/partial" \
        "CMD [\"${COMMAND[$tag]}\"]" \
        "LABEL org.swe-harvest.base.source=$from org.swe-harvest.base.suite=$suite $RECIPE_LABEL=${RECIPE[$tag]}")
    for attempt in 1 2; do
        docker build -q --force-rm -t "$IMAGE_REPO:$tag" - <<<"$dockerfile" && return 0
        [ "$attempt" = 2 ] && return 1
        echo "docker build of $tag on $from failed; trying once more"
        sleep 5
    done
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

any_upstream() { # tags...: whether one of them has an upstream image
    local tag
    for tag in "$@"; do [ -z "${UPSTREAM[$tag]}" ] || return 0; done
    return 1
}

# Whether an image is taken from its upstream image rather than built on its suite.
pulls() { # tag
    [ -n "${UPSTREAM[$1]}" ] && [ "$PULL" != never ] && { [ "$PULL" = always ] || [ "$HUB" = yes ]; }
}

# The upstream image (python:X-slim has Python's headers, no compiler), with one layer
# that adds the image's upstream packages, cleaned as in the Debian images.
pull_image() { # tag
    local tag=$1 upstream=${UPSTREAM[$1]}
    timeout "$PULL_TIMEOUT" docker pull -q "$upstream" >/dev/null 2>&1 || {
        echo "docker pull $upstream failed within $PULL_TIMEOUT s"
        return 1
    }
    printf '%s\n' \
        "FROM $upstream" \
        "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${UPSTREAM_PACKAGES[$tag]} && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/*" \
        "LABEL org.swe-harvest.base.source=$upstream $RECIPE_LABEL=${RECIPE[$tag]}" |
        docker build -q --force-rm -t "$IMAGE_REPO:$tag" - || {
        echo "pulled $upstream, but adding its packages failed"
        return 1
    }
}

# Runs a check in the image without network: it must succeed and its output start
# with the expected text. Prints the output on one line.
check_image() { # image command expect
    local out
    out=$(docker run --rm --network none "$1" sh -c "$2" 2>&1) || { echo "$out" | tr '\n' ' '; return 1; }
    out=$(echo "$out" | tr '\n' ' ' | sed 's/ *$//')
    case "$out" in
        "$3"*) echo "$out" ;;
        *) echo "$out (expected it to start with '$3')"; return 1 ;;
    esac
}

size_of() { docker image inspect -f '{{.Size}}' "$1" | awk '{ printf "%d MB", $1 / 1e6 }'; }

# The image this one replaced, unless something still uses it (then it stays).
remove_previous() { # image old-id
    if [ -n "$2" ] && [ "$2" != "$(docker image inspect -f '{{.Id}}' "$1")" ]; then
        docker rmi "$2" >/dev/null 2>&1 && echo "removed the previous image ${2#sha256:}" ||
            echo "kept the previous image ${2#sha256:} (in use)"
    fi
}

# Make one suite's image. Runs in a subshell with output to its log; the last line
# of the log is the one-line summary.
make_suite() { # suite
    local suite=$1 image="$IMAGE_REPO:${SUITE_TAG[$1]}" t0=$SECONDS mirror old
    old=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
    mirror=$(find_mirror "$suite") || { echo "no Debian mirror serves $suite (tried: $(mirror_candidates | tr '\n' ' '))"; return 1; }
    echo "mirror for $suite: $mirror"
    (build_suite "$suite" "$mirror") || { echo "bootstrap/import of $suite failed"; return 1; }
    finish_image "$image" "$old" "${SUITE_CHECK[$suite]}" "${SUITE_EXPECT[$suite]}" "bootstrapped from $mirror" "$t0"
}

# The end of making an image: check it (a failed one is removed, so that a rerun
# retries), remove the one it replaced, and print the summary line.
finish_image() { # image old-id check expect how start-seconds
    local image=$1 old=$2 version
    version=$(check_image "$image" "$3" "$4") || {
        echo "check failed: $version"
        docker rmi "$image" >/dev/null 2>&1 || true
        return 1
    }
    remove_previous "$image" "$old"
    echo "SUMMARY: $image: $5 in $((SECONDS - $6)) s, $version, $(size_of "$image")"
}

# Make one image: pulled, or a layer on its suite. Runs in a subshell with output to
# its log; the last line of the log is the one-line summary.
make_image() { # tag
    local tag=$1 image="$IMAGE_REPO:$1" t0=$SECONDS how old
    old=$(docker image inspect -f '{{.Id}}' "$image" 2>/dev/null || true)
    if pulls "$tag"; then
        pull_image "$tag" || return 1
        how="pulled ${UPSTREAM[$tag]}"
    else
        build_layer "$tag" || { echo "the layer of $tag on ${SUITE_TAG[${SUITE[$tag]}]} failed"; return 1; }
        how="layered on ${SUITE_TAG[${SUITE[$tag]}]}"
    fi
    finish_image "$image" "$old" "${CHECK[$tag]}" "${EXPECT[$tag]}" "$how" "$t0"
}

# The recipe an existing image was made by: its label, "none" for an image without
# one, empty when the image does not exist.
recipe_of() { # image
    docker image inspect -f "{{with index .Config.Labels \"$RECIPE_LABEL\"}}{{.}}{{else}}none{{end}}" \
        "$1" 2>/dev/null || true
}

image_current() { # tag
    [ "$REBUILD" != 1 ] && [ "$(recipe_of "$IMAGE_REPO:$1")" = "${RECIPE[$1]}" ]
}

suite_current() { # suite (its image is never rebuilt for REBUILD: only when its recipe changed)
    [ "$(recipe_of "$IMAGE_REPO:${SUITE_TAG[$1]}")" = "${SUITE_RECIPE[$1]}" ]
}

# Prints the summary of a log, or the failure with the log's last lines; false on failure.
report() { # name logfile
    local last
    last=$(tail -n 1 "$2" 2>/dev/null || true)
    case "$last" in
        SUMMARY:*) log "${last#SUMMARY: }" ;;
        *)
            printf 'setup.sh: error: %s failed; last lines of %s:\n' "$1" "$2" >&2
            tail -n 15 "$2" 2>/dev/null | sed 's/^/    /' >&2
            return 1
            ;;
    esac
}

# A suite's image (when it is not current) and then its images, each in its own
# background subshell (so that `set -e` holds inside it), in parallel unless
# SWE_HARVEST_PARALLEL=0. Its images wait for the suite only.
build_suite_and_images() { # suite tags...
    local suite=$1 tag pids=() pid
    shift
    if ! suite_current "$suite"; then
        make_suite "$suite" >"$WORK_DIR/logs/${SUITE_TAG[$suite]}.log" 2>&1 || true
        report "$IMAGE_REPO:${SUITE_TAG[$suite]}" "$WORK_DIR/logs/${SUITE_TAG[$suite]}.log" || {
            for tag in "$@"; do echo "not made: its suite $suite failed" >"$WORK_DIR/logs/$tag.log"; done
            return 0
        }
    fi
    for tag in "$@"; do
        make_image "$tag" >"$WORK_DIR/logs/$tag.log" 2>&1 &
        pids+=($!)
        [ "$PARALLEL" = 1 ] || wait $! || true
    done
    for pid in "${pids[@]}"; do wait "$pid" || true; done
}

ensure_images() {
    local tag todo=() recipe
    for tag in "${TAGS[@]}"; do
        recipe=$(recipe_of "$IMAGE_REPO:$tag")
        if image_current "$tag"; then
            log "$IMAGE_REPO:$tag: already present ($(docker image inspect -f '{{.Id}}' "$IMAGE_REPO:$tag" | cut -c8-19), recipe $recipe)"
        else
            [ -n "$recipe" ] && [ "$recipe" != "${RECIPE[$tag]}" ] &&
                log "$IMAGE_REPO:$tag: present but made by recipe $recipe, not ${RECIPE[$tag]}: rebuilding"
            todo+=("$tag")
        fi
    done
    [ "${#todo[@]}" -eq 0 ] && return 0

    is_root || die "building ${todo[*]} needs root (mmdebstrap); rerun as root"
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
    HUB=no
    if [ "$PULL" = auto ] && any_upstream "${todo[@]}"; then
        if docker_hub_answers; then HUB=yes; fi
        log "Docker Hub: $([ "$HUB" = yes ] && echo "answers; pulling the upstream images" || echo "does not answer within $PROBE_TIMEOUT s; building from Debian")"
    fi

    # Which images need which suite; an image no suite has needs its upstream image.
    local -A of_suite=()
    local pulled=() suite
    NEEDED_SUITES=()
    for tag in "${todo[@]}"; do
        if pulls "$tag"; then
            pulled+=("$tag")
        elif [ -n "${SUITE[$tag]}" ]; then
            suite=${SUITE[$tag]}
            [ -n "${of_suite[$suite]:-}" ] || NEEDED_SUITES+=("$suite")
            of_suite[$suite]="${of_suite[$suite]:-} $tag"
        else
            echo "no reachable Debian suite ships $IMAGE_REPO:$tag, and ${UPSTREAM[$tag]:-its upstream image} could not be pulled" \
                "(Docker Hub: $HUB, SWE_HARVEST_PULL=$PULL); bring your own image for it and name it in" \
                "validate.base_images (docs/languages/python.md, \"Runtimes\")" >"$WORK_DIR/logs/$tag.log"
        fi
    done
    [ "${#NEEDED_SUITES[@]}" -eq 0 ] || ensure_build_tools

    local pids=() pid
    for tag in "${todo[@]}"; do log "$IMAGE_REPO:$tag: making (log: $WORK_DIR/logs/$tag.log)"; done
    for tag in "${pulled[@]}"; do
        make_image "$tag" >"$WORK_DIR/logs/$tag.log" 2>&1 &
        pids+=($!)
        [ "$PARALLEL" = 1 ] || wait $! || true
    done
    for suite in "${NEEDED_SUITES[@]}"; do
        suite_current "$suite" || log "$IMAGE_REPO:${SUITE_TAG[$suite]}: bootstrapping (log: $WORK_DIR/logs/${SUITE_TAG[$suite]}.log)"
        # shellcheck disable=SC2086 # the tags are words
        build_suite_and_images "$suite" ${of_suite[$suite]} &
        pids+=($!)
        [ "$PARALLEL" = 1 ] || wait $! || true
    done
    # Wait for these pids only: a dockerd started above is a child of this shell too.
    for pid in "${pids[@]}"; do wait "$pid" || true; done
    local failed=0
    for tag in "${todo[@]}"; do
        report "$IMAGE_REPO:$tag" "$WORK_DIR/logs/$tag.log" || failed=1
    done
    [ "$failed" = 0 ] || die "some base images could not be made (see above)"
}

T_START=$SECONDS
read_plan
ensure_docker
ensure_images
log "setup: done in $((SECONDS - T_START)) s"
