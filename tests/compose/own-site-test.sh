#!/usr/bin/env bash
# The edge in front of a WordPress this project did not build, as README.md tells a new user to do
# it (make test-compose, after live-test.sh). The README's own blocks are run or applied, so the
# two cannot drift (between <!-- own-site:...:begin/end --> markers):
#   - a stock WordPress: Debian 13's package with its documented configuration, its own nginx,
#     PHP and MariaDB, no project code (testdata/stock-wordpress/), serving blog.example.test on
#     the Docker host (the bridge's address), with the README's nginx and wp-config lines;
#     WordPress installed through install.php as a person would;
#   - the README's commands (own-site:commands), with the settings its .env example names
#     (ORIGIN_URL=http://host.docker.internal:<port>, SITE_HOST, SITE_SCHEME=https, a self-signed
#     certificate in TLS_CERTS_DIR, HTTPS_PORT=443 on 127.0.0.1) exported;
# then checks: HTTPS with HTTP/2 through the TLS front, plain HTTP redirected, anonymous pages
# cached (the origin's access log), the reader's address at the origin, the plugin installed
# from make dist's zip through Upload Plugin in Chromium over HTTPS through the edge (logged in:
# wp-admin works), its settings pasted from `secrets plugin`, the connection test, Site Health's
# page-cache check, a Quick Edit fresh at the edge, and `docker compose down` leaving the site
# serving as before. Prints the time from the README's first command to the edit being fresh
# (.results/compose/own-site.json). Port 443 on 127.0.0.1 must be free.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source testkit/docker.sh
source testkit/stack.sh
source testkit/report.sh
finish() { report_end; exit; }

docker_ready || { report "a Docker engine answers" 1; finish; }
docker_base || { report "debian:trixie-slim (debootstrap)" 1; finish; }

domain=blog.example.test
stock=vetest-stock-$$
export COMPOSE_PROJECT_NAME=vetest-own-$$ COMPOSE_FILE=docker-compose.yml COMPOSE_PROFILES=""
work=$(mktemp -d)
chmod 755 "$work"
ok=0
teardown() {
  if ((!ok)); then
    echo "──── logs"
    docker compose --profile tls logs --no-color --tail 20 2>&1 | grep -v '"GET ' | tail -n 60
    docker logs --tail 20 "$stock" 2>&1 | tail -n 20
  fi
  docker compose --profile tls down -v --remove-orphans >/dev/null 2>&1
  docker rm -f "$stock" >/dev/null 2>&1
  rm -rf "$work"
}
trap teardown EXIT
trap 'exit 130' INT TERM

# block NAME: the README's lines between <!-- own-site:NAME:begin --> and its end, fences dropped.
block() {
  awk -v b="<!-- own-site:$1:begin -->" -v e="<!-- own-site:$1:end -->" \
    '$0 == b { on = 1; next } $0 == e { on = 0 } on && !/^```/' README.md
}
for name in commands nginx php; do
  [[ -n $(block "$name") ]] || { report "README.md has the own-site:$name block" 1; finish; }
done

if ! (exec 3<>/dev/tcp/127.0.0.1/443) 2>/dev/null; then :; else
  report "port 443 on 127.0.0.1 is free (the site is https://$domain/)" 1; finish
fi

docker_image varnish-edge-test/stock-wordpress:trixie testdata/stock-wordpress/Dockerfile >/dev/null ||
  { report "the stock WordPress image builds" 1; finish; }
# The bridge's address on the host: its IPAM config names it when the daemon recorded it (Debian
# 12's Docker 20.10 does not, on a daemon started afresh), else it is the address of the bridge's
# interface (docker0).
gw=$(docker network inspect bridge -f '{{range .IPAM.Config}}{{.Gateway}}{{end}}')
if [[ -z $gw ]]; then
  bridge_if=$(docker network inspect bridge -f '{{index .Options "com.docker.network.bridge.name"}}')
  gw=$(python3 -c 'import fcntl, socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print(socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, struct.pack("256s", sys.argv[1].encode()))[20:24]))' "${bridge_if:-docker0}")
