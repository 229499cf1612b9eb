#!/bin/bash
# swe-harvest (pipeline/ecosystem/c/image.rs): puts the image's warm build under the
# checkout in /testbed. Run in /testbed, which holds the repository at the task's
# commit; the image holds the tree built at the environment commit ($WARM/tree) and
# the list of that commit's files ($WARM/sources). Afterwards /testbed is the warm
# tree, with every file of the checkout whose content differs from the warm tree's
# (or that the warm tree lacks) copied in with the current time, so that make and
# CMake rebuild exactly what changed, and the files of the environment commit that
# the checkout lacks removed. A `.git` folder (an instance image's one commit) is
# left as it is. Without a warm tree, the build script runs instead.
WARM="${SWE_HARVEST_C_WARM:-/home/harvest/c-warm}"
TESTBED="${SWE_HARVEST_TESTBED:-/testbed}" # both set otherwise only by the unit test
cd "$TESTBED" || exit 1
if [ ! -d "$WARM/tree" ] || [ ! -f "$WARM/sources" ]; then
    echo "swe-harvest: no warm build in the image; building from scratch"
    exec bash -e "$WARM/build.sh"
fi
set -o pipefail
stage=$(mktemp -d)
# What the checkout has that differs from the warm tree, or that it alone has.
diff -rq --no-dereference --exclude=.git "$TESTBED" "$WARM/tree" >"$stage/diff" 2>/dev/null
awk -v t="$TESTBED/" -v w=" and $WARM/tree/" '
    index($0, "Files " t) == 1 && / differ$/ { s = substr($0, 7 + length(t)); i = index(s, w); if (i) print substr(s, 1, i - 1); next }
    index($0, "File " t) == 1 && / while file / { s = substr($0, 6 + length(t)); i = index(s, " is a "); if (i) print substr(s, 1, i - 1); next }
    index($0, "Only in " substr(t, 1, length(t) - 1)) == 1 { s = substr($0, 8 + length(t)); i = index(s, ": ");
        if (!i) next; d = substr(s, 1, i - 1); n = substr(s, i + 2); sub(/^\//, "", d); print (d == "" ? n : d "/" n) }
' "$stage/diff" >"$stage/changed"
# The environment commit's files that the checkout no longer has.
(find . -mindepth 1 -path ./.git -prune -o ! -type d -print | sed 's:^\./::' | sort) >"$stage/present"
sort "$WARM/sources" | comm -23 - "$stage/present" >"$stage/deleted"
if [ -s "$stage/changed" ]; then
    tar -cf "$stage/changed.tar" --no-recursion -T <(while IFS= read -r p; do
        if [ -d "$p" ] && [ ! -L "$p" ]; then find "$p"; else printf '%s\n' "$p"; fi
    done <"$stage/changed") || exit 1
fi
find "$TESTBED" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} + || exit 1
cp -a "$WARM/tree/." "$TESTBED/" || exit 1
while IFS= read -r p; do rm -f -- "$TESTBED/$p"; done <"$stage/deleted"
# Older than every changed file, newer than every output of the warm build: the test
# helper rebuilds each object of a plain Makefile when a header is newer than this.
touch "${SWE_HARVEST_SOURCES_STAMP:-/tmp/swe-harvest-sources-current}" # set otherwise only by the unit test
# Changed files get the current time (tar -m): newer than every output of the warm build.
[ -f "$stage/changed.tar" ] && { tar -xmf "$stage/changed.tar" -C "$TESTBED" || exit 1; }
echo "swe-harvest: warm build of the environment commit in place; $(wc -l <"$stage/changed") files differ from it, $(wc -l <"$stage/deleted") removed"
rm -rf "$stage"
