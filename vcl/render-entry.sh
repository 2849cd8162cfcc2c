#!/usr/bin/env bash
# render-entry.sh: prints an entry VCL rendered from vcl/entry.vcl.in, the one template of every
# entry in this repository (vcl/default.vcl, the native stack's, the tests', make bench's).
#
#   render-entry.sh --backend HOST:PORT --token-file PATH [--purgers "ADDR ..."] [--include PATH]...
#                   [--probe-host HOST[:PORT]] [--probe-path PATH] [--probe-https] [--purge-listener]
#       the origin HOST:PORT with its probe and unprobed twin, `acl purgers` (addresses or
#       ADDR/BITS, space-separated; default "127.0.0.1 ::1"; "" admits no one), the purger's
#       token read from PATH (the VCL refuses to load without a usable one), each --include
#       before microcache.vcl. The probe asks GET --probe-path (default /robots.txt) with
#       Host: --probe-host (default localhost: the site's host for a stock WordPress, which
#       redirects other hosts to its own) and, with --probe-https, X-Forwarded-Proto: https (a site
#       whose home URL is https:// redirects plain HTTP). --purge-listener includes
#       microcache/purge-listener.vcl before the other includes: PURGE, PURGEKEYS, BAN and refreshes
#       only on varnishd's listen address named purge (-a purge=:PORT), nothing else there.
#   --minimal --backend HOST:PORT --include PATH...: the origin and the includes only, no
#       microcache.vcl (make bench's reference, bench/minimal-varnish.vcl).
#
# Includes are absolute paths or paths under varnishd's -p vcl_path (the repository's vcl/).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
template=$here/entry.vcl.in

die() { printf 'render-entry: %s\n' "$*" >&2; exit 2; }
usage() { die "usage: render-entry.sh --backend HOST:PORT --token-file PATH [--purgers \"ADDR ...\"] [--include PATH]... [--probe-host HOST[:PORT]] [--probe-path PATH] [--probe-https] [--purge-listener] | --minimal --backend HOST:PORT [--include PATH]..."; }

backend="" token="" minimal=0 purgers="127.0.0.1 ::1" purgers_set=0
probe_host=localhost probe_path=/robots.txt probe_https=0 purge_listener=0
includes=() shown=()
while (($#)); do
  case $1 in
    --backend | --token-file | --purgers | --include | --probe-host | --probe-path)
      (($# >= 2)) || die "$1 needs a value"
      case $1 in
        --backend) backend=$2 ;;
        --token-file) token=$2 ;;
        --purgers) purgers=$2 purgers_set=1 ;;
        --include) includes+=("$2") ;;
        --probe-host) probe_host=$2 ;;
        --probe-path) probe_path=$2 ;;
      esac
      shown+=("$1" "$2")
      shift 2
      ;;
    --minimal) minimal=1 shown+=("$1"); shift ;;
    --probe-https) probe_https=1 shown+=("$1"); shift ;;
    --purge-listener) purge_listener=1 shown+=("$1"); shift ;;
    -h | --help) usage ;;
    *) die "unknown argument '$1'" ;;
  esac
done

[[ -n $backend ]] || usage
if [[ $backend =~ ^\[([0-9A-Fa-f:.]+)\]:([0-9]{1,5})$ || $backend =~ ^([A-Za-z0-9.-]+):([0-9]{1,5})$ ]]; then
  host=${BASH_REMATCH[1]} port=${BASH_REMATCH[2]}
else
  die "--backend '$backend' is not HOST:PORT (a host name or IPv4 address, or [IPv6]:PORT)"
