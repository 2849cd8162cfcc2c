#!/usr/bin/env bash
# The compose TLS front's entry point (stack/images/tls): checks the certificate the user mounts,
# then runs hitch in the foreground: HTTPS on :8443 (compose publishes it as 443), HTTP/2 and
# HTTP/1.1 by ALPN, TLS 1.2 and 1.3 only, each connection handed to Varnish with a PROXY v2 header
# (Varnish's `-a https=:8443,PROXY` listener: X-Forwarded-Proto https, the reader's address).
#
#   start.sh serve    check, write hitch's PEM and configuration to /tmp (the tmpfs), exec hitch
#   start.sh reload   after renewing the certificate: check again and have hitch load it without
#                     dropping connections (docker compose exec tls /opt/varnish-edge/start.sh reload)
#   start.sh health   the healthcheck: a TLS handshake on 127.0.0.1:8443 completes
#
# Settings (docker-compose.yml):
#   TLS_CERT     the certificate with its chain (default fullchain.pem), a file name under /certs
#                (the directory the user mounts read-only, TLS_CERTS_DIR) or an absolute path
#   TLS_KEY      its private key, unencrypted (default privkey.pem), likewise
#   TLS_BACKEND  Varnish's PROXY listener, HOST:PORT (default varnish:8443); looked up again every
#                2 s (backend-refresh), so a recreated Varnish container (new address) is found.
#                While the name does not resolve at all (Varnish removed, not yet recreated) hitch
#                1.8 exits; compose's restart policy starts this again, and it waits up to 60 s
#                for the name before starting hitch.
# A missing or unreadable file, a key that is not the certificate's, an expired certificate: no
# start, one line naming the setting.
set -euo pipefail
certs=/certs
run=/tmp/hitch
port=8443
TLS_CERT=${TLS_CERT:-fullchain.pem}
TLS_KEY=${TLS_KEY:-privkey.pem}
TLS_BACKEND=${TLS_BACKEND:-varnish:8443}
# Mozilla's "intermediate" TLS 1.2 suites without DHE (no dhparam in the PEM): forward secrecy, AEAD
# only, none on HTTP/2's block list. TLS 1.3 keeps OpenSSL's suites.
ciphers=ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305

die() { printf 'tls: %s\n' "$*" >&2; exit 1; }
log() { printf 'tls: %s\n' "$*" >&2; }

