#!/usr/bin/env bash
# The stacks' settings and secrets against their one list, stack/settings.table: .env.example is
# its rendering, stack/lib.sh's and docker-compose.yml's defaults are its defaults.
exec "$(dirname "$0")/../../stack/compose/check-env.sh"
