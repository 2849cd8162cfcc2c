#!/usr/bin/env bash
# readme.txt's `Tested up to` against the WordPress versions the project really tested. The record
# is the plugin suite's conformance reports, one per WordPress version it ran on
# (.results/plugin/conformance-<version>.json, its "wordpress" field the tree's own $wp_version),
# which make publish-results copies to wordpress-plugin/tests/results/ (tracked). The newest cell
# of the platform matrix follows Debian sid (platforms.json "follows": "sid", scripts/
# fetch-wordpress.sh --at-least): when sid moves to a newer WordPress, the run tests it and records
# it there, and this check says `Tested up to` is behind; make test itself stays green. Fails when
# `Tested up to` (major.minor) is
#   - behind the newest version recorded as tested, or
#   - newer than every version recorded as tested,
# and when platforms.json's newest WordPress or README.md's Supported versions ("to X (`Tested up
# to`)") names another version than readme.txt (wordpress-plugin/tests/unit/ReadmeTest holds
# platforms.json to the same rule when the plugin suite runs). Reads files only, no network.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
command -v python3 >/dev/null || { echo "lint wordpress: python3 not found"; exit 1; }
exec python3 - <<'PY'
import glob, json, re

problems = []
def problem(msg):
    problems.append(msg)
    print(f"lint wordpress: {msg}")

def key(v):  # "7.1.4" -> (7, 1, 4); "7.2-RC1" -> (7, 2)
    m = re.match(r"\d+(?:\.\d+)*", v)
    return tuple(int(x) for x in m.group(0).split(".")) if m else ()

def minor(v):  # "7.1.4" -> "7.1"
    return ".".join(str(x) for x in key(v)[:2])

README_TXT = "wordpress-plugin/varnish-edge/readme.txt"
RECORDS = "wordpress-plugin/tests/results/conformance-*.json"

m = re.search(r"^Tested up to:[ \t]*(\S+)[ \t]*$", open(README_TXT, encoding="utf-8").read(), re.M)
tested_up_to = m.group(1) if m else None
if tested_up_to is None:
    problem(f"{README_TXT} has no 'Tested up to:' line")
elif not re.fullmatch(r"\d+\.\d+", tested_up_to):
    problem(f"{README_TXT}: 'Tested up to: {tested_up_to}' is not a major.minor WordPress version (e.g. 7.1)")
    tested_up_to = None

tested = {}  # version -> the record that says it ran
for path in sorted(glob.glob(RECORDS)):
    try:
        version = str(json.load(open(path, encoding="utf-8")).get("wordpress") or "")
    except (OSError, ValueError) as e:
        problem(f"{path} is not a readable JSON report ({e})")
        continue
    if not key(version):
        problem(f"{path} names no WordPress version (its \"wordpress\" field)")
        continue
    tested[version] = path

newest = max(tested, key=key) if tested else None
if not tested:
    problem(f"no WordPress version is recorded as tested ({RECORDS}: scripts/suites/plugin.sh writes "
            ".results/plugin/conformance-<version>.json, make publish-results copies it)")
elif tested_up_to:
    listed = ", ".join(sorted(tested, key=key))
    if key(tested_up_to) < key(minor(newest)):
        problem(f"{README_TXT} says 'Tested up to: {tested_up_to}', behind WordPress {newest}, the newest "
                f"version tested ({tested[newest]}): set 'Tested up to: {minor(newest)}' there, and "
                f"{minor(newest)} as platforms.json's newest WordPress and in README.md's Supported versions")
    elif key(tested_up_to) > key(minor(newest)):
        problem(f"{README_TXT} says 'Tested up to: {tested_up_to}', newer than any WordPress tested "
                f"({listed}; {RECORDS}): run the newest cell (make test-platforms) and make "
                f"publish-results, or set 'Tested up to: {minor(newest)}'")

if tested_up_to:
    wordpress = json.load(open("platforms.json", encoding="utf-8")).get("wordpress") or []
    claimed = max((str(x.get("version", "")) for x in wordpress), key=key, default="")
    if claimed != tested_up_to:
        problem(f"platforms.json's newest WordPress is {claimed or 'missing'}, readme.txt's 'Tested up to' "
                f"{tested_up_to}: they name the same version (the minimum of the cell that follows Debian sid)")
    readme_md = open("README.md", encoding="utf-8").read()
    says = re.findall(r"(\d+(?:\.\d+)*) \(`Tested up to`\)", readme_md)
    if not says:
        problem("README.md's Supported versions no longer names the 'Tested up to' version "
                "(\"to X (`Tested up to`)\"): say it there")
    for v in says:
        if v != tested_up_to:
            problem(f"README.md's Supported versions says {v} (`Tested up to`), readme.txt {tested_up_to}")

print(f"lint wordpress: Tested up to {tested_up_to or '?'}, newest WordPress tested {newest or 'none'} "
      f"({len(tested)} records), {len(problems)} problems")
raise SystemExit(1 if problems else 0)
PY
