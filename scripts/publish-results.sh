#!/usr/bin/env bash
# make publish-results: the one step that changes tracked files with measured figures. Runs write
# only under .results/ (gitignored): make bench, bench-freshness, bench-cache-size, chaos, soak and bench-purger
# leave the tree as it was. This copies the latest result of each kind present there to its
# published place (the e2e suite's screenshot of the editor's live notice too, for the README),
# then regenerates what is generated from bench/results.json: bench/chart.svg,
# the block of docs/benchmarks.md between the bench markers and the tables of README.md's
# "Numbers" between <!-- bench:readme:begin --> and <!-- bench:readme:end --> (bench/report.py
# --publish), then README's table of the other figures (scripts/figures.py). A result that is
# not there is left as published; review with git diff, commit.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

# from (under .results/)      to (tracked)                      made by
published=(
  "bench/results.json         bench/results.json                make bench"
  "bench/freshness.json       bench/freshness.json              make bench-freshness"
  "bench/freshness-loaded.json bench/freshness-loaded.json       make bench-freshness BENCH_CPU_HOGS=2"
  "bench/cache-size.json      bench/cache-size.json             make bench-cache-size"
  "bench/cache-size-before.json bench/cache-size-before.json    make bench-cache-size (on the tree before xkey.purge, kept by hand)"
  "reliability/chaos.json     reliability/results/chaos.json    make chaos"
  "reliability/soak.json      reliability/results/soak.json     make soak"
  "purger/results.json        purger/bench/results.json         make bench-purger"
  "purger/wait-latency.json   purger/bench/wait-latency.json    npm run bench:wait (purger/)"
  "e2e.json                   tests/e2e/results.json            make test-e2e"
  "e2e/bulk-actions.json      tests/e2e/bulk-actions.json       make test-e2e"
  "compose/own-site.json      tests/compose/own-site.json       make test-compose"
  "reliability/quick.json     reliability/results/quick.json    make test-reliability"
  "e2e/editor-live.png        docs/img/editor-live.png          make test-e2e"
)
# make bench-hit-path MODE=explain|ablate and make bench-profile (bench/hit-path.sh)
for f in explain-config explain-pinned explain-close explain-zipf explain-no-host ablate profile; do
  published+=("bench/hit-path/$f.json bench/hit-path/$f.json make bench-hit-path (bench/hit-path.sh)")
done
# The plugin suite writes one conformance report per WordPress version it ran on.
for report in .results/plugin/conformance-*.json; do
  [[ -e $report ]] && published+=("plugin/${report##*/} wordpress-plugin/tests/results/${report##*/} make test-plugin")
done

# valid FILE: parses as what its name says (the JSON results, the PNG screenshots).
valid() {
  case $1 in
  *.json) python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" 2>/dev/null ;;
  *.png) [[ $(head -c 8 "$1" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ;;
  *) return 1 ;;
  esac
}

copied=0 bad=0
for row in "${published[@]}"; do
  read -r from to made_by <<<"$row"
  from=.results/$from
  if [[ ! -e $from ]]; then
    echo "publish: no $from ($made_by): $to left as published"
    continue
  fi
  if ! valid "$from"; then
    echo "publish: $from is not a valid ${from##*.} file: $to left as published"
    bad=$((bad + 1))
    continue
  fi
  if cmp -s "$from" "$to"; then
    echo "publish: $to already is $from"
    continue
  fi
  mkdir -p "$(dirname "$to")"
  cp "$from" "$to"
  echo "publish: $to ← $from ($(date -r "$from" -u '+%F %H:%M UTC'))"
  copied=$((copied + 1))
done

# The generated text always follows the published files, freshly copied or not.
python3 bench/report.py --publish bench/results.json || bad=$((bad + 1))
python3 scripts/figures.py || bad=$((bad + 1))
echo "publish: $copied result file(s) copied; review with: git diff --stat"
((bad == 0))
