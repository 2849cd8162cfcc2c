#!/usr/bin/env bash
# The Helm chart (deploy/helm/varnish-edge), offline: helm lint (and --strict), then helm template with several value sets
# validated by kubeconform -strict against the vendored Kubernetes 1.37 schemas (deploy/helm/schemas), and helm
# template without origin.url must fail naming it. helm and kubeconform: scripts/install-deps.sh installs them.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
CHART=deploy/helm/varnish-edge
KUBE_VERSION=1.37.0
SCHEMAS="deploy/helm/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json"
ORIGIN=(--set origin.url=http://wordpress.example:80)

# find_tool NAME: its path: $HOME/go/bin's (install-deps' pinned build), else PATH's.
find_tool() {
  local p
  for p in "$HOME/go/bin/$1" "$(command -v "$1" || true)"; do
    [[ -n $p && -x $p ]] && { echo "$p"; return 0; }
  done
  return 1
}
helm=$(find_tool helm) || { echo "lint helm: helm not found (run scripts/install-deps.sh: it installs helm and kubeconform into \$HOME/go/bin)"; exit 1; }
kubeconform=$(find_tool kubeconform) || { echo "lint helm: kubeconform not found (run scripts/install-deps.sh: it installs helm and kubeconform into \$HOME/go/bin)"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
problems=0 sets=0
problem() { echo "lint helm: $*"; problems=$((problems + 1)); }

"$helm" lint --quiet "$CHART" "${ORIGIN[@]}" >"$tmp/lint" 2>&1 || { problem "helm lint failed:"; cat "$tmp/lint"; }
"$helm" lint --quiet --strict "$CHART" "${ORIGIN[@]}" >"$tmp/lint" 2>&1 || { problem "helm lint --strict failed:"; cat "$tmp/lint"; }

# validate NAME ARGS...: helm template with ARGS, every object through kubeconform -strict (no unknown field, no
# kind without a vendored schema).
validate() {
  local name=$1
  shift
  sets=$((sets + 1))
  if ! "$helm" template lint "$CHART" --namespace lint --kube-version "$KUBE_VERSION" "${ORIGIN[@]}" "$@" >"$tmp/out.yaml" 2>"$tmp/err"; then
    problem "helm template ($name) failed:"
    cat "$tmp/err"
    return
  fi
  if ! "$kubeconform" -strict -summary -kubernetes-version "$KUBE_VERSION" -schema-location "$SCHEMAS" "$tmp/out.yaml" >"$tmp/kc" 2>&1; then
    problem "kubeconform ($name) found invalid objects:"
    grep -v '^Summary' "$tmp/kc"
  fi
  echo "lint helm: $name: $(grep '^Summary' "$tmp/kc")"
}
validate "defaults (Valkey with Sentinel)"
validate "external Redis" --set redis.external.url=redis://redis.example:6379 --set secrets.redisPassword=lint-redis-password-0123
validate "external Redis with sentinels" --set redis.external.url=redis://redis.example:6379 \
  --set secrets.redisPassword=lint-redis-password-0123 --set secrets.redisSentinelPassword=lint-sentinel-password-0123 \
  --set 'redis.external.sentinels={s1.example:26379,s2.example:26379,s3.example:26379}' --set redis.external.sentinelMaster=mymaster
validate "networkPolicy off" --set networkPolicy.enabled=false
validate "one Valkey without Sentinel, no persistence, an existing Secret" --set valkey.sentinel.enabled=false \
  --set valkey.replicas=1 --set valkey.persistence.enabled=false --set secrets.existingSecret=my-secrets \
  --set varnish.readinessFollowsOrigin=true --set varnish.service.type=LoadBalancer
validate "another purge port, acl purgers from the routes" --set varnish.purgePort=9000 --set 'varnish.purgerNetworks=null'
# The settings that must refuse to render, each with a message naming it.
refuses() { # refuses WHAT PATTERN ARGS...: helm template with ARGS (no origin.url unless given) fails saying PATTERN
  local what=$1 pattern=$2
  shift 2
  if "$helm" template lint "$CHART" --kube-version "$KUBE_VERSION" "$@" >/dev/null 2>"$tmp/err"; then
    problem "helm template $what rendered; it must fail naming $pattern"
  elif ! grep -q -- "$pattern" "$tmp/err"; then
    problem "helm template $what failed without naming $pattern:"
    cat "$tmp/err"
  fi
}
refuses "without origin.url" "origin.url is required"
refuses "with an https origin.url" "/origin/url" --set origin.url=https://wordpress.example
refuses "with a misspelt value" "orgin" "${ORIGIN[@]}" --set orgin.url=http://x
refuses "with the purge port on the readers' port" "/varnish/purgePort" "${ORIGIN[@]}" --set varnish.purgePort=8080
refuses "with an external Redis and no password" "secrets.redisPassword is required" "${ORIGIN[@]}" \
  --set redis.external.url=redis://redis.example:6379

echo "lint helm: $CHART, $sets value sets validated (Kubernetes $KUBE_VERSION schemas), $problems problems"
((problems == 0))
