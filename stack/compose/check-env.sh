#!/bin/sh
# docker compose "preflight": refuses to start the stack while .env holds the placeholders of
# .env.example or secrets too short to be generated ones. Names the variable, never its value.
fail=0
for v in DB_PASSWORD REDIS_PASSWORD WEBHOOK_SECRET OPERATOR_TOKEN ADMIN_PASSWORD VARNISH_PURGE_TOKEN; do
  val=""; eval "val=\${$v:-}"
  case "$val" in
    "" | *CHANGE_ME* | *change_me* | *changeme*)
      echo "preflight: $v still holds the placeholder from .env.example: run stack/gen-env.sh" >&2
      fail=1; continue ;;
  esac
  [ "${#val}" -ge 16 ] || { echo "preflight: $v is shorter than 16 characters: run stack/gen-env.sh" >&2; fail=1; }
done
case "${WEBHOOK_SECRET:-}" in
  whsec_*) ;;
  *) echo "preflight: WEBHOOK_SECRET must be whsec_<base64 of 32 random bytes>" >&2; fail=1 ;;
esac
[ "$fail" = 0 ] && echo "preflight: .env secrets look generated"
exit "$fail"
