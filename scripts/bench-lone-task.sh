#!/usr/bin/env bash
# A task whose environment serves only itself, side by side: `validate` against a
# plain script, per published Python row, each cold.
#
# The plain script is what a user could write in 100 lines instead of swe-harvest:
# one container per row, from the same base image that validate's environment chose,
# with the network on; in it a venv, today's setuptools, uv with `--exclude-newer` at
# the row's date, the project installed editable with its `test`, `tests` and `testing` extras (else
# without), built without isolation by that setuptools, then the touched
# test files run by pytest (JUnit XML) before and after the gold patch. Nothing is
# kept between rows; no sandbox, no environment check, no ladder, no image.
#
# validate runs each row alone (`--input` of one row, `--runs 1 --workers 1`, a fresh
# data dir, no per-repository config), after removing the environment images of the
# row's repository, so that its environment is built for that task alone, as a
# lone task's is. The steps above the repository's copy (the user, uv's venv) are
# every environment's of that base: the bench keeps them (a tag, removed at its end)
# once a row has built them, as any engine that has built one environment of the
# runtime has them, so that only the first row of a runtime pays for them.
#
# Prints per row: validate's seconds (and of them building images), the plain
# script's, their ratio, and whether each one's FAIL_TO_PASS equals the published
# list (validate's by its own comparison with the published row); then the medians and
# sums, and the sums over the rows where the plain script's install succeeded.
#
# usage: SWE_HARVEST_MIRRORS=<mirrors> scripts/bench-lone-task.sh [ROWS.jsonl]
#   (default: ../shared/groundtruth/swe-bench-lite-dev.jsonl, the rows with a mirror)
#   BENCH_ROWS=N          only the first N rows with a mirror
#   SWE_HARVEST_BIN=PATH  a built swe-harvest (default: `cargo build` here)
#   KEEP_DIRS=1           keep the work dir (printed)
#   PLAIN_CPUS=N          the plain script's container limited to N CPUs, as validate's
#                         containers are (validate.cpus); unlimited by default
set -euo pipefail
cd "$(dirname "$0")/.."
: "${SWE_HARVEST_MIRRORS:?set SWE_HARVEST_MIRRORS to a directory of mirrors (see scripts/validate-groundtruth.sh)}"
rows=${1:-../shared/groundtruth/swe-bench-lite-dev.jsonl}
[ -f "$rows" ] || { echo "bench-lone-task: no $rows (the shared rows are not on this machine)" >&2; exit 1; }
docker info >/dev/null 2>&1 || { echo "bench-lone-task: no Docker engine answers: run scripts/setup.sh" >&2; exit 1; }
bin="${SWE_HARVEST_BIN:-}"
if [ -z "$bin" ]; then
    cargo build --quiet
    bin="${CARGO_TARGET_DIR:-target}/debug/swe-harvest"