fi
((10#$port >= 1 && 10#$port <= 65535)) || die "--backend '$backend': port outside 1-65535"

# Both go into the probe's request text: nothing that could end a line or a VCL string.
[[ $probe_host =~ ^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$ ]] ||
  die "--probe-host '$probe_host' is not HOST or HOST:PORT"
[[ $probe_path =~ ^/[A-Za-z0-9._~/?=\&%+-]*$ ]] ||
  die "--probe-path '$probe_path' must start with / and hold only URL characters (no spaces or quotes)"
probe_proto=""
((probe_https)) && probe_proto='            "X-Forwarded-Proto: https"'

if ((minimal)); then
  [[ -z $token && $purgers_set == 0 && $purge_listener == 0 ]] || die "--minimal takes only --backend and --include"
else
  [[ -n $token ]] || die "--token-file PATH is required"
  [[ $token =~ ^/[A-Za-z0-9._/-]+$ ]] || die "--token-file '$token' must be an absolute path without quotes or spaces"
fi

acl=""
read -ra purger_list <<<"$purgers"
for addr in "${purger_list[@]}"; do
  if [[ $addr =~ ^([0-9A-Fa-f.:]+)/([0-9]{1,3})$ ]]; then
    ((10#${BASH_REMATCH[2]} <= 128)) || die "--purgers entry '$addr': prefix length above 128"
    acl+="    \"${BASH_REMATCH[1]}\"/$((10#${BASH_REMATCH[2]}));"$'\n'
  elif [[ $addr =~ ^[0-9A-Fa-f.:]+$ && $addr =~ [.:] ]]; then
    acl+="    \"$addr\";"$'\n'
  else
    die "--purgers entry '$addr' is not an IP address or ADDR/BITS"
  fi
done

inc=""
# Its vcl_recv runs first: the purge port's readers are refused, not redirected (https-redirect.vcl).
((purge_listener)) && inc+='include "microcache/purge-listener.vcl";'$'\n'
for path in "${includes[@]}"; do
  [[ $path =~ ^[A-Za-z0-9._/-]+\.vcl$ ]] || die "--include '$path' must be a .vcl path without quotes or spaces"
  [[ $path != /* || -r $path ]] || die "--include '$path' is not a readable file"
  inc+="include \"$path\";"$'\n'
done

# The sections of the template this rendering uses, in order.
if ((minimal)); then
  sections="vcl origin"
else
  sections="head vcl origin twin purgers token tail"
fi

# The arguments as a command line, for the header (validated above: no quotes inside).
cmd=vcl/render-entry.sh
for a in "${shown[@]}"; do
  if [[ $a =~ ^[A-Za-z0-9._/:@=+-]+$ ]]; then cmd+=" $a"; else cmd+=" \"$a\""; fi
done
printf '# Generated from vcl/entry.vcl.in (edit the template, not this file) by:\n#   %s\n' "$cmd"

# Placeholders are replaced by awk from the environment: no value goes through a regex.
BACKEND_HOST=$host BACKEND_PORT=$((10#$port)) TOKEN_FILE=$token PURGERS=${acl%$'\n'} INCLUDES=${inc%$'\n'} \
  PROBE_HOST=$probe_host PROBE_PATH=$probe_path PROBE_PROTO=$probe_proto \
  awk -v sections=" $sections " '
    /^#@ / { on = index(sections, " " $2 " ") > 0; next }
    !on { next }
    $0 == "@PURGERS@" { if (ENVIRON["PURGERS"] != "") print ENVIRON["PURGERS"]; next }
    $0 == "@INCLUDES@" { if (ENVIRON["INCLUDES"] != "") print ENVIRON["INCLUDES"]; next }
    $0 == "@PROBE_PROTO@" { if (ENVIRON["PROBE_PROTO"] != "") print ENVIRON["PROBE_PROTO"]; next }
    {
      n = split("BACKEND_HOST BACKEND_PORT TOKEN_FILE PROBE_HOST PROBE_PATH", names, " ")
      for (i = 1; i <= n; i++) {
        key = "@" names[i] "@"
        while ((p = index($0, key)) > 0) $0 = substr($0, 1, p - 1) ENVIRON[names[i]] substr($0, p + length(key))
      }
      print
    }
  ' "$template"
if ((minimal)); then printf '%s' "$inc"; fi
