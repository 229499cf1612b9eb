#!/bin/bash
# swe-harvest (pipeline/ecosystem/c/image.rs): runs the tests of a C or C++ project.
# Arguments: the report's path, the test command's words, `--`, the touched test files.
#   make check | make test | make TARGET   automake's test harness when the Makefile
#       has one (`check-am`): the TESTS entries that the touched files select (an entry
#       that is a touched file, or the program of a touched source file, or a script
#       that names a touched file), else all of them (`make -k check`, recursive);
#       the report is every `.trs` file the run wrote, each after a line
#       `:swe-harvest-test: ID` (ID: the test's path relative to its Makefile's folder,
#       as automake prints it). A Makefile without automake's harness: the targets of
#       the tree's Makefiles that run a touched file, the program of a touched source
#       or a harness in a folder above a touched file, else the target given; each
#       gives the `RESULT: ID` lines its own harness prints, else its exit code as one
#       result (`make-TARGET`).
#       A Tcl harness (`./runtest` running `tests/test_helper.tcl`, Redis's) runs the
#       touched units alone instead (`--single unit/x`), its test names the ids.
#   make -C DIR [VAR=VALUE...] TARGET   a harness over a build in a folder (harness.rs,
#       run_harness below): the touched tests of the harness the rule runs, ids as it
#       prints them.
#   ctest ARGS   the build tree is rebuilt (`cmake --build`: only the targets whose
#       sources hold a touched file, by CMake's file API, when there are any), then the
#       tests that run an executable compiled from a touched file, else the tests whose
#       command names a touched file (its path, name or stem), else all (after the
#       whole tree is built); the report is CTest's JUnit XML. When the rebuild
#       failed, an executable of those targets older than its touched sources is
#       removed: its tests then have no result, instead of passing on the old code.
#       A fixture whose setup test failed (a download, offline) is left out on a
#       second run of the same tests. A doctest program among the tests that ran is
#       run once more with `--reporters=xml`: its cases follow CTest's XML in the
#       report (doctest_cases).
# Results are also printed as `PASS: ID` lines (automake's form, which SWE-bench's
# `parse_log_jq` reads), after the line `swe-harvest results:`.
report="$1"; shift
command=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do command+=("$1"); shift; done
[ "$#" -gt 0 ] && shift
files=("$@")
jobs=$(nproc 2>/dev/null || echo 2)
: >"$report"
# Address space of every process capped at 3/4 of the container's memory: a test that
# allocates without end (jq-2624's `gsub("";"a";"g")` before its fix) then fails on
# its own instead of the kernel killing the container (a run lost as out of memory).
limit=$(cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null)
case "$limit" in
    '' | max | *[!0-9]*) ;;
    *) [ "$limit" -lt $((1 << 50)) ] && ulimit -v $((limit / 1024 * 3 / 4)) ;;
esac

# Runs COMMAND... (a program or a function of this script) with its output shown and
# written to FILE; returns its exit code. The output goes to a file that is followed
# until the command exits, not through a pipe: a process a test leaves behind (a
# server it started) keeps the output it inherited open, and a pipe would wait for it
# until the run's timeout (sharkdp/bat-2393 did so in Rust's helper).
run_logged() { # FILE COMMAND...
    local file=$1 raw pid code
    shift
    raw=$(mktemp)
    "$@" </dev/null >"$raw" 2>&1 &
    pid=$!
    tail -s 0.2 -n +1 -f --pid="$pid" "$raw" | tee "$file"
    wait "$pid"
    code=$?
    rm -f "$raw"
    return "$code"
}

# Whether test $1 (a path relative to the current folder) is selected by the touched files.
selected_by_files() {
    local test="$1" file stem
    for file in "${files[@]}"; do
        [ "$test" = "$file" ] && return 0
        stem="${file%.*}"
        [ "$test" = "$stem" ] || [ "${test##*/}" = "${stem##*/}" ] && [ "$stem" != "$file" ] && return 0
        if [ -f "$test" ] && grep -qIwF -- "${file##*/}" "$test" 2>/dev/null; then return 0; fi
    done
    return 1
}

# The id of a .trs file: the test's path relative to the nearest folder with a
# Makefile. A test with one of TEST_EXTENSIONS (`tests/a.sh`) writes `tests/a.trs`:
# the id is the test's own name, as automake prints it.
trs_id() {
    local path="${1#./}" dir rest candidate
    path="${path%.trs}"
    if [ ! -e "$path" ]; then
        for candidate in "$path".*; do
            case "$candidate" in *.log | *.trs | *.o) continue ;; esac
            [ -f "$candidate" ] && { path="$candidate"; break; }
        done
    fi
    dir=$(dirname "$path"); rest=$(basename "$path")
    while [ "$dir" != . ] && [ ! -f "$dir/Makefile" ]; do
        rest="$(basename "$dir")/$rest"; dir=$(dirname "$dir")
    done
    printf '%s\n' "$rest"
}

# An awk function: the result line (`PASS: Suite.Case`) of a GoogleTest case that a
# line of a program's output reports (`[       OK ] Suite.Case (3 ms)`; also inside
# CTest's JUnit `<system-out>`), else "". Only the lines with a time: the summary's
# list of failures is no second result. A program's cases are the task's ids in place
# of the program's own (results.rs reads them as this prints them).
GOOGLETEST_CASE='function googletest_case(line,   word, name) {
    sub(/^[ \t]*<system-out>/, "", line); sub(/<\/system-out>.*$/, "", line)
    if (line !~ /^\[ *(OK|FAILED|SKIPPED) *\] [A-Za-z_][A-Za-z0-9_\/.-]*\.[A-Za-z0-9_\/.-]+.* \([0-9]+ ms\)$/) return ""
    word = line; sub(/^\[ */, "", word); sub(/ .*$/, "", word)
    name = line; sub(/^\[ *[A-Z]+ *\] /, "", name); sub(/ \([0-9]+ ms\)$/, "", name); sub(/, where .*$/, "", name)
    return (word == "OK" ? "PASS" : word == "FAILED" ? "FAIL" : "SKIP") ": " name
}'