fi
[[ $gw =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || { report "the Docker bridge's address on this host (got '$gw')" 1; finish; }
read -r origin_port varnish_port purger_port < <(free_ports 3)
origin=http://$gw:$origin_port

# The site, on the Docker host: nginx on the bridge's address (reachable from containers as
# host.docker.internal), WordPress's own loopbacks to its domain going through the edge on
# 127.0.0.1:443 as a real site's DNS would send them.
block nginx >"$work/origin-extra.conf"
docker run -d --name "$stock" --network host --add-host "$domain:127.0.0.1" -e SITE_DOMAIN=$domain \
  -e LISTEN="$gw:$origin_port" -v "$work/origin-extra.conf:/etc/nginx/origin-extra.conf:ro" \
  varnish-edge-test/stock-wordpress:trixie >/dev/null
wait_until 90 "the stock WordPress on $origin" sh -c "curl -s -o /dev/null -H 'Host: $domain' '$origin/wp-admin/install.php'"
# The README's wp-config lines, in Debian's per-site config file before its closing tag.
block php >"$work/origin-extra.php"
docker cp "$work/origin-extra.php" "$stock:/tmp/origin-extra.php"
docker exec "$stock" sh -c "sed -i -e '/^?>/{r /tmp/origin-extra.php' -e 'd}' /etc/wordpress/config-$domain.php && echo '?>' >>/etc/wordpress/config-$domain.php"
wp_pass=Own-site-$RANDOM$RANDOM-pass
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Host: $domain" -H 'X-Forwarded-Proto: https' \
  --data-urlencode "weblog_title=Stock blog $$" --data-urlencode user_name=editor \
  --data-urlencode "admin_password=$wp_pass" --data-urlencode "admin_password2=$wp_pass" \
  --data-urlencode pw_weak=1 --data-urlencode admin_email=editor@example.test --data-urlencode blog_public=0 \
  "$origin/wp-admin/install.php?step=2")
home=$(docker exec "$stock" mariadb wordpress -N -e "SELECT option_value FROM wp_options WHERE option_name = 'home'")
echo "  install.php: $code, home $home"
[[ $code == 200 && $home == "https://$domain" ]]
report "a stock WordPress (Debian 13's package and its documented configuration) installed at https://$domain" $? || finish
before=$(curl -s -H "Host: $domain" -H 'X-Forwarded-Proto: https' "$origin/")

# What the site's own files are before the edge: compared after docker compose down.
docker exec "$stock" touch /tmp/before-edge
# The README's commands, with the settings its .env example names.
openssl req -x509 -newkey rsa:2048 -nodes -days 7 -subj "/CN=$domain" -addext "subjectAltName=DNS:$domain" \
  -keyout "$work/privkey.pem" -out "$work/fullchain.pem" >/dev/null 2>&1
chmod 644 "$work"/*.pem
export ORIGIN_URL=http://host.docker.internal:$origin_port SITE_HOST=$domain SITE_SCHEME=https \
  TLS_CERTS_DIR=$work HTTPS_PORT=443 VARNISH_PORT=$varnish_port PURGER_PORT=$purger_port \
  PURGER_PUBLIC_URL=http://127.0.0.1:$purger_port
start=$(date +%s%N)
block commands >"$work/commands.sh"
echo "  README: $(grep -c . "$work/commands.sh") commands"
bash -e "$work/commands.sh" >"$work/commands.out" 2>&1
rc=$?
((rc)) && tail -n 20 "$work/commands.out"
report "the README's commands bring the edge up in front of it ($((($(date +%s%N) - start) / 1000000000)) s)" $rc || finish
purger_url=$(sed -n 's/^ *Purger URL: *//p' "$work/commands.out")
secret=$(sed -n 's/^ *Webhook secret: *//p' "$work/commands.out")
[[ $purger_url == "$PURGER_PUBLIC_URL" && $secret == whsec_* ]]
report "secrets plugin printed the plugin's two settings" $? || finish

edge=(--resolve "$domain:443:127.0.0.1" -k)
got=$(curl -s "${edge[@]}" -o "$work/home.html" -w '%{http_code} HTTP/%{http_version}' "https://$domain/")
echo "  https://$domain/ through the TLS front: $got"
[[ $got == "200 HTTP/2" ]] && grep -q "Stock blog $$" "$work/home.html"
report "HTTPS through the TLS front with HTTP/2: the site's home page" $?
got=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -H "Host: $domain" "http://127.0.0.1:$varnish_port/?p=1")
echo "  plain http://$domain/?p=1: $got"
[[ $got == "301 https://$domain/?p=1" ]]
report "plain HTTP is redirected to HTTPS" $?

# Anonymous pages are cached: the same URL twice, one request in the origin's log; the reader's
# address there is not Varnish's (X-Forwarded-For believed, README's nginx lines).
url="/?own-site-cache=$RANDOM$RANDOM"
for _ in 1 2 3; do curl -s -o /dev/null "${edge[@]}" "https://$domain$url"; done
log=$(docker exec "$stock" grep -F "GET $url " /var/log/nginx/access.log)
varnish_ips=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}' "$(docker compose ps -q varnish)")
echo "  origin's log for 3 readers of $url: $(grep -c . <<<"$log") request(s), from ${log%% *} (Varnish is $varnish_ips)"
[[ $(grep -c . <<<"$log") == 1 ]]
report "anonymous pages are cached: three readers, one origin request" $?
[[ -n $log && " $varnish_ips " != *" ${log%% *} "* ]]
report "the origin sees the reader's address, not Varnish's" $?

