#!/usr/bin/env bash
# hardening-check.sh CHECK: one check of the compose stack's origin hardening, run by
# tests/compose/live-test.sh against a running project (COMPOSE_PROJECT_NAME, COMPOSE_FILE, and
# E2E_EDGE / E2E_ORIGIN: Varnish's and WordPress's addresses on the backend network, SITE_HOST).
#   secrets         no admin password in the wordpress and wp-cron containers (no file, no process
#                   environment), no webhook secret in any of their processes' environment
#   client-address  an anonymous comment through Varnish is recorded with the client's address
#                   (the host, the backend network's gateway), not Varnish's, even with a forged
#                   X-Forwarded-For, and is held for moderation; straight to the origin a forged
#                   X-Forwarded-For is ignored
#   uploads-php     a .php file in the uploads volume is refused (403), never executed, at the
#                   edge and at the origin
#   cron-xmlrpc     /wp-cron.php and /xmlrpc.php are refused at the edge and at the origin
# Prints what it saw; exits non-zero on the first failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
die() { echo "  FAIL: $*"; exit 1; }
ctl=stack/compose/ctl.sh
: "${E2E_EDGE:?} ${E2E_ORIGIN:?} ${SITE_HOST:?}"

case ${1:-} in
secrets)
  admin=$("$ctl" secret admin_password) || die "cannot read the admin password"
  hook=$("$ctl" secret webhook_secret) || die "cannot read the webhook secret"
  ((${#admin} >= 16 && ${#hook} >= 16)) || die "the secrets read back too short: the check could not fail"
  for svc in wordpress wp-cron; do
    files=$(docker compose exec -T "$svc" ls /run/secrets) || die "cannot list /run/secrets in $svc"
    echo "  $svc /run/secrets: $(echo "$files" | tr '\n' ' ')"
    grep -qx admin_password <<<"$files" && die "$svc has the admin password (/run/secrets/admin_password)"
    # Every process's environment (PID 1, php-fpm's master and workers, nginx), as the container's user.
    environ=$(docker compose exec -T "$svc" sh -c 'for f in /proc/[0-9]*/environ; do tr "\0" "\n" <"$f" 2>/dev/null; done; env')
    [[ $environ == *PATH=* ]] || die "read no environment in $svc: the check could not fail"
    [[ $environ == *"$admin"* ]] && die "the admin password is in a process environment in $svc"
    [[ $environ == *"$hook"* ]] && die "the webhook secret is in a process environment in $svc"
    echo "  $svc: no admin password or webhook secret in $(grep -c '^PATH=' <<<"$environ") process environments"
  done
  ;;
client-address)
  net=${COMPOSE_PROJECT_NAME}_backend
  # This host's address on the bridge: where its requests come from.
  netid=$(docker network inspect -f '{{.Id}}' "$net") || die "no network $net"
  gateway=$(ip -o -4 addr show dev "br-${netid:0:12}" | awk '{print $4}' | cut -d/ -f1 | head -n 1)
  [[ -n $gateway ]] || die "no address of this host on $net"
  varnish_ip=${E2E_EDGE#http://}; varnish_ip=${varnish_ip%:*}
  post=$("$ctl" sql "SELECT ID FROM wp_posts WHERE post_type='post' AND post_status='publish' AND comment_status='open' ORDER BY ID LIMIT 1")
  [[ $post =~ ^[0-9]+$ ]] || die "no published post open to comments"
  # comment BASE XFF MARKER: an anonymous comment; prints "<author IP> <approved>".
  comment() {
    local code
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 -H "Host: $SITE_HOST" -H "X-Forwarded-For: $2" \
      --data-urlencode "comment_post_ID=$post" --data-urlencode "author=Hardening $3" \
      --data-urlencode "email=$3@example.com" --data-urlencode "comment=Client address check $3" "$1/wp-comments-post.php")
    [[ $code == 302 ]] || { echo "POST $1/wp-comments-post.php answered $code" >&2; return 1; }
    "$ctl" sql "SELECT comment_author_IP, comment_approved FROM wp_comments WHERE comment_content = 'Client address check $3'"
  }
  m=h$RANDOM$RANDOM
  got=$(comment "$E2E_EDGE" 203.0.113.7 "${m}e") || die "the comment through Varnish was not taken"
  echo "  through Varnish ($varnish_ip) from $gateway, X-Forwarded-For 203.0.113.7: comment_author_IP, approved = $got"
  read -r ip approved <<<"$got"
  [[ $ip == "$gateway" ]] || die "recorded $ip, not the client's address $gateway"
  [[ $approved == 0 ]] || die "an anonymous comment was published without moderation (approved=$approved)"
  sleep 16   # WordPress refuses a second comment from one address within 15 s
  got=$(comment "$E2E_ORIGIN" 203.0.113.8 "${m}o") || die "the comment straight to the origin was not taken"
  echo "  straight to the origin from $gateway, X-Forwarded-For 203.0.113.8: comment_author_IP, approved = $got"
  read -r ip approved <<<"$got"
  [[ $ip == "$gateway" ]] || die "the origin believed a forged X-Forwarded-For from $gateway (recorded $ip)"
  ;;
uploads-php)
  docker compose exec -T wordpress sh -c 'printf "%s" "<?php echo \"exec\" . \"uted-\" . (6 * 7);" >/srv/wordpress/wp-content/uploads/hardening-probe.php' \
    || die "cannot write into the uploads volume"
  for base in "$E2E_EDGE" "$E2E_ORIGIN"; do
    out=$(curl -s --max-time 10 -w '\n%{http_code}' -H "Host: $SITE_HOST" "$base/wp-content/uploads/hardening-probe.php?$RANDOM")
    code=${out##*$'\n'}
    echo "  $base/wp-content/uploads/hardening-probe.php: $code"
    [[ $out != *executed-42* ]] || { docker compose exec -T wordpress rm -f /srv/wordpress/wp-content/uploads/hardening-probe.php; die "PHP in uploads was executed ($base)"; }
    [[ $code == 403 || $code == 404 ]] || die "answered $code, not 403/404 ($base)"
  done
  docker compose exec -T wordpress rm -f /srv/wordpress/wp-content/uploads/hardening-probe.php
  ;;
cron-xmlrpc)
  for path in /wp-cron.php /xmlrpc.php; do
    for base in "$E2E_EDGE" "$E2E_ORIGIN"; do
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 -H "Host: $SITE_HOST" "$base$path?doing_wp_cron=$RANDOM")
      echo "  $base$path: $code"
      [[ $code == 403 ]] || die "$path answered $code at $base, not 403"
    done
  done
  ;;
*) echo "usage: $0 secrets|client-address|uploads-php|cron-xmlrpc" >&2; exit 2 ;;
esac