# file SETTING VALUE: the path VALUE names (under /certs unless absolute), readable; else die.
file() {
  local setting=$1 path=$2
  [[ $path == /* ]] || path=$certs/$path
  if [[ -L $path && ! -e $path ]]; then
    die "$setting=$path links to $(readlink "$path"), which is not in the container: mount the directory holding the real files at /certs (for Let's Encrypt, /etc/letsencrypt, with $setting=/certs/live/<domain>/...)"
  elif [[ ! -e $path ]]; then
    die "$setting=$path is missing: mount your certificate directory at /certs (docker-compose.yml TLS_CERTS_DIR)"
  elif [[ ! -f $path ]]; then
    die "$setting=$path is not a file"
  elif [[ ! -r $path ]]; then
    die "$setting=$path is not readable by this container's user (uid $(id -u), gid $(id -g)): give it read access (chgrp $(id -g) and chmod 640, or setfacl -m u:$(id -u):r)"
  fi
  echo "$path"
}

# check: TLS_CERT and TLS_KEY usable together; sets cert and key (their paths), end (the
# certificate's last day) and subject (its names).
check() {
  cert=$(file TLS_CERT "$TLS_CERT")
  key=$(file TLS_KEY "$TLS_KEY")
  local cert_pub key_pub
  cert_pub=$(openssl x509 -in "$cert" -noout -pubkey 2>/dev/null) ||
    die "TLS_CERT=$cert holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
  # -passin pass: an encrypted key fails here instead of asking for its passphrase.
  key_pub=$(openssl pkey -in "$key" -passin pass: -pubout 2>/dev/null) ||
    die "TLS_KEY=$key holds no unencrypted PEM private key (-----BEGIN PRIVATE KEY-----; hitch cannot ask for a passphrase)"
  [[ $cert_pub == "$key_pub" ]] ||
    die "TLS_KEY=$key is not the key of the certificate in TLS_CERT=$cert (their public keys differ): mount the key issued with that certificate"
  end=$(openssl x509 -in "$cert" -noout -enddate | sed 's/^notAfter=//')
  openssl x509 -in "$cert" -noout -checkend 0 >/dev/null ||
    die "TLS_CERT=$cert expired on $end: renew it, then restart this service"
  openssl x509 -in "$cert" -noout -checkend $((14 * 86400)) >/dev/null ||
    log "TLS_CERT=$cert expires on $end: renew it soon (then: start.sh reload)"
  if [[ $(grep -c -- '-----BEGIN CERTIFICATE-----' "$cert") == 1 &&
    $(openssl x509 -in "$cert" -noout -subject -nameopt RFC2253 | sed 's/^subject=//') != \
    $(openssl x509 -in "$cert" -noout -issuer -nameopt RFC2253 | sed 's/^issuer=//') ]]; then
    log "TLS_CERT=$cert holds the certificate alone, without its intermediate: browsers may refuse it (use fullchain.pem)"
  fi
  subject=$(openssl x509 -in "$cert" -noout -ext subjectAltName 2>/dev/null | sed -n 's/^ *//p' | tail -n 1)
  [[ -n $subject ]] || subject=$(openssl x509 -in "$cert" -noout -subject | sed 's/^subject=//')
}

# pem: hitch's one file, the key then the certificate and its chain, mode 600 on the tmpfs.
pem() {
  (umask 077 && mkdir -p "$run/ocsp")
  (
    umask 077
    if [[ $key -ef $cert ]]; then cat "$cert"; else cat "$key" "$cert"; fi >"$run/site.pem.new"
  )
  mv "$run/site.pem.new" "$run/site.pem"
}

# backend: TLS_BACKEND as hitch writes it ("[HOST]:PORT"), once its name resolves.
backend() {
  local host port until=$((SECONDS + 60))
  if [[ $TLS_BACKEND =~ ^\[([0-9A-Fa-f:.]+)\]:([0-9]{1,5})$ || $TLS_BACKEND =~ ^([A-Za-z0-9._-]+):([0-9]{1,5})$ ]]; then
    host=${BASH_REMATCH[1]} port=${BASH_REMATCH[2]}
  else
    die "TLS_BACKEND=$TLS_BACKEND is not HOST:PORT (Varnish's PROXY listener, e.g. varnish:8443)"
  fi
  ((10#$port >= 1 && 10#$port <= 65535)) || die "TLS_BACKEND=$TLS_BACKEND: port outside 1-65535"
  until getent ahosts "$host" >/dev/null; do
    ((SECONDS < until)) ||
      die "TLS_BACKEND=$TLS_BACKEND: '$host' does not resolve from this container (the Varnish service's name on a network both share)"
    sleep 1
  done
  echo "[$host]:$((10#$port))"
}

config() {
  local be=$1
  (
    umask 077
    cat >"$run/hitch.conf.new" <<CONF
frontend = "[*]:$port"
backend = "$be"
pem-file = "$run/site.pem"
write-proxy-v2 = on
alpn-protos = "h2,http/1.1"
tls-protos = TLSv1.2 TLSv1.3
ciphers = "$ciphers"
prefer-server-ciphers = off
backend-refresh = 2
backend-connect-timeout = 5
workers = $(nproc)
ocsp-dir = "$run/ocsp"
daemon = off
syslog = off
log-level = 1
CONF
  )
  mv "$run/hitch.conf.new" "$run/hitch.conf"
}

case ${1:-serve} in
serve)
  check
  be=$(backend)
  pem
  config "$be"
  log "HTTPS on :$port (h2, http/1.1; TLS 1.2, 1.3) for $subject, valid until $end; PROXY v2 to $be (TLS_BACKEND)"
  exec hitch --config="$run/hitch.conf" --pidfile="$run/hitch.pid"
  ;;
reload)
  check
  [[ -s $run/hitch.pid ]] || die "hitch is not running here (no $run/hitch.pid)"
  pem
  kill -HUP "$(cat "$run/hitch.pid")"
  log "reloading with TLS_CERT=$cert (valid until $end)"
  ;;
health)
  timeout 5 openssl s_client -connect "127.0.0.1:$port" -brief </dev/null >/dev/null 2>&1 ||
    { echo "no TLS handshake on 127.0.0.1:$port"; exit 1; }
  ;;
*) die "usage: start.sh serve | reload | health" ;;
esac