# The plugin from make dist's zip, configured from `secrets plugin`, in Chromium through the edge.
dist=$(scripts/dist.sh) || { report "make dist builds the plugin's zip" 1; finish; }
zip=$(sed -n 's/^dist: \([^:]*\.zip\): .*/\1/p' <<<"$dist")
[[ $zip == /* ]] || zip=$PWD/$zip
post=$(docker exec "$stock" mariadb wordpress -N -e "SELECT ID FROM wp_posts WHERE post_type = 'post' AND post_status = 'publish' ORDER BY ID LIMIT 1")
post_url=$(docker exec "$stock" mariadb wordpress -N -e "SELECT guid FROM wp_posts WHERE ID = $post")
post_path=/${post_url#https://"$domain"/}
for _ in 1 2; do curl -s -o /dev/null "${edge[@]}" "https://$domain$post_path"; done
title="Edited through the edge $$"
browser_kit || { report "the browser kit installs" 1; finish; }
out=$(cd wordpress-plugin/tests/browser && env CHROMIUM_RESOLVE="$domain:127.0.0.1" WP_URL="https://$domain" \
  WP_USER=editor WP_PASS="$wp_pass" ZIP="$zip" PURGER_URL="$purger_url" SECRET="$secret" \
  NAMESPACE=own1 POST_ID="$post" NEW_TITLE="$title" timeout 300 node install-from-zip.mjs 2>&1)
rc=$?
saved=$(date +%s%N)
json=${out##*$'\n'}
echo "  install-from-zip.mjs: $json" | cut -c 1-1500
((rc)) && echo "$out" | tail -n 20
step() { node -e 'const r = JSON.parse(process.argv[1]); const v = process.argv[2].split(".").reduce((o, k) => o?.[k], r); console.log(typeof v === "string" ? v : JSON.stringify(v ?? null))' "$json" "$1" 2>/dev/null; }
[[ $rc == 0 ]]
report "Upload Plugin, activate, settings pasted, connection tested, Quick Edit: in Chromium over HTTPS through the edge (logged in, wp-admin bypasses the cache)" $?
[[ $(step test_notice) == *"Connection OK"* ]]
report "Test connection: the purger answers and accepts $domain" $?
page_cache=$(step page_cache.text)
[[ $(step page_cache.in) == health-check-issues-good ]]
report "Site Health's page-cache check passes ($page_cache)" $?

# fresh_after TITLE SAVED_NS: ms from SAVED_NS until the post page at the edge shows TITLE (30 s at most).
fresh_after() {
  local _
  for _ in $(seq 1 300); do
    if curl -s "${edge[@]}" "https://$domain$post_path" | grep -qF "$1"; then
      echo $((($(date +%s%N) - $2) / 1000000)); return 0
    fi
    sleep 0.1
  done
  return 1
}
# The Quick Edit: the page was cached before the plugin came (a microcached copy, untagged).
first_ms=$(fresh_after "$title" "$saved")
echo "  Quick Edit → post page fresh at the edge: ${first_ms:-never (30 s)} ms after the browser's run ended"
[[ -n $first_ms ]]
report "the Quick Edit is fresh at the edge" $?
# An editor's next save, the page now cached with the plugin's keys for a week: the REST API as
# the block editor calls it, logged in through the edge (cookie and nonce), then timed to fresh.
for _ in 1 2; do curl -s -o /dev/null "${edge[@]}" "https://$domain$post_path"; done
jar=$work/cookies
curl -s -o /dev/null "${edge[@]}" -c "$jar" "https://$domain/wp-login.php"
curl -s -o /dev/null "${edge[@]}" -b "$jar" -c "$jar" --data-urlencode log=editor --data-urlencode "pwd=$wp_pass" \
  --data-urlencode testcookie=1 "https://$domain/wp-login.php"
nonce=$(curl -s "${edge[@]}" -b "$jar" "https://$domain/wp-admin/admin-ajax.php?action=rest-nonce")
title2="Saved again through the edge $$"
code=$(curl -s -o /dev/null -w '%{http_code}' "${edge[@]}" -b "$jar" -H "X-WP-Nonce: $nonce" \
  --data-urlencode "title=$title2" "https://$domain/?rest_route=/wp/v2/posts/$post")
saved=$(date +%s%N)
fresh_ms=""
[[ $code == 200 ]] && fresh_ms=$(fresh_after "$title2" "$saved")
echo "  REST save (HTTP $code) → post page fresh at the edge: ${fresh_ms:-never (30 s)} ms"
[[ -n $fresh_ms ]]
report "an editor's save through the edge is fresh at the edge" $?
total=$((($(date +%s%N) - start) / 1000000000))
wp_version=$(docker exec "$stock" sed -n "s/^\$wp_version = '\(.*\)';/\1/p" /usr/share/wordpress/wp-includes/version.php)
mkdir -p .results/compose
read -r l1 l5 l15 _ </proc/loadavg
printf '{"date":"%s","machine":{"cores":%s,"cpu":"%s","loadavg":[%s,%s,%s]},"wordpress":"%s","readme_first_command_to_fresh_edit_s":%s,"quick_edit_to_fresh_ms":%s,"save_to_fresh_ms":%s}\n' \
  "$(date -u +%FT%TZ)" "$(nproc)" "$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)" "$l1" "$l5" "$l15" "$wp_version" \
  "$total" "${first_ms:-null}" "${fresh_ms:-null}" >.results/compose/own-site.json
echo "  from the README's first command to a fresh edit: $total s, WordPress $wp_version (.results/compose/own-site.json)"

# docker compose down: the site serves as before, straight from its own server.
docker compose --profile tls down -v >/dev/null 2>&1
after=$(curl -s -H "Host: $domain" -H 'X-Forwarded-Proto: https' "$origin/")
changed=$(docker exec "$stock" find /etc/wordpress /etc/nginx /usr/share/wordpress -newer /tmp/before-edge -type f)
[[ -z $changed ]] || echo "  changed since the edge came up: $changed"
[[ $after == *"Stock blog $$"* && ${#after} -gt 1000 && -z $changed ]]
report "docker compose down leaves the site serving as before ($(( ${#before} )) → $(( ${#after} )) bytes), its files untouched" $?
((REPORT_FAILED == 0)) && ok=1
finish
