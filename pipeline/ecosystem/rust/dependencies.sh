# swe-harvest: the dependency stage of a Rust environment image (see image.rs).
# Runs in /testbed (the repository at the environment commit) as root, on a Rust
# image whose cargo reads crates.io's sparse index; the only step with the network.
# Arguments: the runtime's Rust version (1.63), the task's date (2024-08-12T20:06:46Z),
# then the crates the task's patches add to Cargo.lock (serial_test@0.5.1 ...) or the
# requirements they add to a manifest (opentelemetry@^0.17).
# Leaves in /swe-harvest-deps: vendor/ (the sources), Cargo.lock, config.toml.
# With SWE_HARVEST_SOURCE_ONLY=1 it only defines its functions (for its tests).
set -euo pipefail
toolchain="${1:-}"
cutoff="${2:-}"
added=("${@:3}")
out=/swe-harvest-deps
# Where `precise` keeps cargo's words: a file of this run's own, so that two runs on
# one machine (the unit tests, in parallel) never read each other's.
update_log="${TMPDIR:-/tmp}/swe-harvest-update.$$.txt"

minor_of() { local version=${1#1.}; echo "${version%%.*}"; }
wanted=$(minor_of "$toolchain")

# The releases of a crate, from the sparse index's cache that resolution filled:
# "version rust_version pubtime yanked" ("none" for a field the entry lacks).
releases() {
    local lower path cache
    cache=$(ls -d "$CARGO_HOME"/registry/index/*/.cache 2>/dev/null | head -n 1)
    lower=$(printf '%s' "$1" | tr 'A-Z' 'a-z')
    case ${#lower} in
        1) path=1/$lower ;;
        2) path=2/$lower ;;
        3) path=3/${lower:0:1}/$lower ;;
        *) path=${lower:0:2}/${lower:2:2}/$lower ;;
    esac
    if [ -z "$cache" ] || [ ! -f "$cache/$path" ]; then return 0; fi
    tr '\0' '\n' < "$cache/$path" | awk '
        function field(name,    value) {
            if (!match($0, "\"" name "\": *\"[^\"]*\"")) return "none"
            value = substr($0, RSTART, RLENGTH)
            sub("^\"" name "\": *\"", "", value)
            sub("\"$", "", value)
            return value
        }
        /^\{/ { print field("vers"), field("rust_version"), field("pubtime"), ($0 ~ /"yanked": *true/) ? "yes" : "no" }'
}

# One release of a crate: "rust_version pubtime yanked", nothing when the index has none.
release_of() { # name version
    releases "$1" | awk -v wanted="$2" '$1 == wanted { print $2, $3, $4; exit }'
}

# Whether a release fits: its rust-version is the runtime's or older, and it was
# published by the task's date (an entry without a publication time counts as old).
fits() { # rust_version pubtime
    { [ "$1" = none ] || [ "$(minor_of "$1")" -le "$wanted" ] 2>/dev/null; } \
        && { [ "$2" = none ] || [[ ! "$2" > "$cutoff" ]]; }
}

# Whether the locked release of a crate fits (remembered: releases do not change).
declare -A locked_fits=()
locked_release_fits() { # name version
    local rust published
    if [ -z "${locked_fits["$1@$2"]:-}" ]; then
        read -r rust published _ < <(release_of "$1" "$2"; echo "none none")
        if fits "$rust" "$published"; then locked_fits["$1@$2"]=yes; else locked_fits["$1@$2"]="no (Rust $rust, published $published)"; fi
    fi
    [ "${locked_fits["$1@$2"]}" = yes ]
}

# Whether a crate has a release of that version that is not yanked and fits.
release_fits() { # name version
    local rust published yanked
    read -r rust published yanked < <(release_of "$1" "$2"; echo "none none missing")
    [ "$yanked" = no ] && fits "$rust" "$published"
}

# Whether version $1 is older than version $2.
older() { # version version
    [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | sed -n 1p)" = "$1" ]
}

series() { local major=${1%%.*} rest=${1#*.}; if [ "$major" = 0 ]; then echo "0.${rest%%.*}"; else echo "$major"; fi; }

# The newest release of a crate's semver series (same major; same minor below 1.0)
# that fits; a yanked one only when every release that fits is yanked, as a release
# can be long after the date it served: futures-util yanked each 0.3 release before
# 0.3.31 in 2024, so a 2022 task had none to go back to and kept 0.3.34, which needs
# Rust 1.71 (tracing of 2022 on its dated rung, Rust 1.63).
newest_fitting() { # name version
    local release rust published yanked fitting
    fitting=$(releases "$1" | while read -r release rust published yanked; do
        case "${release%%+*}" in *-*) continue ;; esac # a pre-release (build metadata is fine)
        [ "$(series "$release")" = "$(series "$2")" ] || continue
        if fits "$rust" "$published"; then echo "$yanked $release"; fi
    done)
    { grep '^no ' <<< "$fitting" || grep '^yes ' <<< "$fitting" || true; } | cut -d ' ' -f 2 | sort -V | tail -n 1
}

# What the build log says of a move to a release yanked since; nothing for any other.
yanked_since() { # name version
    [ "$(release_of "$1" "$2" | cut -d ' ' -f 3)" = yes ] && echo "yanked since: no release of the series that fits is not"
}

# The crates.io packages of Cargo.lock: "name version".
locked() {
    awk '/^\[\[package\]\]/ { name = ""; version = "" }
         /^name = / { name = $3; gsub(/"/, "", name) }
         /^version = / { version = $3; gsub(/"/, "", version) }
         /^source = "registry\+/ { print name, version }' Cargo.lock
}

# Whether a crate is locked at a version. Not `locked | grep -q`: under pipefail that
# fails whenever grep stops reading before awk stops writing, which skipped crates of a
# long lockfile at random (108 of axum's 450 were left newer than the date; 25 since).
is_locked() { # name version
    grep -qxF "$1 $2" <<< "$(locked)"
}

# Whether every crate named (`name@version`) is still locked at that version.
all_locked() { # specs...
    local spec
    for spec in "$@"; do
        is_locked "${spec%@*}" "${spec#*@}" || return 1
    done
}

# `cargo update --precise`; its output is kept for the chain of requirements.
precise() { # spec version
    cargo update --quiet -p "$1" --precise "$2" > "$update_log" 2>&1
}

# The crates the workspace builds on this platform ("name version" a line), as
# `cargo tree` says (it downloads what it reads; `--offline` once vendored); fails
# when cargo cannot tell.
built_here() { # cargo tree's own options
    local host
    host=$(rustc -vV | sed -n 's/^host: //p')
    cargo tree --quiet "$@" --workspace --all-features --target "$host" -e normal,build,dev --prefix none --format '{p}' \
        | awk '{ sub(/^v/, "", $2); print $1 " " $2 }' | sort -u
}

# Time travel: every locked crate that does not fit (published after the task's date,
# or needing a newer rustc than the runtime's) is taken down to the newest release of
# its series that fits. When a crate up the chain requires the newer release (trybuild
# requires a newer serde_json; serde pins serde_derive exactly), that crate is taken
# down instead (never up): to the newest release of its own series that fits, else to
# the same version number when that release fits (crates released in lockstep). Passes
# over the lockfile repeat while they move something (a crate blocked in one pass may
# be free in the next; a move down can float the crate's own dependencies up). A move
# that failed is tried again only once a crate its failure named as requiring it has
# moved: each `cargo update` resolves the whole graph, a second or more. For the newest
# toolchain, crates the workspace never builds here (windows-sys, wasm-bindgen) are left
# as resolved: stub_unused empties them, and not moving them took axum's 218 resolutions
# to 185. An older cargo still reads their manifests, and reads a new one otherwise
# (tracing of 2022 on Rust 1.63: wasm-bindgen-test 0.3.36 asked js-sys 0.3.107 for a
# feature that cargo 1.63 did not see in it): for it every crate travels.
travel() {
    local pass name version target dependent dependent_target requirers changed moved moves=0 built since
    declare -A no_release=() blocked=() elsewhere=()
    if [ "$wanted" -lt 85 ]; then
        echo "swe-harvest: every locked crate travels (cargo of Rust $toolchain reads the manifests of those never built too)"
    elif built=$(built_here) && [ -n "$built" ]; then
        while read -r name version; do
            grep -qxF "$name $version" <<< "$built" || elsewhere["$name@$version"]=1
        done < <(locked)
        echo "swe-harvest: ${#elsewhere[@]} locked crates are never built on this platform: left as resolved"
    else
        echo "swe-harvest: cargo tree failed; every locked crate travels"
    fi
    for pass in $(seq 1 20); do
        changed=no
        while read -r name version; do
            [ -z "${no_release["$name@$version"]:-}" ] || continue
            [ -z "${elsewhere["$name@$version"]:-}" ] || continue
            is_locked "$name" "$version" || continue
            if locked_release_fits "$name" "$version"; then continue; fi
            if [ -n "${blocked["$name@$version"]:-}" ] && all_locked ${blocked["$name@$version"]}; then continue; fi
            target=$(newest_fitting "$name" "$version")
            if [ -z "$target" ] || [ "$target" = "$version" ]; then
                no_release["$name@$version"]=1
                continue
            fi
            if precise "$name@$version" "$target"; then
                since=$(yanked_since "$name" "$target" || true)
                echo "swe-harvest: $name $version -> $target${since:+ ($since)}"
                changed=yes
                moves=$((moves + 1))
                continue
            fi
            requirers=$(sed -n 's/.*package `\([^ `]*\) v\([^ `]*\)`.*/\1@\2/p' "$update_log")
            moved=no
            for dependent in $requirers; do
                dependent_target=$(newest_fitting "${dependent%@*}" "${dependent#*@}")
                if [ -z "$dependent_target" ] || [ "$dependent_target" = "${dependent#*@}" ]; then
                    release_fits "${dependent%@*}" "$target" || continue
                    dependent_target=$target
                fi
                # A requirer goes down, never up: lockstep named hyper 1.8.0 for httparse
                # and 1.10.0 for smallvec, and hyper went back and forth pass after pass.
                older "$dependent_target" "${dependent#*@}" || continue
                if precise "$dependent" "$dependent_target"; then
                    since=$(yanked_since "${dependent%@*}" "$dependent_target" || true)
                    echo "swe-harvest: ${dependent%@*} ${dependent#*@} -> $dependent_target (for $name $version)${since:+, $since}"
                    changed=yes
                    moved=yes
                    moves=$((moves + 1))
                    break
                fi
            done
            [ "$moved" = yes ] || blocked["$name@$version"]=$requirers
        done < <(locked)
        [ "$changed" = yes ] || break
    done
    rm -f "$update_log"
    echo "swe-harvest: $moves crates moved back to releases of $cutoff or earlier that fit Rust $toolchain"
    while read -r name version; do
        [ -n "${elsewhere["$name@$version"]:-}" ] || locked_release_fits "$name" "$version" \
            || echo "swe-harvest: kept $name $version (${locked_fits["$name@$version"]#no (}: nothing older in its series fits or resolves"
    done < <(locked)
}

# Releases that a newer compiler no longer builds, as rustc itself names them ("this is
# an inference error on crate `time` caused by an API change in Rust 1.80.0; update
# `time` to version `>=0.3.35` by calling `cargo update`"): "name series first-fixed
# since-minor". A lockfile resolved as of a date before the fix holds a broken release
# (axum and tracing tasks of 2022-2023 on Rust 1.85: their first rung failed on `time`).
NEWER_RUSTC_BREAKS=("time 0.3 0.3.35 80")

# Moves each such release up to the first that builds, past the task's date: on this
# compiler, no release of that date compiles.
past_newer_rustc_breaks() {
    local entry name series_wanted first since locked_name version
    for entry in "${NEWER_RUSTC_BREAKS[@]}"; do
        read -r name series_wanted first since <<< "$entry"
        [ "$wanted" -ge "$since" ] || continue
        while read -r locked_name version; do
            [ "$locked_name" = "$name" ] && [ "$(series "$version")" = "$series_wanted" ] || continue
            older "$version" "$first" || continue
            if precise "$name@$version" "$first"; then
                echo "swe-harvest: $name $version -> $first (Rust 1.$since and later do not build $name before $first; past $cutoff)"
            else
                echo "swe-harvest: kept $name $version, which Rust 1.$since and later do not build: $(tail -n 1 "$update_log")"
            fi
        done < <(locked)
    done
    rm -f "$update_log"
}

# Crates the workspace never builds on this platform (windows*, wasm*, ...) keep
# their manifest (resolution reads it) and their files' names, emptied.
stub_unused() {
    local host name version checksum dir stubbed=0
    host=$(rustc -vV | sed -n 's/^host: //p')
    if built_here --offline > /tmp/swe-harvest-used.txt; then
        for dir in "$out"/vendor/*/; do
            [ -d "$dir" ] || continue # no crate at all: the pattern stays as written
            name=$(sed -n 's/^name = "\(.*\)"$/\1/p' "${dir}Cargo.toml" | head -n 1)
            version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "${dir}Cargo.toml" | head -n 1)
            grep -qxF "$name $version" /tmp/swe-harvest-used.txt && continue
            checksum=$(sed -n 's/.*"package":"\([0-9a-f]*\)".*/\1/p' "${dir}.cargo-checksum.json")
            find "$dir" -type f ! -name Cargo.toml ! -name '*.rs' -delete
            find "$dir" -type f -name '*.rs' -exec truncate -s 0 {} +
            printf '{"files":{},"package":"%s"}' "$checksum" > "${dir}.cargo-checksum.json"
            # An old cargo reads every manifest of the directory: no edition it does not know.
            if [ "$wanted" -lt 85 ]; then sed -i 's/^edition = "2024"$/edition = "2021"/' "${dir}Cargo.toml"; fi
            stubbed=$((stubbed + 1))
        done
        echo "swe-harvest: $stubbed vendored crates are never built on $host: kept as empty files"
        rm -f /tmp/swe-harvest-used.txt
    else
        echo "swe-harvest: cargo tree failed; every vendored crate is kept whole"
    fi
}

# The crates the task's patches add to Cargo.lock (a gold patch's new dependency:
# `name@version`), vendored beside the environment commit's so that the runs after
# the patches resolve offline. A scratch package asks for each at its exact version
# (all at once, else one by one: two releases of one semver series cannot share a
# resolution); of what it vendors, only those crates are kept (their dependencies
# that the patch adds are in the list too).
vendor_added() {
    [ "$#" -gt 0 ] || return 0
    local scratch=/tmp/swe-harvest-added spec kept=0
    scratch_vendors() { # specs...: whether a scratch package of them vendors
        local i=0
        rm -rf "$scratch" && mkdir -p "$scratch/src" && : > "$scratch/src/lib.rs"
        {
            printf '[package]\nname = "swe-harvest-added"\nversion = "0.0.0"\nedition = "2018"\n\n[dependencies]\n'
            for spec in "$@"; do
                printf 'added%d = { package = "%s", version = "=%s" }\n' "$i" "${spec%@*}" "${spec#*@}"
                i=$((i + 1))
            done
        } > "$scratch/Cargo.toml"
        (cd "$scratch" && cargo vendor --quiet --versioned-dirs vendor > /dev/null)
    }
    keep() { # specs...
        local dir
        for spec in "$@"; do
            dir="$scratch/vendor/${spec%@*}-${spec#*@}"
            if [ -d "$dir" ] && [ ! -e "$out/vendor/${spec%@*}-${spec#*@}" ]; then
                cp -r "$dir" "$out/vendor/"
                kept=$((kept + 1))
            fi
        done
    }
    if scratch_vendors "$@" 2>/dev/null; then
        keep "$@"
    else
        for spec in "$@"; do
            if scratch_vendors "$spec"; then keep "$spec"; else echo "swe-harvest: could not vendor $spec, which the task's patches add"; fi
        done
    fi
    rm -rf "$scratch"
    echo "swe-harvest: $kept crates that the task's patches add vendored ($*)"
}

# The crates whose requirements the task's patches add to a manifest and not to a
# lockfile (`name@^0.17`: a project without a Cargo.lock, tracing-1853's fix moving
# `opentelemetry` to 0.17), vendored so that the runs after the patches resolve
# offline. A scratch package asks for each requirement, starting from the
# environment's resolution (the crates both need keep its releases); the rest travel to
# the task's date and the runtime's rustc as the environment's did, and every crate it
# vendors that the environment lacks is kept.
vendor_required() {
    [ "$#" -gt 0 ] || return 0
    local scratch=/tmp/swe-harvest-required spec dir i=0 kept=0
    rm -rf "$scratch" && mkdir -p "$scratch/src" && : > "$scratch/src/lib.rs"
    {
        printf '[package]\nname = "swe-harvest-required"\nversion = "0.0.0"\nedition = "2018"\nrust-version = "%s"\n\n[dependencies]\n' "$toolchain"
        for spec in "$@"; do
            printf 'required%d = { package = "%s", version = "%s" }\n' "$i" "${spec%@*}" "${spec#*@}"
            i=$((i + 1))
        done
    } > "$scratch/Cargo.toml"
    cp Cargo.lock "$scratch/Cargo.lock"
    if ! (cd "$scratch" && cargo fetch --quiet && travel && cargo vendor --quiet --versioned-dirs vendor > /dev/null); then
        echo "swe-harvest: could not resolve the requirements that the task's patches add ($*); the runs after them may not build offline"
        rm -rf "$scratch"
        return 0
    fi
    for dir in "$scratch"/vendor/*/; do
        [ -d "$dir" ] || continue
        dir=${dir%/}
        if [ ! -e "$out/vendor/${dir##*/}" ]; then
            cp -r "$dir" "$out/vendor/"
            kept=$((kept + 1))
        fi
    done
    rm -rf "$scratch"
    echo "swe-harvest: $kept crates for the requirements that the task's patches add vendored ($*)"
}

# Every package is resolved for the runtime's rustc (in this stage only): one that
# declares no rust-version is given the runtime's, and one that declares an older one
# is raised to it. cargo's rust-version-aware resolution goes by the lowest of the
# workspace, and where no release of a crate declares one that low, "fallback" takes
# the newest: tracing of 2022 declares 1.42, older than every futures 0.3 release that
# declares one, so its lockfile held futures-util 0.3.34 (Rust 1.71), which the
# runtime (1.63) cannot build.
resolve_for_the_runtime() {
    local manifest declared
    while IFS= read -r -d '' manifest; do
        if grep -q '^\[package\]' "$manifest" && ! grep -q '^rust-version' "$manifest"; then
            sed -i "0,/^\[package\]/s//[package]\nrust-version = \"$toolchain\"/" "$manifest"
        fi
        while read -r declared; do
            [ "$(minor_of "$declared")" -lt "$wanted" ] || continue
            sed -i "s/^rust-version *= *\"${declared//./\\.}\"/rust-version = \"$toolchain\"/" "$manifest"
        done < <(sed -n 's/^rust-version *= *"\([0-9][0-9.]*\)".*/\1/p' "$manifest" | sort -u)
    done < <(find . -name Cargo.toml -not -path './target/*' -print0)
}

main() {
    mkdir -p "$out"
    cd /testbed
    if [ -f Cargo.lock ]; then
        echo "swe-harvest: the repository's Cargo.lock"
    else
        resolve_for_the_runtime
        echo "swe-harvest: no Cargo.lock; resolving as of $cutoff for Rust $toolchain"
        cargo generate-lockfile --quiet
        travel
        past_newer_rustc_breaks
    fi
    cargo vendor --quiet --versioned-dirs "$out/vendor" > /dev/null
    mkdir -p "$out/vendor" # a project without dependencies

    stub_unused
    # A lockfile's release (`name@1.5.0`), else a manifest's requirement (`name@^0.17`).
    local spec exact=() required=()
    for spec in "${added[@]}"; do
        case "${spec#*@}" in
            [\^~=\<\>*]*) required+=("$spec") ;;
            *) exact+=("$spec") ;;
        esac
    done
    vendor_added "${exact[@]}"
    vendor_required "${required[@]}"

    if [ "$wanted" -lt 78 ]; then
        # Lockfile format 4 needs cargo 1.78 (for crates.io dependencies 3 says the same).
        sed -i 's/^version = 4$/version = 3/' Cargo.lock
    fi
    cp Cargo.lock "$out/Cargo.lock"
    printf '[source.crates-io]\nreplace-with = "vendored-sources"\n\n[source.vendored-sources]\ndirectory = "/home/harvest/vendor"\n' \
        > "$out/config.toml"
    echo "swe-harvest: $(ls "$out/vendor" | wc -l) crates vendored, $(du -sh "$out/vendor" | cut -f1)"
    rm -rf "$CARGO_HOME"
}

[ -n "${SWE_HARVEST_SOURCE_ONLY:-}" ] || main
