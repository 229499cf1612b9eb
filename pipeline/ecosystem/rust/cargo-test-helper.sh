#!/bin/bash
# swe-harvest: runs the Rust test targets of the files given after `--` with the test
# command given before it, one `cargo test` per target (see image.rs for the rules).
command=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
[ "$#" -gt 0 ] && shift
root=$(pwd)
members=()
while IFS= read -r manifest; do
    dir=${manifest#"$root"}; dir=${dir#/}; dir=${dir%Cargo.toml}; dir=${dir%/}
    members+=("${dir:-.}")
done < <(cargo metadata --offline --no-deps --format-version 1 2>/dev/null \
    | grep -o '"manifest_path":"[^"]*"' | sed 's/^"manifest_path":"//; s/"$//')
[ "${#members[@]}" -gt 0 ] || members=(.)
runs=()
declare -A queued
# Per run, the test modules to filter it to (libtest's `NAME::` filters), or `all`.
declare -A only
add() { # member target [module]
    if [ -z "${queued["$1|$2"]:-}" ]; then queued["$1|$2"]=1; runs+=("$1|$2"); fi
    if [ -n "${3:-}" ] && [ "${only["$1|$2"]:-}" != all ]; then
        only["$1|$2"]="${only["$1|$2"]:+${only["$1|$2"]} }$3::"
    else
        only["$1|$2"]=all
    fi
}
every_target() { # member prefix [module]
    local test
    [ -f "$2src/lib.rs" ] && add "$1" --lib "${3:-}"
    for test in "$2"tests/*.rs "$2"tests/*/main.rs; do
        [ -f "$test" ] || continue
        test=${test#"$2"tests/}; test=${test%/main.rs}; test=${test%.rs}
        add "$1" "--test=$test" "${3:-}"
    done
}
# The module a file below tests/ is when it holds tests of its own (coreutils'
# tests/by-util/test_cp.rs, `mod test_cp` of the target `tests`, whose 3,000 tests took
# 6 minutes a run): its file name. A helper module without tests filters nothing.
test_module() { # file
    local name
    [ -f "$1" ] && grep -q '#\[test\]\|#\[tokio::test' "$1" || return 0
    name=${1##*/}; name=${name%.rs}
    [ "$name" != mod ] && [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && echo "$name"
}
for file in "$@"; do
    member=""; prefix=""
    for candidate in "${members[@]}"; do
        if [ "$candidate" = . ]; then path_prefix=""; else path_prefix="$candidate/"; fi
        case "$file" in
            "$path_prefix"*)
                if [ -z "$member" ] || [ "${#path_prefix}" -gt "${#prefix}" ]; then member=$candidate; prefix=$path_prefix; fi ;;
        esac
    done
    if [ -z "$member" ]; then echo "swe-harvest: $file is in no workspace member; not run"; continue; fi
    relative=${file#"$prefix"}
    case "$relative" in
        tests/*)
            inner=${relative#tests/}
            if [[ "$inner" != */* && "$inner" == *.rs ]]; then
                [ -f "$file" ] && add "$member" "--test=${inner%.rs}"
            elif [[ "$inner" == */main.rs && "${inner%/main.rs}" != */* ]]; then
                [ -f "$file" ] && add "$member" "--test=${inner%/main.rs}"
            else
                every_target "$member" "$prefix" "$(test_module "$file")"
            fi ;;
        src/main.rs | src/bin/*) [ -f "$file" ] && add "$member" --bins ;;
        src/*) [ -f "$file" ] && add "$member" --lib ;;
        benches/* | examples/*) echo "swe-harvest: $file is a bench or an example; not run" ;;
        *) every_target "$member" "$prefix" ;;
    esac
done
if [ "${#runs[@]}" -eq 0 ]; then
    echo "swe-harvest: no test target to run"
    exit 0
fi
# What an integration test file's own `#![cfg(...)]` lines ask for, one line per
# attribute (tokio's span lines: `#![cfg(all(\n    feature = "full",\n    tokio_unstable,`):
# every `not(...)` dropped (what it names is not asked for) and every `all(...)` and
# `any(...)` opened, so that what is left are the predicates to make true.
asked_cfg() { # member target
    local dir file
    [[ "$2" == --test=* ]] || return 0
    if [ "$1" = . ]; then dir=tests; else dir="$1/tests"; fi
    for file in "$dir/${2#--test=}.rs" "$dir/${2#--test=}/main.rs"; do
        [ -f "$file" ] || continue
        # A line's `//` comment is no part of the attribute (tokio's io_panic.rs:
        # `#![cfg(not(target_os = "wasi"))] // Wasi does not support panic recovery`).
        awk '/^[ \t]*#!\[cfg\(/ { on = 1; text = ""; depth = 0 }
            on { line = $0; sub(/\/\/.*$/, "", line); text = text " " line
                 depth += gsub(/\(/, "", line); depth -= gsub(/\)/, "", line)
                 if (depth <= 0) { print text; on = 0 } }' "$file" \
            | sed -e ':a' -e 's/\<not *([^()]*)//' -e 'ta' -e 's/\<\(all\|any\) *(\([^()]*\))/ \2 /' -e 'ta'
        return 0
    done
}
# The features of its crate that an asked-for cfg (on stdin) names (tokio's
# `feature = "full"`): without them its tests are compiled out and the target runs none.
features_of_cfg() {
    grep -o 'feature *= *"[^"]*"' | sed 's/.*"\(.*\)"/\1/' | sort -u | tr '\n' ' ' | sed 's/ $//'
}
# The project's own cfg names that an asked-for cfg (on stdin) names (tokio's
# `tokio_unstable`, which tokio's CI passes in RUSTFLAGS): the names left once
# `key = "value"` predicates and the compiler's well-known names are taken out.
names_of_cfg() {
    sed 's/^ *#!\[cfg(//; s/[A-Za-z_][A-Za-z0-9_]* *= *"[^"]*"//g' \
        | grep -o '[A-Za-z_][A-Za-z0-9_]*' \
        | grep -vxE 'test|debug_assertions|unix|windows|miri|doc|doctest|proc_macro|overflow_checks|ub_checks|clippy|rustfmt|target_thread_local|contract_checks' \
        | sort -u | tr '\n' ' ' | sed 's/ $//'
}
# A test that runs on and on holds the phase until its timeout, and the task loses
# every result (tokio-7111: before the fix a `select!` loop never yields). A test is
# running when libtest's last line names it without a result (`test NAME ... `: one
# test at a time, as in a container of one CPU) or says "test NAME has been running for
# over 60 seconds" (tests in parallel); one that has given no result after
# SWE_HARVEST_HANG_SECS (300) is stopped: the test binary (cargo's child) is killed, the
# results already printed stay, cargo says `(signal: 9, SIGKILL: kill)` (the run's
# evidence that tests gave no result), and the next target runs.
stop_hung_tests() { # cargo-pid raw-output
    local limit=${SWE_HARVEST_HANG_SECS:-300} name last
    declare -A since=()
    while kill -0 "$1" 2>/dev/null; do
        sleep 2
        while IFS= read -r name; do
            [ -n "${since["$name"]:-}" ] || since["$name"]=$((SECONDS - 60))
        done < <(sed -n 's/^test \(.*\) has been running for over 60 seconds$/\1/p' "$2")
        last=$(tail -n 1 "$2")
        if [[ $last =~ ^test\ (.+)\ \.\.\.\ $ ]] && [ -z "${since["${BASH_REMATCH[1]}"]:-}" ]; then
            since["${BASH_REMATCH[1]}"]=$SECONDS
        fi
        for name in "${!since[@]}"; do
            # Its result: the name's line, no longer ending at ` ... `. A test that
            # gave one is forgotten: a long target's tests are each seen pending once.
            if grep -F -- "test $name ... " "$2" | grep -qv ' \.\.\. $'; then
                unset -v 'since[$name]'
                continue
            fi
            if [ $((SECONDS - since["$name"])) -ge "$limit" ]; then
                echo "swe-harvest: stopped the test binary: $name gave no result in $limit s"
                printf '%s' "$name" > "$2.stopped"
                pkill -KILL -P "$1"
                break
            fi
        done
    done
}
# One `cargo test` of a target; a stopped test's name is left in "$raw.stopped".
run_cargo() { # raw member target [cargo arguments...]
    # RUSTFLAGS only when there are cfgs: set at all, it replaces the project's own
    # `build.rustflags` and rebuilds every dependency.
    # A test command that sets RUSTFLAGS itself (`env RUSTFLAGS=...`, the cfgs of the
    # project's CI) gets the file's cfgs added to its own word.
    local with_cfgs=() raw=$1 run=("${command[@]}") index flags=$cfg_flags
    shift
    if [ -n "$flags" ]; then
        for index in "${!run[@]}"; do
            if [[ "${run[$index]}" == RUSTFLAGS=* ]]; then run[index]="${run[$index]} $flags"; flags=""; fi
        done
        [ -n "$flags" ] && with_cfgs=(env "RUSTFLAGS=${RUSTFLAGS:+$RUSTFLAGS }$flags")
    fi
    # Cargo writes to a file that is followed until cargo exits, not to a pipe: a
    # process a test leaves behind keeps the output it inherited open, and a pipe
    # would wait for it (sharkdp/bat-2393: the test binary aborted, its `bat` child
    # lived on, and the run hung until the timeout).
    : >"$raw" # emptied before tail starts: a second run's tail must not read the first's
    "${with_cfgs[@]}" "${run[@]}" --manifest-path "$1/Cargo.toml" "$2" "${@:3}" >"$raw" 2>&1 &
    local cargo=$!
    stop_hung_tests "$cargo" "$raw" &
    local watch=$!
    tail -s 0.2 -n +1 -f --pid="$cargo" "$raw" \
        | sed -u -e 's/^\(test .*\) - should panic \.\.\. /\1 ... /' -e 's/^\(test .* \.\.\. ignored\), .*$/\1/' \
        | tee "$output"
    wait "$cargo"
    local code=$?
    kill "$watch" 2>/dev/null
    wait "$watch" 2>/dev/null
    return "$code"
}
# A target's tests; when one was stopped (it never returned), the target again without
# it (libtest's `--skip`), up to twice: the tests after it give their own results
# instead of none (one test at a time, libtest never reached them).
run_target() { # member target [cargo arguments...]
    local raw code skips=() stopped attempt
    raw=$(mktemp)
    for attempt in 1 2 3; do
        rm -f "$raw.stopped"
        run_cargo "$raw" "$@" "${skips[@]}"
        code=$?
        [ -s "$raw.stopped" ] && [ "$attempt" -lt 3 ] || break
        stopped=$(cat "$raw.stopped")
        # Libtest's own options go after `--`, once.
        if [ "${#skips[@]}" -eq 0 ] && [[ " ${*:3} " != *" -- "* ]]; then skips=(--); fi
        skips+=(--skip "$stopped")
        echo "swe-harvest: cargo test of $1 $2 again without $stopped, for the results of its other tests"
    done
    rm -f "$raw" "$raw.stopped"
    return "$code"
}
output=$(mktemp)
status=0
index=0
filtered=()
filtered_ran=no
while [ "$index" -lt "${#runs[@]}" ]; do
    member=${runs[$index]%%|*}; target=${runs[$index]#*|}
    index=$((index + 1))
    cfg=$(asked_cfg "$member" "$target")
    features=$(features_of_cfg <<< "$cfg")
    cfg_flags=""
    # A cfg the test command's own RUSTFLAGS sets already (from CI) is not asked again.
    for name in $(names_of_cfg <<< "$cfg"); do
        [[ " ${command[*]} " == *" --cfg $name "* || " ${command[*]} " == *" --cfg $name" ]] && continue
        cfg_flags="${cfg_flags:+$cfg_flags }--cfg $name"
    done
    asked=""
    [ -n "$cfg_flags" ] && asked=" with RUSTFLAGS '$cfg_flags'"
    if [ -n "$features" ]; then
        echo "swe-harvest: cargo test of $member $target --features '$features'$asked (the file's #![cfg])"
        run_target "$member" "$target" --features "$features"
        code=$?
        # Cargo's own error line only: rustc's warnings quote source lines such as
        # `#[cfg(all(feature = "rt-multi-thread", not(target_os = "wasi")))]`, and tokio's
        # on Rust 1.85 (`unexpected cfg` warnings) were read as a missing feature, so the
        # run with every feature never came.
        if [ "$code" -ne 0 ] && grep -q "^error: .*\(features\? .* not\|does not \(have\|contain\) th\|none of the selected packages contains\)" "$output"; then
            echo "swe-harvest: the member has no such feature; cargo test of $member $target$asked"
            run_target "$member" "$target"
            code=$?
        elif [ "$code" -ne 0 ] && grep -q "^error: could not compile" "$output"; then
            # The file's features are too few for what its tests use (tokio's
            # sync_mpsc.rs asks for `sync`, its `#[tokio::test]` needs `macros` and `rt`).
            echo "swe-harvest: the file's features do not compile its tests; cargo test of $member $target --all-features$asked"
            run_target "$member" "$target" --all-features
            code=$?
        fi
    elif [ "${only["$member|$target"]:-all}" != all ]; then
        read -ra modules <<< "${only["$member|$target"]}"
        echo "swe-harvest: cargo test of $member $target$asked, only the tests of ${modules[*]} (the touched test modules)"
        run_target "$member" "$target" -- "${modules[@]}"
        code=$?
        filtered+=("$member|$target|$cfg_flags")
        grep -q "^running [1-9]" "$output" && filtered_ran=yes
    else
        echo "swe-harvest: cargo test of $member $target$asked"
        run_target "$member" "$target"
        code=$?
    fi
    [ "$code" -eq 0 ] || status=$code
    if [ "$code" -ne 0 ] && grep -q "no test target named" "$output"; then
        # The targets cargo lists instead: a file of tests/ is often a module of one
        # target (ripgrep's tests/regression.rs, in `integration` of tests/tests.rs).
        available=$(awk '/^Available test targets:/ { on = 1; next }
            on && /^[ \t]+[^ \t]/ { print $1; next } on { exit }' "$output")
        if [ -n "$available" ]; then
            for name in $available; do add "$member" "--test=$name"; done
        elif [ "$member" = . ]; then every_target "$member" ""; else every_target "$member" "$member/"; fi
    fi
done
# No filtered run ran a test (a module named otherwise than its file): those targets whole.
if [ "${#filtered[@]}" -gt 0 ] && [ "$filtered_ran" = no ]; then
    for run in "${filtered[@]}"; do
        IFS='|' read -r member target cfg_flags <<< "$run"
        echo "swe-harvest: no test of the touched modules ran; cargo test of $member $target"
        run_target "$member" "$target"
        code=$?
        [ "$code" -eq 0 ] || status=$code
    done
fi
rm -f "$output"
exit $status
