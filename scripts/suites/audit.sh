#!/usr/bin/env bash
# The stale-page audit's own tests (tests/audit/audit.test.mjs): fresh, stale and grace pages,
# redirects and status codes, sitemap discovery, exit status; small local servers, no stack.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
exec node --test tests/audit/audit.test.mjs
