#!/usr/bin/env bash
# reliability/run.sh quick|chaos|soak: starts the native stack (stack/up.sh) on free loopback
# ports in a temporary state directory, runs the reliability checks of that mode against it,
# and tears it down even on failure (printing its logs when something failed).
#   quick  shortened faults, hostile input, a bounded API fuzz run   (make test)
#   chaos  every fault with the issue's durations                    (make chaos)
#   soak   ten minutes of reads plus an event stream                 (make soak)
# Results: .results/reliability/<mode>.json (gitignored: no run rewrites a tracked file);
# `make publish-results` copies chaos.json and soak.json to reliability/results/, the published
# figures. Checks can be chosen: run.sh quick faults/origin-down
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source stack/lib.sh

mode=${1:-}; shift || true
QUICK=(hostile/local-privileges hostile/origin-hardening hostile/origin-headers hostile/edge-acl hostile/purger-auth hostile/injection hostile/store-fill hostile/plugin-admin faults/origin-down faults/redis-down faults/worker-kill faults/node-down faults/node-backlog-gone faults/blackhole-node faults/mariadb-restart)
CHAOS=(faults/origin-down faults/origin-hung faults/redis-down faults/worker-kill faults/node-down faults/node-backlog-gone faults/blackhole-node faults/mariadb-restart faults/sentinel-failover)
case $mode in
quick) checks=("${@:-${QUICK[@]}}") ;;
chaos) checks=("${@:-${CHAOS[@]}}") ;;
soak) checks=() ;;
*) echo "usage: $0 quick|chaos|soak [CHECK...]" >&2; exit 2 ;;
esac
export REL_RESULTS_DIR=${REL_RESULTS_DIR:-$STACK_REPO/.results/reliability}

source testkit/stack.sh
source testkit/report.sh
export DEMO_POSTS=${REL_DEMO_POSTS:-60} WP_CRON_INTERVAL=2

rc=1
teardown() { if ((rc != 0)); then temp_stack_down keep-logs; else temp_stack_down; fi; }
trap teardown EXIT
trap 'exit 130' INT TERM

temp_stack_up "reliability-$mode" || { report "the stack starts" 1; report_end; exit; }
# The purger processes the checks start run a private copy of the build stack/up.sh made.
mkdir -p "$STACK_DIR/purger"
cp -r purger/dist purger/package.json "$STACK_DIR/purger/" && ln -sfn "$STACK_REPO/purger/node_modules" "$STACK_DIR/purger/node_modules"
export REL_PURGER_MAIN=$STACK_DIR/purger/dist/main.js
REL_APP_PASSWORD=$(stack/prepare-wordpress.sh app-password reliability) || { echo "reliability: cannot create an application password"; exit 1; }
export REL_APP_PASSWORD

case $mode in
soak) timeout 1200 node reliability/soak.mjs; rc=$? ;;
*)
  timeout 1500 node --test-reporter=spec reliability/run.mjs "$mode" "${checks[@]}"; rc=$?
  if [[ $mode == quick && $# -eq 0 ]]; then
    reliability/fuzz/run.sh || rc=1
  fi
  ;;
esac
exit $rc
