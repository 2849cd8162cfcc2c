#!/usr/bin/env bash
# make audit [AUDIT_ARGS=...]: the stale-page audit (stack/audit/audit.mjs). Without arguments
# it audits the native stack under $STACK_DIR; with arguments it passes them on, e.g.
#   make audit AUDIT_ARGS="--site https://example.com --edge http://10.0.0.2:6081 --origin http://10.0.0.3:8080"
set -euo pipefail
source "$(dirname "$0")/lib.sh"
if (($# == 0)); then
  is_running varnish || die "the native stack is not running (make up), or pass --site/--origin in AUDIT_ARGS"
  set -- --site "$SITE_URL" --edge "http://127.0.0.1:$VARNISH_PORT" --origin "http://127.0.0.1:$WEB_PORT"
fi
exec node "$STACK_REPO/stack/audit/audit.mjs" "$@"
