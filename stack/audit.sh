#!/usr/bin/env bash
# make audit [AUDIT_ARGS=...]: the stale-page audit (stack/audit/audit.mjs). Without arguments
# it audits the native stack under $STACK_DIR (the site's URLs plus every URL in Varnish's
# request log); with arguments it passes them on, e.g.
#   make audit AUDIT_ARGS="--site https://example.com --edge http://10.0.0.2:6081 --origin http://10.0.0.3:8080"
set -euo pipefail
source "$(dirname "$0")/lib.sh"
if (($# == 0)); then
  is_running varnish || die "the native stack is not running (make up), or pass --site/--origin in AUDIT_ARGS"
  set -- --site "$SITE_URL" --edge "http://127.0.0.1:$VARNISH_PORT" --origin "http://127.0.0.1:$WEB_PORT"
  # Besides the site's own URL list: every page anonymous visitors fetched through this Varnish
  # that is still in its shared-memory log (what it may hold), minus admin and API paths.
  urls=$(mktemp); trap 'rm -f "$urls"' EXIT
  timeout 60 varnishncsa -d -n "$STACK_DIR/varnish" -F '%m %U%q' 2>/dev/null \
    | awk '$1 == "GET" { print $2 }' \
    | grep -Ev '^/(wp-admin|wp-login\.php|wp-cron\.php|wp-json|xmlrpc\.php)|[?&](preview|_wpnonce)=' \
    | sort -u | head -n 5000 >"$urls" || true
  set -- "$@" --urls "$urls"
fi
node "$STACK_REPO/stack/audit/audit.mjs" "$@"