# An awk program: the results of a doctest program's XML report (`--reporters=xml`),
# `RESULT: ID` lines, the worst of repeats, in the order first seen. The ids are
# those of SWE-bench's doctest parser (`Test case > subcase`), at the finest grain:
# each innermost subcase under its test case and the subcases around it
# (`case > outer > inner`), a test case without subcases by its own name, a skipped
# one (`skipped="true"`) a skip. doctest runs a test case once per innermost
# subcase, and its report does not say which run a failure outside every subcase
# came from: a failure (a false `Expression`, an `Exception` outside one, an `ERROR`
# or `FATAL ERROR` message) fails the subcases under where it was reported. A report
# cut off (the program killed) fails what was running.
# The line of the report after which the helper lists a doctest program's cases
# (results.rs's DOCTEST_CASES_MARKER): CTest's XML never holds it, since it escapes
# every `<` of a test's output.
DOCTEST_REPORT_MARKER='<!-- swe-harvest doctest cases -->'
DOCTEST_CASES='function xml_attribute(line, key,   value) {
    if (!match(line, " " key "=\"[^\"]*\"")) return ""
    value = substr(line, RSTART + length(key) + 3, RLENGTH - length(key) - 4)
    gsub(/&lt;/, "<", value); gsub(/&gt;/, ">", value); gsub(/&quot;/, "\"", value); gsub(/&apos;/, "\047", value)
    gsub(/&amp;/, "\\&", value)
    return value
}
function record(id, r) {
    if (!(id in result)) { order[++count] = id; result[id] = r }
    else if (r == "FAIL" || result[id] == "SKIP") result[id] = r
}
function close_case(   i, j, id, leaf, up) {
    if (case_name == "") return
    if (paths == 0) record(case_name, (case_name in failed) ? "FAIL" : "PASS")
    for (i = 1; i <= paths; i++) {
        id = path[i]; leaf = 1
        for (j = 1; j <= paths; j++) if (index(path[j], id " > ") == 1) { leaf = 0; break }
        if (!leaf) continue
        for (up = id; !(up in failed) && up != case_name; up = parent[up]) {}
        record(id, (up in failed) ? "FAIL" : "PASS")
    }
    for (i = 1; i <= paths; i++) { delete parent[path[i]]; delete failed[path[i]] }
    delete failed[case_name]
    case_name = ""; paths = 0; depth = 0
}
/^[ \t]*<TestCase / {
    close_case()
    if ($0 ~ / skipped="true"/) { record(xml_attribute($0, "name"), "SKIP"); next }
    case_name = xml_attribute($0, "name"); depth = 0; at[0] = case_name; in_expression = 0; next
}
case_name == "" { next }
/^[ \t]*<SubCase / {
    depth++; at[depth] = at[depth - 1] " > " xml_attribute($0, "name")
    if (!(at[depth] in parent)) { parent[at[depth]] = at[depth - 1]; path[++paths] = at[depth] }
    next
}
/^[ \t]*<\/SubCase>/ { if (depth > 0) depth--; next }
/^[ \t]*<\/TestCase>/ { close_case(); next }
/^[ \t]*<Expression / { in_expression = 1; if ($0 ~ / success="false"/) failed[at[depth]] = 1; next }
/^[ \t]*<\/Expression>/ { in_expression = 0; next }
/^[ \t]*<Exception[ >]/ { if (!in_expression) failed[at[depth]] = 1; next }
/^[ \t]*<Message / { if ($0 ~ / type="(FATAL )?ERROR"/) failed[at[depth]] = 1; next }
END {
    if (case_name != "") { failed[at[depth]] = 1; close_case() }
    for (i = 1; i <= count; i++) print result[order[i]] ": " order[i]
}'

# Each rule of the tree's plain Makefiles: `DIR<TAB>TARGET<TAB>RECIPE` (the rule's first
# target that is no special target or pattern; its recipe lines joined). Variable
# assignments, target-specific ones too (`test-zstd: ZSTD = ...`), are no rules.
make_rules() {
    local makefile dir
    find . -path ./.git -prune -o -type f \( -name Makefile -o -name GNUmakefile -o -name makefile \) -print 2>/dev/null |
        sort | while IFS= read -r makefile; do
        dir=$(dirname "$makefile"); dir="${dir#./}"
        awk -v dir="$dir" '
            function flush() { if (target != "" && recipe != "") print dir "\t" target "\t" recipe; target = ""; recipe = "" }
            /^\t/ { if (target != "") recipe = recipe " " substr($0, 2); next }
            { flush() }
            /^[A-Za-z0-9_.\/-][^:=#]*:([^=:]|$)/ {
                rest = substr($0, index($0, ":") + 1)
                if (rest ~ /=/) next
                n = split(substr($0, 1, index($0, ":") - 1), names, /[ \t]+/)
                for (i = 1; i <= n; i++) if (names[i] != "" && names[i] !~ /^\./ && names[i] !~ /[%$]/) { target = names[i]; break }
                if (index(rest, ";") > 0) recipe = substr(rest, index(rest, ";") + 1)
            }
            END { flush() }' "$makefile"
    done
}

