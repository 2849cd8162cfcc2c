#!/usr/bin/env bash
# The platform matrix (scripts/platforms.sh): the versions platforms.json claims that the other
# suites, which run on this host, do not reach: Varnish 7.7 and 9.0, WordPress 7.1 or later (what Debian sid serves), Debian 13,
# Node.js 26, Redis 8 and Valkey. make test-platforms runs every cell, the host's too.
exec "$(dirname "$0")/../platforms.sh" ${PLATFORMS_ALL:+--all}