fi
: "${SWE_HARVEST_VALIDATE__EXTRA_CA_FILE:=/etc/ssl/certs/ca-certificates.crt}"
export SWE_HARVEST_VALIDATE__EXTRA_CA_FILE
work=$(mktemp -d /tmp/swe-harvest-lone.XXXXXX)
[ "${KEEP_DIRS:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT

python3 - "$rows" "$work" "$bin" <<'PY'
import io, json, os, re, statistics, subprocess, sys, tarfile, time
import xml.etree.ElementTree as ET
from pathlib import Path

rows_file, work, binary = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
mirrors = Path(os.environ["SWE_HARVEST_MIRRORS"])
limit = int(os.environ.get("BENCH_ROWS") or 0)
ca_file = os.environ["SWE_HARVEST_VALIDATE__EXTRA_CA_FILE"]
plain_limits = ["--cpus", os.environ["PLAIN_CPUS"]] if os.environ.get("PLAIN_CPUS") else []

def mirror_of(repo):
    owner, name = repo.split("/")
    for layout in (f"{owner}__{name}.git", f"{owner}+{name}/repo", f"{owner}/{name}.git", f"{owner}__{name}", f"{owner}/{name}"):
        if (mirrors / layout).is_dir():
            return mirrors / layout
    return None

def as_list(value):
    return json.loads(value) if isinstance(value, str) else list(value or [])

# The plain script, run by bash in the container; the row's files come in on stdin.
PLAIN = r'''
set -u
mkdir -p /w && cd /w && tar -x
export SSL_CERT_FILE=/w/ca.pem PIP_CERT=/w/ca.pem
python3 -m venv /venv >/dev/null && /venv/bin/pip install -q --disable-pip-version-check uv >&2 || exit 3
cd /w/repo
# Today's build tools (an old setuptools cannot install in editable mode), then the
# project and its dependencies as of the date, built with them.
/venv/bin/uv pip install -q --python /venv/bin/python "setuptools>=64" wheel >&2 || exit 4
uv() { /venv/bin/uv pip install -q --python /venv/bin/python --no-build-isolation --exclude-newer "$DATE" "$@"; }
uv -e ".[test,tests,testing]" pytest >&2 || uv -e . pytest >&2 || exit 4
git apply /w/test.patch || exit 5
/venv/bin/python -m pytest -p no:cacheprovider -o junit_family=xunit1 --junitxml=/w/pre.xml $FILES >&2
git apply /w/gold.patch || exit 6
/venv/bin/python -m pytest -p no:cacheprovider -o junit_family=xunit1 --junitxml=/w/post.xml $FILES >&2
echo "@@pre"; cat /w/pre.xml 2>/dev/null; echo; echo "@@post"; cat /w/post.xml 2>/dev/null
'''

def junit(text):
    """Each test's id (pytest's node id, from xunit1's `file`) -> passed."""
    results = {}
    if not text.strip():
        return results
    for case in ET.fromstring(text.strip()).iter("testcase"):
        module = case.get("classname", "")
        path = case.get("file") or module.replace(".", "/") + ".py"
        stem = path[:-3].replace("/", ".")
        inner = module[len(stem) + 1:] if module.startswith(stem + ".") else ""
        node = "::".join(part for part in [path, *(inner.split(".") if inner else []), case.get("name")] if part)
        failed = any(case.find(tag) is not None for tag in ("failure", "error", "skipped"))
        results[node] = not failed
    return results

def add_tree(bundle, mirror, commit):
    """The commit's files under `repo/`; files whose content the mirror lacks (a
    snapshot without its largest files) are left out, as validate leaves them out."""
    git = ["git", "-C", str(mirror)]
    listed = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True)
    if listed.returncode != 0:
        return False
    # The commit's time on every file, as `git archive` gives: flit zips the sources,
    # and ZIP has no time before 1980.
    mtime = int(subprocess.run([*git, "show", "-s", "--format=%ct", commit], capture_output=True, text=True).stdout)
    entries = [line.decode().split("\t", 1) for line in listed.stdout.split(b"\0") if line]
    objects = [meta.split()[2] for meta, _ in entries]
    batch = subprocess.run([*git, "cat-file", "--batch"], input="".join(o + "\n" for o in objects).encode(),
                           capture_output=True).stdout
    at = 0
    for meta, path in entries:
        header_end = batch.index(b"\n", at)
        header = batch[at:header_end].split()
        at = header_end + 1
        if header[-1] == b"missing":
            continue
        size = int(header[2])
        content, at = batch[at:at + size], at + size + 1
        mode = meta.split()[0]
        if mode == "160000":
            continue  # a submodule: no content here
        info = tarfile.TarInfo("repo/" + path)
        info.mtime = mtime
        if mode == "120000":
            info.type, info.linkname = tarfile.SYMTYPE, content.decode()
            bundle.addfile(info)
        else:
            info.size, info.mode = size, 0o755 if mode == "100755" else 0o644
            bundle.addfile(info, io.BytesIO(content))
    return True

def plain(row, image, folder):
    mirror = mirror_of(row["repo"])
    stream = io.BytesIO()
    with tarfile.open(fileobj=stream, mode="w") as bundle:
        if not add_tree(bundle, mirror, row["base_commit"]):
            return None
        for name, data in (("test.patch", row["test_patch"]), ("gold.patch", row["patch"]), ("ca.pem", Path(ca_file).read_text())):
            info = tarfile.TarInfo(name)
            info.size = len(data.encode())
            bundle.addfile(info, io.BytesIO(data.encode()))
    files = sorted({m for m in re.findall(r"^diff --git a/(\S+) b/", row["test_patch"], re.M) if m.endswith(".py") and "test" in m})
    started = time.monotonic()
    done = subprocess.run(["docker", "run", "--rm", "-i", *plain_limits, "-e", f"DATE={row['created_at'][:10]}",
                           "-e", f"FILES={' '.join(files)}", image, "bash", "-c", PLAIN], input=stream.getvalue(), capture_output=True)
    seconds = time.monotonic() - started
    (folder / "plain.log").write_bytes(done.stderr)
    out = done.stdout.decode(errors="replace")
    pre_text, _, post_text = out.partition("@@post")
    pre, post = junit(pre_text.replace("@@pre", "", 1)), junit(post_text)
    fail_to_pass = sorted(test for test, passed in post.items() if passed and not pre.get(test, False))
    return seconds, fail_to_pass, done.returncode

KEEPER = "swe-harvest-bench/shared-steps"