# The targets of plain Makefiles that run a touched file: `DIR<TAB>TARGET`, for each rule
# whose recipe runs (a word `./X`, or the script of `sh`, `bash`, `python3`, `perl`...)
# the touched file itself (zstd's `./playTests.sh`), the program built from a touched
# source (`./fuzzer` from `tests/fuzzer.c`), or a harness in a folder above a touched
# file and below the Makefile's (`./cli-tests/run.py` for
# `tests/cli-tests/decompression/pass-through.sh`; a script, not a program: a test
# program of `tests/` is not the harness of every file under it). Never a target that
# cleans, installs or makes a distribution.
make_targets_of_touched_files() {
    local dir target recipe words word previous path file script seen=" "
    while IFS=$'\t' read -r dir target recipe; do
        case "$target" in clean* | distclean* | mostlyclean* | install* | uninstall* | dist* | all) continue ;; esac
        # Under a tool that no image has (zstd's `valgrindTest` runs `./fuzzer` too).
        case "${target,,}" in *valgrind* | *memcheck*) continue ;; esac
        read -ra words <<<"$recipe"
        previous=""
        for word in "${words[@]}"; do
            word="${word//[\"\']/}"; word="${word%;}"
            case "$word" in -*=*) word="${word#*=}" ;; esac
            path="" script=0
            case "$word" in
                ./*) path="${word#./}" ;;
                *=* | *'$'* | '') ;;
                *) case "$previous" in sh | bash | python | python3 | perl | ruby) path="$word" script=1 ;; esac ;;
            esac
            previous="${word##*/}"
            case "$path" in '' | *..* | *'$'*) continue ;; esac
            [ "$dir" = . ] || path="$dir/$path"
            for file in "${files[@]}"; do
                if [ "$path" = "$file" ] || { [ "${file%.*}" != "$file" ] && [ "$path" = "${file%.*}" ]; } ||
                    { [ "${path%/*}" != "$path" ] && [ "${path%/*}" != "$dir" ] && [ -f "$path" ] &&
                        [ "${file#"${path%/*}"/}" != "$file" ] &&
                        { [ "$script" = 1 ] || [ "$(head -c 2 "$path")" = '#!' ]; }; }; then
                    case "$seen" in *" $dir:$target "*) ;; *)
                        seen="$seen$dir:$target "
                        printf '%s\t%s\n' "$dir" "$target" ;;
                    esac
                    continue 3
                fi
            done
        done
    done < <(make_rules)
}

# Runs make in folder $1 with the other arguments (a command for run_logged).
make_in() { (cd "$1" && shift && make "$@"); }

# Runs the plain Makefile targets `DIR<TAB>TARGET` on stdin, one after the other; prints
# their results after the line `swe-harvest results:`: the `RESULT: ID` lines a target's
# own harness prints (zstd's `cli-tests/run.py`: `PASS: basic/help.sh`), the worst of
# repeats, else the target's exit code as `RESULT: make-TARGET` (`DIR/make-TARGET` below
# the root); with `--exit-code-too` the exit code as well (a whole `make check` runs more
# than a harness). Returns non-zero when one failed.
run_make_targets() {
    local dir target code=0 status output=/tmp/swe-harvest-make-target.log results=/tmp/swe-harvest-make-results id
    local harness exit_code_too=0
    [ "${1:-}" = --exit-code-too ] && exit_code_too=1
    : >"$results"
    while IFS=$'\t' read -r dir target; do
        echo "swe-harvest: make -C $dir $target"
        run_logged "$output" make_in "$dir" -j"$jobs" -k "$target"
        status=$?
        [ "$status" -eq 0 ] || code=$status
        harness=$(grep -E '^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): [^[:space:]]+$' "$output")
        [ -n "$harness" ] && printf '%s\n' "$harness" >>"$results"
        if [ "$exit_code_too" = 1 ] || [ -z "$harness" ]; then
            id="make-$target"; [ "$dir" = . ] || id="$dir/$id"
            if [ "$status" -eq 0 ]; then echo "PASS: $id"; else echo "FAIL: $id"; fi >>"$results"
        fi
    done
    echo "swe-harvest results:"
    awk '{ r = $1; sub(/:$/, "", r); id = substr($0, length($1) + 2)
           if (!(id in worst) || r != "PASS" && r != "SKIP" && r != "XFAIL") worst[id] = r }
         END { for (id in worst) print worst[id] ": " id }' "$results" | sort -k2
    return "$code"
}

# The units of a Tcl test harness that the touched files are (Redis's and Valkey's:
# `./runtest` runs `tests/test_helper.tcl`, whose `--single unit/type/string` runs
# `tests/unit/type/string.tcl`), one per line; none without that harness. The
# harness's own helpers and the units other runners run (`tests/unit/moduleapi/`:
# `./runtest-moduleapi`) are no units of it.
tcl_units() {
    local file
    [ -f runtest ] && [ -f tests/test_helper.tcl ] && grep -q 'test_helper\.tcl' runtest || return 0
    for file in "${files[@]}"; do
        case "$file" in
            tests/unit/moduleapi/*) ;;
            tests/unit/*.tcl | tests/integration/*.tcl) [ -f "$file" ] && printf '%s\n' "${file#tests/}" | sed 's/\.tcl$//' ;;
        esac
    done
}

# Runs the Tcl harness's units $@ after building what they test (the default target);
# each test's line is a result (`[ok]: NAME (1 ms)`, `[err]: NAME in FILE`,
# `[skip]: NAME`, `[ignore]: NAME`), printed as `RESULT: NAME` after the line
# `swe-harvest results:`, the worst of repeats. With `--durable` (when the harness
# has it) a test that raises is an `[err]`; without it, or on a server crash, an
# `[exception]` stops the harness and the unit's tests after it have no result.
run_tcl_units() {
    local unit args=() code output=/tmp/swe-harvest-tcl.log
    echo "swe-harvest: Tcl harness units of the touched files: $*"
    make -j"$jobs" </dev/null >/tmp/swe-harvest-build.log 2>&1 || {
        echo "swe-harvest: the build failed; its last lines:"
        tail -n 40 /tmp/swe-harvest-build.log
    }
    for unit in "$@"; do args+=(--single "$unit"); done
    # A test that raises (a command's error before the fix) stops the whole harness,
    # leaving the unit's other tests without a result; `--durable` reports it as
    # `[err]` and goes on (redis-13115, 2026-11-28).
    grep -q -- '--durable' tests/test_helper.tcl && args+=(--durable)
    local runner=./runtest
    [ -x runtest ] || runner="sh runtest"
    TERM=dumb run_logged "$output" $runner "${args[@]}"
    code=$?
    echo "swe-harvest results:"
    sed 's/\x1b\[[0-9;]*m//g' "$output" | awk '
        /^\[(ok|err|skip|ignore)\]: / {
            word = substr($1, 2, length($1) - 3); name = substr($0, length($1) + 2)
            if (word == "ok") sub(/ \([0-9]+ m?s\)$/, "", name)
            if (word == "err") sub(/ in [^ ]+$/, "", name)
            r = word == "ok" ? "PASS" : word == "err" ? "FAIL" : "SKIP"
            if (!(name in worst) || r == "FAIL") worst[name] = r
        }
        END { for (name in worst) print worst[name] ": " name }' | sort -k2
    return "$code"
}

# A plain Makefile seldom says which objects include a header (zstd's tests/Makefile
# lists .c files only), so an object built before a patch changed a header keeps the
# old header beside objects built after it (zstd-2094: a struct with the fix's new
# field in one object and without it in another, an assertion of the library after
# the fix). When a header is newer than the sources were last made current (the
# warm-sync's stamp, else the oldest object), every C/C++ source is touched, so that
# make builds each object again.
SOURCES_STAMP="${SWE_HARVEST_SOURCES_STAMP:-/tmp/swe-harvest-sources-current}" # set otherwise only by a unit test
HEADERS=(-name '*.h' -o -name '*.hh' -o -name '*.hpp' -o -name '*.hxx' -o -name '*.inc' -o -name '*.inl' -o -name '*.ipp' -o -name '*.tcc')
rebuild_after_changed_headers() {
    local since="$SOURCES_STAMP" header
    if [ ! -e "$since" ]; then
        # No warm-sync ran (SWE-bench's harness on an instance image): the oldest object.
        since=$(find . -path ./.git -prune -o -type f -name '*.o' -printf '%T@ %p\n' | sort -n | head -n 1 | cut -d ' ' -f 2-)
    fi
    if [ -n "$since" ]; then
        header=$(find . -path ./.git -prune -o -type f \( "${HEADERS[@]}" \) -newer "$since" -print -quit)
        if [ -n "$header" ]; then
            echo "swe-harvest: ${header#./} changed since the build (a plain Makefile may not know which objects include it); every C/C++ source is touched so that make builds it again"
            find . -path ./.git -prune -o -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cxx' -o -name '*.c++' \) -exec touch {} +
        fi
    fi
    touch "$SOURCES_STAMP"
}

run_make() {
    local target="${command[1]:-check}" tests selected=() code units
    units=$(tcl_units)
    if [ -n "$units" ]; then
        mapfile -t selected <<<"$units"
        run_tcl_units "${selected[@]}"
        return
    fi
    if [ -f Makefile ] && grep -q '^check-am:' Makefile; then
        find . -name '*.trs' -delete 2>/dev/null
        # A patch changed the build's sources (a test added to Makefile.am's TESTS): take
        # them in ourselves, as AM_MAINTAINER_MODE([disable]) (jq's) turns automake's
        # own rebuild rules off.
        if [ -x config.status ] && [ -n "$(find . \( -name Makefile.am -o -name configure.ac -o -name configure.in \
            -o -name '*.m4' \) -newer config.status -print -quit)" ]; then
            echo "swe-harvest: build files changed; autoreconf -fi, then configure again"
            autoreconf -fi && ./config.status --recheck && ./config.status
        fi
        tests=$(printf 'swe-harvest-print-tests:\n\t@echo "swe-harvest TESTS: $(TESTS)"\n' |
            make -s --no-print-directory -f Makefile -f - swe-harvest-print-tests 2>/dev/null | sed -n 's/^swe-harvest TESTS: //p' | tail -n 1)
        for test in $tests; do
            selected_by_files "$test" && selected+=("$test")
        done
        if [ "${#selected[@]}" -gt 0 ]; then
            echo "swe-harvest: automake tests selected by the touched files: ${selected[*]}"
            make -j"$jobs" -k all
            make -k check-am TESTS="${selected[*]}"
            code=$?
        else
            echo "swe-harvest: no automake test named by the touched files; running all of them"
            make -j"$jobs" -k all
            make -k "$target"
            code=$?
        fi
        find . -name '*.trs' | sort | while IFS= read -r trs; do
            # A GoogleTest program (c-ares's `arestest`) gives its cases instead.
            cases=""
            [ -f "${trs%.trs}.log" ] &&
                cases=$(awk "$GOOGLETEST_CASE"' { r = googletest_case($0); if (r != "") print r }' "${trs%.trs}.log")
            if [ -n "$cases" ]; then
                awk '{ id = $0; sub(/^[A-Z]+: /, "", id); r = $1; sub(/:$/, "", r)
                       print ":swe-harvest-test: " id; print ":test-result: " r }' <<<"$cases"
            else
                printf ':swe-harvest-test: %s\n' "$(trs_id "$trs")"
                cat "$trs"
            fi
        done >"$report"
        # What failing tests printed (automake keeps it in their .log files).
        find . -name '*.trs' | sort | while IFS= read -r trs; do
            if grep -qE '^:(global-)?test-result: (FAIL|ERROR|XPASS)' "$trs" && [ -f "${trs%.trs}.log" ]; then
                echo "swe-harvest: the output of ${trs%.trs}.log (at most 100 lines):"
                head -n 100 "${trs%.trs}.log"
            fi
        done
        echo "swe-harvest results:"
        awk '/^:swe-harvest-test: / { id = substr($0, 20); next }
             /^:global-test-result: / { global[id] = $2 }
             /^:test-result: / { r = $2; if (!(id in worst) || r != "PASS" && r != "SKIP" && r != "XFAIL") worst[id] = r }
             END { for (id in worst) { r = (id in global) ? global[id] : worst[id]; if (r == "XPASS") r = "FAIL"; print r ": " id } }' "$report" | sort -k2
    else
        local targets
        rebuild_after_changed_headers
        targets=$(make_targets_of_touched_files)
        if [ -n "$targets" ]; then
            echo "swe-harvest: make targets that run the touched files: $(awk -F '\t' '{ printf "%s%s%s", (NR > 1 ? ", " : ""), $2, ($1 == "." ? "" : " (in " $1 "/)") }' <<<"$targets")"
            run_make_targets <<<"$targets"
        else
            echo "swe-harvest: no make target runs the touched files; running make $target"
            printf '.\t%s\n' "$target" | run_make_targets --exit-code-too
        fi
        code=$?
    fi
    return "$code"
}

# The executables compiled from the touched files, from CMake's file API reply in
# build dir $1: one line each, `ARTIFACT<TAB>TARGET<TAB>TOUCHED SOURCES` (paths relative to
# the build dir and the source dir).
touched_targets() {
    local script=/tmp/swe-harvest-touched-targets.cmake
    cat >"$script" <<'CMAKE'
cmake_minimum_required(VERSION 3.19)
file(GLOB indexes "${BUILD}/.cmake/api/v1/reply/index-*.json")
if(NOT indexes)
  return()
endif()
list(SORT indexes)
list(GET indexes -1 index)
file(READ "${index}" text)
string(JSON codemodel_file ERROR_VARIABLE error GET "${text}" reply codemodel-v2 jsonFile)
if(error)
  return()
endif()
file(READ "${BUILD}/.cmake/api/v1/reply/${codemodel_file}" codemodel)
string(JSON count LENGTH "${codemodel}" configurations 0 targets)
if(count EQUAL 0)
  return()
endif()
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON target_file GET "${codemodel}" configurations 0 targets ${i} jsonFile)
  file(READ "${BUILD}/.cmake/api/v1/reply/${target_file}" target)
  string(JSON type GET "${target}" type)
  string(JSON sources ERROR_VARIABLE error LENGTH "${target}" sources)
  if(NOT type STREQUAL "EXECUTABLE" OR error OR sources EQUAL 0)
    continue()
  endif()
  set(hits "")
  math(EXPR last_source "${sources} - 1")
  foreach(j RANGE ${last_source})
    string(JSON path GET "${target}" sources ${j} path)
    if(path IN_LIST TOUCHED)
      list(APPEND hits "${path}")
    endif()
  endforeach()
  if(hits)
    string(JSON name GET "${target}" name)
    string(JSON artifact GET "${target}" artifacts 0 path)
    list(JOIN hits " " hits)
    message(NOTICE "${artifact}\t${name}\t${hits}")
  endif()
endforeach()
CMAKE
    local IFS=';'
    cmake -DBUILD="$1" -DTOUCHED="${files[*]}" -P "$script" 2>&1 | grep -P '^[^\t]+\t[^\t]+\t'
}

# The doctest programs among the tests of CTest's report $1 (a test whose output
# there shows doctest's banner or summary, `[doctest] test cases: ...`), each run once
# more as CTest ran it (its command, working directory, environment and timeout, from
# `ctest --show-only=json-v1`) with `--reporters=xml --out=FILE` added: doctest prints
# passing cases only when asked, so CTest's output does not hold them. One line per
# case, `TEST<TAB>RESULT: ID` (DOCTEST_CASES). Reading the tests' properties needs
# CMake 3.19 (`string(JSON)`); an older one gives no cases.
doctest_cases() {
    local report=$1 names work script
    names=$(awk '/<testcase name="/ { match($0, /name="[^"]*"/); test = substr($0, RSTART + 6, RLENGTH - 7); next }
        /<\/testcase>/ { test = ""; next }
        test != "" && /\[doctest\] (doctest version is|test cases:)/ { print test; test = "" }' "$report" | sort -u)
    [ -n "$names" ] || return 0
    work=$(mktemp -d)
    script="$work/run.cmake"
    cat >"$script" <<'CMAKE'
cmake_minimum_required(VERSION 3.19)
file(READ "${INFO}" info)
string(JSON count ERROR_VARIABLE error LENGTH "${info}" tests)
if(error OR count EQUAL 0)
  return()
endif()
math(EXPR last "${count} - 1")
set(n 0)
foreach(i RANGE ${last})
  string(JSON name GET "${info}" tests ${i} name)
  if(NOT name IN_LIST NAMES)
    continue()
  endif()
  string(JSON words LENGTH "${info}" tests ${i} command)
  set(command "")
  math(EXPR last_word "${words} - 1")
  foreach(j RANGE ${last_word})
    string(JSON word GET "${info}" tests ${i} command ${j})
    list(APPEND command "${word}")
  endforeach()
  set(directory "${DIR}")
  set(environment "")
  set(timeout 1500)
  string(JSON properties ERROR_VARIABLE error LENGTH "${info}" tests ${i} properties)
  if(NOT error AND properties GREATER 0)
    math(EXPR last_property "${properties} - 1")
    foreach(j RANGE ${last_property})
      string(JSON key GET "${info}" tests ${i} properties ${j} name)
      if(key STREQUAL "WORKING_DIRECTORY")
        string(JSON directory GET "${info}" tests ${i} properties ${j} value)
      elseif(key STREQUAL "TIMEOUT")
        string(JSON timeout GET "${info}" tests ${i} properties ${j} value)
      elseif(key STREQUAL "ENVIRONMENT")
        string(JSON values LENGTH "${info}" tests ${i} properties ${j} value)
        math(EXPR last_value "${values} - 1")
        foreach(k RANGE ${last_value})
          string(JSON value GET "${info}" tests ${i} properties ${j} value ${k})
          list(APPEND environment "${value}")
        endforeach()
      endif()
    endforeach()
  endif()
  if(NOT timeout GREATER 0)
    set(timeout 1500)
  endif()
  math(EXPR n "${n} + 1")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${environment} ${command} --reporters=xml "--out=${WORK}/${n}.xml"
    WORKING_DIRECTORY "${directory}" TIMEOUT ${timeout} OUTPUT_QUIET ERROR_QUIET RESULT_VARIABLE code)
  message(NOTICE "${n}\t${name}")
endforeach()
CMAKE
    local info="$work/tests.json" build
    build=$(cd "${dir:-.}" && pwd)
    ctest_in --show-only=json-v1 >"$info" 2>/dev/null
    echo "swe-harvest: running the doctest programs of CTest's tests once more for their cases (--reporters=xml): $(tr '\n' ' ' <<<"$names")" >&2
    cmake -DINFO="$info" -DWORK="$work" -DDIR="$build" -DNAMES="$(tr '\n' ';' <<<"$names")" -P "$script" 2>&1 |
        grep -P '^[0-9]+\t' | while IFS=$'\t' read -r n name; do
        awk "$DOCTEST_CASES" "$work/$n.xml" 2>/dev/null | awk -v test="$name" '{ print test "\t" $0 }'
    done
    rm -rf "$work"
}

run_ctest() {
    local dir="" args=("${command[@]:1}") i names=() regex="" code build=0 artifacts=() targets=() built=()
    local ctest_args=() junit=()
    for ((i = 0; i < ${#args[@]}; i++)); do
        if [ "${args[$i]}" = --test-dir ]; then
            dir="${args[$((i + 1))]}"; i=$((i + 1))
        else
            ctest_args+=("${args[$i]}")
        fi
    done
    # CTest runs in the build dir, and writes a report where it can: `--test-dir`
    # (CMake 3.20) and `--output-junit` (3.21) are newer than bullseye's 3.18, whose
    # results then come from the log.
    ctest --help 2>/dev/null | grep -q -- --output-junit && junit=(--output-junit "$report")
    # Each test's whole output in the report (CMake 3.24; CTest keeps 1 KiB of a passing
    # test's output otherwise): a GoogleTest program that CTest runs as one test
    # reports its cases there, and they are the task's ids (results.rs).
    ctest --help 2>/dev/null | grep -q -- --test-output-size-passed &&
        junit+=(--test-output-size-passed 16777216 --test-output-size-failed 16777216)
    ctest_in() { (cd "${dir:-.}" && stdbuf -oL -eL ctest "${ctest_args[@]}" "$@"); }
    local wanted=() whole=1
    if [ -n "$dir" ]; then
        # Ask CMake's file API for the build graph (the query takes effect at a
        # configure, which also brings the reply up to the patched tree).
        mkdir -p "$dir/.cmake/api/v1/query" && : >"$dir/.cmake/api/v1/query/codemodel-v2"
        cmake "$dir" >/dev/null 2>&1
        mapfile -t built < <(touched_targets "$dir")
        for entry in "${built[@]}"; do wanted+=("$(cut -f2 <<<"$entry")"); done
        # Only the targets that compile the touched files (and what they link) when the
        # graph names any: where every test includes a header that the patches change
        # (nlohmann/json: about 90 test executables), one is rebuilt instead of all.
        if [ "${#wanted[@]}" -gt 0 ]; then
            echo "swe-harvest: building the targets that compile the touched files: ${wanted[*]}"
            cmake --build "$dir" -j"$jobs" --target "${wanted[@]}"
            build=$?
            whole=0
        else
            cmake --build "$dir" -j"$jobs" -- -k
            build=$?
        fi
    fi
    # Each test and its command, listed before an old executable is removed below:
    # `ctest -N -V` prints a command only for an executable that is there. (A linker
    # that failed has removed its output already: `Could not find executable PATH`,
    # on stderr, then an empty command.)
    local tests=() how
    mapfile -t tests < <(ctest_in -N -V 2>&1 | awk '
        /^Could not find executable / { missing = substr($0, 27) }
        /Test command: / { line = substr($0, index($0, "Test command: ") + 14); if (line == "") line = missing; missing = "" }
        /^ *Test +#[0-9]+: / { sub(/^ *Test +#[0-9]+: /, ""); sub(/ \(Disabled\)$/, ""); print $0 "\t" line; line = "" }')
    for entry in "${built[@]}"; do
        IFS=$'\t' read -r artifact target sources <<<"$entry"
        case "$dir" in /*) artifacts+=("$dir/$artifact") ;; *) artifacts+=("$PWD/$dir/$artifact") ;; esac
        targets+=("$target")
        if [ "$build" -ne 0 ] && [ -e "$dir/$artifact" ]; then
            for source in $sources; do
                if [ "$source" -nt "$dir/$artifact" ]; then
                    echo "swe-harvest: $target did not build with the touched $source; its old $artifact is removed, so its tests have no result"
                    rm -f "$dir/$artifact"
                    break
                fi
            done
        fi
    done
    for test in "${tests[@]}"; do
        for artifact in "${artifacts[@]}"; do
            # The executable as a word of the command (quoted or not: Catch2's
            # ApprovalTests runs a script with it as an argument).
            case " ${test#*$'\t'} " in *"$artifact"[\"\'\ ]*) names+=("${test%%$'\t'*}"); continue 2 ;; esac
        done
    done
    how="run the executables of the targets that compile the touched files (${targets[*]})"
    if [ "${#names[@]}" -eq 0 ]; then
        how="name a touched file"
        # Tests chosen otherwise than by the rebuilt executables: the whole tree is built
        # first, so that none runs an executable of the environment commit.
        if [ "$whole" = 0 ]; then
            cmake --build "$dir" -j"$jobs" -- -k
            whole=1
        fi
        for test in "${tests[@]}"; do
            line="${test#*$'\t'}"
            for file in "${files[@]}"; do
                stem="${file##*/}"; stem="${stem%.*}"
                case " $line " in
                    *"$file"* | *"/${file##*/} "* | *"/$stem "*) names+=("${test%%$'\t'*}"); break ;;
                esac
            done
        done
    fi
    local selection=()
    if [ "${#names[@]}" -gt 0 ]; then
        for name in "${names[@]}"; do
            regex="$regex|$(printf '%s' "$name" | sed 's/[][\.*^$+?(){}|/]/\\&/g')"
        done
        selection=(-R "^(${regex#|})\$")
        echo "swe-harvest: CTest tests that $how: ${names[*]}"
    else
        echo "swe-harvest: no CTest test runs an executable of the touched files or names one; running all of them"
    fi
    run_logged /tmp/swe-harvest-ctest.log ctest_in "${junit[@]}" "${selection[@]}"
    code=$?
    # A fixture's setup test that failed leaves every test that requires the fixture
    # `Not Run` (nlohmann/json's `download_test_data` clones its test data from the
    # network, which no run has): the same tests once more without any fixture's setup
    # (`-FA .`), so that those that do not read what it would have made give a result.
    local setups
    setups=$(sed -n 's/^Failed test dependencies: //p' /tmp/swe-harvest-ctest.log | sort -u | tr '\n' ' ')
    if [ -n "$setups" ]; then
        # What each failed setup said (CTest keeps it in LastTest.log, which the run
        # again below replaces), one `swe-harvest: fixture setup NAME: LINE` a line:
        # results.rs reads a setup that found no network there.
        awk -v names=" $setups" '
            /^[0-9]+\/[0-9]+ Test: / { name = $0; sub(/^[0-9]+\/[0-9]+ Test: /, "", name); next }
            /^Output:$/ { wanted = index(names, " " name " ") > 0; skip = 1; next }
            skip { skip = 0; next }
            /^<end of output>$/ { wanted = 0; next }
            wanted { print "swe-harvest: fixture setup " name ": " $0 }' "${dir:-.}/Testing/Temporary/LastTest.log" 2>/dev/null
        echo "swe-harvest: the fixture setup test(s) ${setups}failed, so the tests that require them did not run; running them again without fixtures' setup (-FA .)"
        run_logged /tmp/swe-harvest-ctest.log ctest_in "${junit[@]}" "${selection[@]}" -FA .
        code=$?
    fi
    # A test whose output in the report holds GoogleTest cases gives way to them (as
    # results.rs reads the report): `TEST<TAB>RESULT: Suite.Case` lines.
    : >/tmp/swe-harvest-ctest-cases
    if [ -s "$report" ]; then
        awk "$GOOGLETEST_CASE"'
            /<testcase name="/ { match($0, /name="[^"]*"/); test = substr($0, RSTART + 6, RLENGTH - 7); next }
            /<\/testcase>/ { test = ""; next }
            test != "" { r = googletest_case($0); if (r != "") print test "\t" r }' "$report" >/tmp/swe-harvest-ctest-cases
        # A doctest program's cases likewise, from one more run of it; the report keeps
        # them after CTest's XML, below a line of their own (results.rs reads them).
        local doctest
        doctest=$(doctest_cases "$report")
        if [ -n "$doctest" ]; then
            printf '%s\n' "$doctest" >>/tmp/swe-harvest-ctest-cases
            printf '\n%s\n%s\n' "$DOCTEST_REPORT_MARKER" "$doctest" >>"$report"
        fi
    fi
    echo "swe-harvest results:"
    awk -F '\t' 'FILENAME == ARGV[1] { cases[$1] = cases[$1] $2 "\n"; next }
        /^ *[0-9]+\/[0-9]+ Test +#[0-9]+: / {
            sub(/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: /, ""); split($0, words, " "); name = words[1]
            if (name in cases) { printf "%s", cases[name]; next }
            # `***Not Run` alone: the executable is not there (no result).
            if (/\*\*\*Not Run/ && !/Disabled/) next
            r = /\*\*\*Skipped| Not Run /? "SKIP" : / Passed /? "PASS" : "FAIL"
            print r ": " name }' /tmp/swe-harvest-ctest-cases /tmp/swe-harvest-ctest.log
    return "$code"
}

