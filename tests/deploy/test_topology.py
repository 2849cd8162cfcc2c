"""docker-compose.yml, deploy/swarm/stack.yml and the Helm chart against deploy/topology.yml.

Each platform runs the same images with the same health checks, settings (names and defaults)
and secrets; this test fails naming the component, the platform and what differs. The chart is
read as `helm template` renders it (helm from scripts/install-deps.sh), with origin.url set.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


class Loader(yaml.SafeLoader):
    """YAML with compose's own tags (!reset, !override) read as null: only the values matter here."""


Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
TOPOLOGY = yaml.safe_load((ROOT / "deploy/topology.yml").read_text())["components"]
COMPOSE = yaml.load((ROOT / "docker-compose.yml").read_text(), Loader)["services"]
SWARM = yaml.safe_load((ROOT / "deploy/swarm/stack.yml").read_text())["services"]
DEFAULT = re.compile(r"\$\{[A-Z0-9_]+:-([^}]*)\}")


def helm_objects():
    helm = shutil.which("helm") or os.path.expanduser("~/go/bin/helm")
    assert os.access(helm, os.X_OK), "helm is missing: scripts/install-deps.sh installs it"
    out = subprocess.run(
        [helm, "template", "t", str(ROOT / "deploy/helm/varnish-edge"), "--kube-version", "1.37.0",
         "--set", "origin.url=http://wordpress.example:80"],
        check=True, capture_output=True, text=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


HELM = helm_objects()


def helm_workload(name):
    for d in HELM:
        if d["kind"] in ("Deployment", "StatefulSet") and d["metadata"]["name"] == f"t-varnish-edge-{name}":
            return d
    raise AssertionError(f"the chart renders no workload t-varnish-edge-{name}")


def literal(value):
    """A compose/stack value with its ${VAR:-default} resolved to the default."""
    if value is None:
        return None
    return DEFAULT.sub(lambda m: m.group(1), str(value))


def env_of(platform, service):
    if platform == "helm":
        c = helm_workload(service)["spec"]["template"]["spec"]["containers"][0]
        return {e["name"]: e.get("value") for e in c.get("env", [])}
    env = (COMPOSE if platform == "compose" else SWARM)[service].get("environment", {})
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {k: literal(v) for k, v in env.items()}


def secrets_of(platform, service):
    if platform == "swarm":
        return sorted(SWARM[service].get("secrets", []))
    if platform == "helm":
        spec = helm_workload(service)["spec"]["template"]["spec"]
        vols = [v for v in spec.get("volumes", []) if "secret" in v]
        return sorted(i["path"] for v in vols for i in v["secret"].get("items", []))
    # compose: the per-reader volume at /run/secrets, filled from stack/settings.table's READERS
    vol = next(v.split(":")[0] for v in COMPOSE[service].get("volumes", []) if ":/run/secrets" in v)
    reader = vol.removeprefix("secrets-")
    rows = [line.split() for line in (ROOT / "stack/settings.table").read_text().splitlines()
            if line and not line.startswith("#")]
    return sorted(r[0].lower() for r in rows if len(r) >= 6 and r[1] == "secret" and reader in r[5].split(","))


def image_of(platform, service):
    if platform == "helm":
        return helm_workload(service)["spec"]["template"]["spec"]["containers"][0]["image"]
    return literal((COMPOSE if platform == "compose" else SWARM)[service]["image"])


def health_of(platform, service):
    if platform == "helm":
        c = helm_workload(service)["spec"]["template"]["spec"]["containers"][0]
        probes = [c.get(p) for p in ("startupProbe", "readinessProbe", "livenessProbe") if c.get(p)]
        return [p["exec"]["command"] if "exec" in p else p["httpGet"]["path"] for p in probes]
    test = (COMPOSE if platform == "compose" else SWARM)[service]["healthcheck"]["test"]
    return [test[1:]]


CASES = [(name, platform) for name, c in TOPOLOGY.items() for platform in c["where"]]


@pytest.mark.parametrize(("component", "platform"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_same_image_health_settings_secrets(component, platform):
    c = TOPOLOGY[component]
    service = c["where"][platform]
    image = image_of(platform, service)
    assert image.split(":")[0] == c["image"], f"{component} on {platform}: image {image}, topology says {c['image']}"

    health = health_of(platform, service)
    if "health_paths" in c:
        want = c["health_paths"][platform]
        found = health if platform == "helm" else re.findall(r"/\w+z\b", " ".join(health[0]))
        assert want in found, f"{component} on {platform}: health check {health} does not ask {want}"
    else:
        assert c["health"] in health, \
            f"{component} on {platform}: health check {health}, topology says {c['health']}"

    env = env_of(platform, service)
    for name, default in c["settings"].items():
        assert name in env, f"{component} on {platform}: setting {name} is not set"
        if default is not None:
            assert env[name] == str(default), f"{component} on {platform}: {name} defaults to {env[name]!r}, topology says {default!r}"

    want = c["secrets"][platform] if isinstance(c["secrets"], dict) else c["secrets"]
    assert secrets_of(platform, service) == sorted(want), \
        f"{component} on {platform}: secrets {secrets_of(platform, service)}, topology says {sorted(want)}"


def test_every_platform_service_is_described():
    """A service added to one platform must be described here (or it runs unchecked)."""
    described = {p: {c["where"][p] for c in TOPOLOGY.values() if p in c["where"]} for p in ("compose", "swarm")}
    # replicas of a described component: valkey-2/3, valkey-sentinel-2/3, varnish-2; one-shot
    # helpers (secrets, wordpress-install) and the profiles' extras (tls, k6, wp-cron) share images
    # with described ones
    extra = re.compile(r"^(valkey(-sentinel)?-[23]|valkey-replica-[12]|varnish-2|secrets|wordpress-install|wp-cron|tls|k6)$")
    for platform, services in (("compose", COMPOSE), ("swarm", SWARM)):
        missing = [s for s in services if s not in described[platform] and not extra.match(s)]
        assert not missing, f"{platform} runs {missing}, which deploy/topology.yml does not describe"
    kinds = {d["metadata"]["name"].removeprefix("t-varnish-edge-") for d in HELM if d["kind"] in ("Deployment", "StatefulSet")}
    assert kinds == {c["where"]["helm"] for c in TOPOLOGY.values() if "helm" in c["where"]}