def keep_shared_steps(image, runtime):
    """Tags the last step above the repository's copy in `image`'s history."""
    history = subprocess.run(["docker", "history", "--no-trunc", "--format", "{{.ID}} {{.CreatedBy}}", image],
                             capture_output=True, text=True).stdout.splitlines()
    for line, below in zip(history, history[1:]):
        if "COPY" in line and ("/testbed/" in line or "testbed.tar" in line):
            subprocess.run(["docker", "tag", below.split()[0], f"{KEEPER}:py{runtime}"], capture_output=True)
            return

chosen = [row for row in map(json.loads, open(rows_file)) if mirror_of(row["repo"])]
chosen = chosen[:limit] if limit else chosen
if not chosen:
    sys.exit(f"bench-lone-task: no row of {rows_file} has a mirror in {mirrors}")
print(f"{'task':38} {'validate s':>10} {'images s':>8} {'plain s':>8} {'ratio':>6}  exact (validate, plain)")
ratios, sums, installed = [], [0.0, 0.0], []
# The plain script's exit codes for a failed install (uv, then the project).
PLAIN_INSTALL_FAILED = (3, 4)
for row in chosen:
    instance, repo = row["instance_id"], row["repo"]
    env_repo = "swe-harvest/env." + repo.replace("/", "__").lower()
    images = subprocess.run(["docker", "images", "--format", "{{.Repository}}:{{.Tag}}", env_repo], capture_output=True, text=True).stdout.split()
    if images:
        subprocess.run(["docker", "rmi", "-f", *images], capture_output=True)
    folder = work / instance
    folder.mkdir()
    (folder / "row.jsonl").write_text(json.dumps(row) + "\n")
    (folder / "pipeline.toml").write_text(Path("configs/pipeline.toml").read_text())
    started = time.monotonic()
    log = subprocess.run([binary, "--data-dir", str(folder / "data"), "--config", str(folder / "pipeline.toml"), "validate",
                          "--input", str(folder / "row.jsonl"), "--out", str(folder / "out.jsonl"), "--runs", "1", "--workers", "1"],
                         capture_output=True, text=True).stderr
    validate_secs = time.monotonic() - started
    (folder / "validate.log").write_text(log)
    written = json.loads((folder / "out.jsonl").read_text().splitlines()[0]) if (folder / "out.jsonl").exists() else {}
    diagnosis = written.get("diagnosis", {})
    building = re.search(re.escape(instance) + r": [\d.]+s in containers' tests.*?, ([\d.]+)s building images", log)
    published = sorted(as_list(row["FAIL_TO_PASS"]))
    # validate's own comparison with the published row knows SWE-bench's id forms (a
    # parameter id cut at its first space, `\n` in an id); the plain script's list is
    # compared as it is.
    compared = diagnosis.get("published_fail_to_pass", {}).get("same")
    validate_exact = diagnosis.get("status") == "labelled" and (
        compared if compared is not None else sorted(as_list(written.get("FAIL_TO_PASS"))) == published)
    runtime = diagnosis.get("runtime") or "3.11"
    if diagnosis.get("image"):
        keep_shared_steps(diagnosis["image"], runtime)
    measured = plain(row, f"swe-harvest/base:py{runtime}", folder)
    if measured is None:
        print(f"{instance:38} skipped: its base commit is not in the mirror")
        continue
    plain_secs, plain_f2p, code = measured
    ratio = validate_secs / plain_secs
    ratios.append(ratio)
    sums[0] += validate_secs
    sums[1] += plain_secs
    if code not in PLAIN_INSTALL_FAILED:
        installed.append((validate_secs, plain_secs))
    note = "" if code == 0 else f" (plain exit {code})"
    print(f"{instance:38} {validate_secs:10.1f} {float(building.group(1)) if building else 0:8.1f} {plain_secs:8.1f} {ratio:6.2f}  "
          f"{'yes' if validate_exact else 'no'}, {'yes' if plain_f2p == published else 'no'}{note}  (py{runtime})")
print(f"median ratio {statistics.median(ratios):.2f}; sums: validate {sums[0]:.0f} s, plain {sums[1]:.0f} s ({sums[0] / sums[1]:.2f}x)")
# A plain run whose install failed is quick for having done less: the rows where it
# installed the project are the like-for-like comparison.
if installed and len(installed) < len(ratios):
    v, p = sum(pair[0] for pair in installed), sum(pair[1] for pair in installed)
    each = ", ".join(f"{pair[0] / pair[1]:.2f}" for pair in installed)
    print(f"where the plain script installed the project ({len(installed)} of {len(ratios)}): ratios {each}; "
          f"sums: validate {v:.0f} s, plain {p:.0f} s ({v / p:.2f}x)")
kept = subprocess.run(["docker", "images", "--format", "{{.Repository}}:{{.Tag}}", KEEPER], capture_output=True, text=True).stdout.split()
if kept:
    subprocess.run(["docker", "rmi", *kept], capture_output=True)
PY
[ "${KEEP_DIRS:-0}" != 1 ] || echo "work dir kept: $work" >&2