# The harness scripts whose per-test output is read (harness.rs's HARNESS_SCRIPTS).
HARNESS_SCRIPTS='run-tests\.py|cli-tests/run\.py'

# `make -C DIR [VAR=VALUE...] TARGET`: a harness over a build in a folder (harness.rs).
# The folder is built with the variables; make's dry run of TARGET gives the recipe's
# line that runs a known harness script (`cd ../../tests && MICROPY_MICROPYTHON=...
# ./run-tests.py`); that line runs with the touched tests of the harness's folder
# appended (a touched `basics/foo.py.exp` is the test `basics/foo.py`: the shortest
# name that is a file), else whole. Each test's line is a result: `pass  ID`, `FAIL
# ID`, `skip  ID`, `lrge  ID` (micropython's run-tests.py), `PASS: ID` (zstd's
# cli-tests/run.py); with none, the rule's exit code (`DIR/make-TARGET`).
run_harness() {
    local dir="${command[2]}" rest=("${command[@]:3}") target vars line folder relative file name base parts i tests=() code
    local output build
    output=$(mktemp); build=$(mktemp)
    if [ "${#rest[@]}" -eq 0 ] || [ -z "$dir" ]; then
        echo "swe-harvest: the test command \`${command[*]}\` names no folder and rule to run (make -C DIR [VAR=VALUE...] RULE); fix the environment's test_command"
        return 2
    fi
    target="${rest[${#rest[@]}-1]}"
    vars=("${rest[@]:0:${#rest[@]}-1}")
    rebuild_after_changed_headers
    # What the rule needs built first (its prerequisites, from make's database), not the
    # rule itself, which would run the whole harness; the default goal when it names none.
    local prerequisites
    prerequisites=$(make -C "$dir" -p -q "${vars[@]}" "$target" </dev/null 2>/dev/null |
        awk -v rule="$target:" 'index($0, rule) == 1 && $0 !~ /=/ { line = substr($0, length(rule) + 1); sub(/\|.*/, "", line) } END { print line }')
    echo "swe-harvest: building $dir: make -C $dir ${vars[*]} $prerequisites"
    # shellcheck disable=SC2086 # the prerequisites are make's words
    make -C "$dir" -j"$jobs" "${vars[@]}" $prerequisites </dev/null >"$build" 2>&1 || {
        echo "swe-harvest: the build of $dir failed; its last lines:"
        tail -n 40 "$build"
    }
    line=$(make -C "$dir" -n "${vars[@]}" "$target" 2>/dev/null | grep -E "(^|[ /])($HARNESS_SCRIPTS)( |\$)" | head -n 1)
    if [ -z "$line" ]; then
        echo "swe-harvest: make -C $dir $target runs no known harness; running it whole"
        printf '%s\t%s\n' "$dir" "$target" | run_make_targets --exit-code-too
        return
    fi
    # The harness's folder: where the line's `cd` goes from DIR, else DIR.
    folder=$(cd "$dir" && { to=$(sed -n 's/^[[:space:]]*cd[[:space:]]\{1,\}\([^ ;&]*\).*/\1/p' <<<"$line"); [ -z "$to" ] || cd "$to"; } && pwd)
    relative="${folder#"$PWD"}"; relative="${relative#/}"
    for file in "${files[@]}"; do
        [ -n "$relative" ] && { case "$file" in "$relative"/*) ;; *) continue ;; esac; }
        file="${file#"$relative"/}"
        # The shortest name cut at a dot of the file's name that is a file.
        base="${file##*/}"; name=""
        [ "$base" != "$file" ] && name="${file%/*}/"
        IFS=. read -ra parts <<<"$base"
        name="$name${parts[0]}"; i=1
        while [ ! -f "$folder/$name" ] && [ "$i" -lt "${#parts[@]}" ]; do name="$name.${parts[$i]}"; i=$((i + 1)); done
        [ -f "$folder/$name" ] || continue
        case "$name" in run-tests.py | cli-tests/run.py) continue ;; esac
        case " ${tests[*]} " in *" $name "*) ;; *) tests+=("$name") ;; esac
    done
    if [ "${#tests[@]}" -gt 0 ]; then
        echo "swe-harvest: harness tests selected by the touched files: ${tests[*]}"
        line="$line $(printf '%q ' "${tests[@]}")"
    else
        echo "swe-harvest: no touched file is a test of the harness; running all of it"
    fi
    echo "swe-harvest: (in $dir) $line"
    run_logged "$output" bash -c "cd $(printf '%q' "$dir") && $line"
    code=$?
    echo "swe-harvest results:"
    awk -v fallback="$dir/make-$target" -v code="$code" '
        /^(pass|FAIL|skip|lrge)  +[^ ]/ { r = $1 == "pass" ? "PASS" : $1 == "FAIL" ? "FAIL" : "SKIP"; id = $2 }
        /^(PASS|FAIL|SKIP|XFAIL|XPASS|ERROR): [^[:space:]]+$/ { r = $1; sub(/:$/, "", r); id = $2 }
        r != "" { if (!(id in worst) || r != "PASS" && r != "SKIP" && r != "XFAIL") worst[id] = r; r = "" }
        END { n = 0; for (id in worst) { print worst[id] ": " id; n++ }
              if (n == 0) print (code == 0 ? "PASS" : "FAIL") ": " fallback }' "$output" | sort -k2
    return "$code"
}

case "${command[0]}" in
    ctest) run_ctest ;;
    make) if [ "${command[1]:-}" = -C ]; then run_harness; else run_make; fi ;;
    *) run_make ;;
esac
