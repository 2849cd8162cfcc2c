#!/usr/bin/env bash
# make down: stops every process of the stack under $STACK_DIR (data is kept).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
[[ -d $RUN_DIR ]] || { log "nothing runs under $STACK_DIR"; exit 0; }
for ((i = ${#STACK_SERVICES[@]} - 1; i >= 0; i--)); do
  svc=${STACK_SERVICES[i]}
  if is_running "$svc"; then log "stopping $svc"; fi
  "$STACK_REPO/stack/services/$svc.sh" stop
done
log "stopped (data kept in $STACK_DIR; remove it for a fresh start)"
