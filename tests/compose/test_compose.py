"""Static checks of docker-compose.yml, under pytest (the first half of the `compose` suite; the
stack itself runs in tests/compose/live-test.sh).

The file is read as `docker compose config` resolves it (every profile, no .env, defaults only but
the purger's Sentinel settings, as --profile ha runs it), and cross-checked against the code it depends on: the images' Dockerfiles (stack/images/),
platforms.json (every image tag a supported version), stack/compose/secrets.sh (who reads which
secret), the Varnish image's entry point (origin, ACL) and purger/src/config/settings.ts (the settings
it reads).
Each check takes the resolved file and returns the problems it found; test_a_broken_copy_fails
proves that every kind of breakage listed in MUTATIONS is caught by at least one of them.
"""
import copy
import json
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKS = {}


def check(name):
    """Registers a check: a function of the resolved file that returns a list of problems."""
    def wrap(fn):
        CHECKS[name] = fn
        return fn
    return wrap


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


# The purger's settings for --profile ha (README): what hands it the sentinels' password.
HA_ENV = {"REDIS_SENTINELS": "valkey-sentinel-1:26379,valkey-sentinel-2:26379,valkey-sentinel-3:26379", "REDIS_SENTINEL_MASTER": "purger"}


def resolved():
    env = {k: os.environ[k] for k in ("PATH", "HOME", "DOCKER_HOST", "DOCKER_CONFIG") if k in os.environ}
    env.update(HA_ENV)
    out = subprocess.run(
        ["docker", "compose", "--env-file", "/dev/null", "-f", os.path.join(ROOT, "docker-compose.yml"),
         "--profile", "ha", "--profile", "fanout", "--profile", "load", "--profile", "demo", "--profile", "tls", "config", "--format", "json"],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    assert out.returncode == 0, f"docker compose config failed: {out.stderr}"
    return json.loads(out.stdout)


DOC = resolved()
PLATFORMS = json.loads(read("platforms.json"))
BASE = "debian:trixie-slim"
# The edge, which `docker compose up` runs in front of your WordPress; the demo's site is a profile.
ALWAYS_ON = ["secrets", "valkey", "purger", "varnish"]
ONE_SHOT = ("secrets", "wordpress-install", "k6")
PROFILES = {"ha": ["valkey-replica-1", "valkey-replica-2", "valkey-sentinel-1", "valkey-sentinel-2", "valkey-sentinel-3"],
            "fanout": ["varnish-2"], "load": ["k6"], "tls": ["tls"],
            "demo": ["mariadb", "wordpress-install", "wordpress", "wp-cron"]}
PUBLISHERS = ("varnish", "varnish-2", "tls", "purger")   # readers' ports, and the site's webhook endpoint


def services(doc):
    return doc.get("services", {})


def long_running(doc):
    return [n for n, s in services(doc).items() if s.get("restart") != "no"]


def secrets_readers():
    """The READERS column of stack/settings.table (stack/compose/secrets.sh hands secrets out by it): reader -> the secret files it gets."""
    out = {}
    for f in (line.split() for line in read("stack/settings.table").splitlines()):
        if len(f) >= 6 and f[1] == "secret" and not f[0].startswith("#"):
            for reader in f[5].split(","):
                out.setdefault(reader, []).append(f[0].lower())
    return out


def mounts(svc):
    return svc.get("volumes") or []


@check("has the stack's services, and the optional ones only behind their profiles")
def _(doc):
    s = services(doc)
    out = [f"missing service {n}" for n in ALWAYS_ON + sum(PROFILES.values(), []) if n not in s]
    for profile, names in PROFILES.items():
        out += [f"{n} is not behind the {profile} profile" for n in names if n in s and profile not in (s[n].get("profiles") or [])]
    out += [f"{n} is behind a profile" for n in ALWAYS_ON if n in s and s[n].get("profiles")]
    return out


@check(f"nothing is pulled but {BASE}: every other image is built here from it")
def _(doc):
    out, built = [], {}
    for name, svc in services(doc).items():
        if "build" in svc:
            built[svc.get("image")] = name
            dockerfile = os.path.join(svc["build"].get("context", ROOT), svc["build"].get("dockerfile", "Dockerfile"))
            if not os.path.isfile(dockerfile):
                out.append(f"{name}: no Dockerfile at {dockerfile}")
                continue
            text = open(dockerfile, encoding="utf-8").read()
            stages = set(re.findall(r"^FROM\s+\S+\s+AS\s+(\S+)", text, re.M | re.I))
            if not re.search(r"^FROM\s", text, re.M | re.I):
                out.append(f"{name}: {os.path.relpath(dockerfile, ROOT)} is not a Dockerfile (no FROM)")
            for base in re.findall(r"^FROM\s+(\S+)", text, re.M | re.I):
                if base != BASE and base not in stages:
                    out.append(f"{name}: {os.path.relpath(dockerfile, ROOT)} starts FROM {base}, not {BASE}")
    for name, svc in services(doc).items():
        image = svc.get("image")
        if "build" not in svc and image != BASE and image not in built:
            out.append(f"{name}: image {image} would be pulled (no service builds it)")
    return out


def supported(part, tag):
    """Whether platforms.json lists tag for the image varnish-edge/<part>."""
    if part == "purger":
        return tag.startswith("node") and tag[4:] in [n["version"] for n in PLATFORMS["node"]]
    if part == "valkey":
        return tag in [s["version"] for s in PLATFORMS["store"] if s["name"] == "valkey"]
    return part in PLATFORMS and tag in [e["version"] for e in PLATFORMS[part]]


@check("every image tag is a version platforms.json supports, and each build builds that version")
def _(doc):
    out = []
    for name, svc in services(doc).items():
        image = svc.get("image", "")
        m = re.fullmatch(r"varnish-edge/([a-z0-9-]+):([A-Za-z0-9.]+)", image)
        if image == BASE:
            continue
        if not m:
            out.append(f"{name}: image {image!r} is not varnish-edge/<part>:<version>")
            continue
        part, tag = m.groups()
        if not supported(part, tag):
            out.append(f"{name}: {image} pins a version platforms.json does not list for {part}")
        args = (svc.get("build") or {}).get("args") or {}
        if part == "varnish" and "build" in svc and args.get("VARNISH") != tag:
            out.append(f"{name}: builds Varnish {args.get('VARNISH')} but tags it {tag}")
        if part == "purger" and "build" in svc and f"node{args.get('NODE')}" != tag:
            out.append(f"{name}: builds on Node.js {args.get('NODE')} but tags it {tag}")
    return out


@check("only Varnish, the TLS front and the purger's webhook endpoint publish a port, on 127.0.0.1 by default")
def _(doc):
    out = []
    for name, svc in services(doc).items():
        for p in svc.get("ports") or []:
            if name not in PUBLISHERS:
                out.append(f"{name} publishes port {p.get('target')}")
            elif p.get("host_ip") != "127.0.0.1":
                out.append(f"{name} publishes {p.get('target')} on {p.get('host_ip') or 'every interface'}, not 127.0.0.1")
    if not services(doc).get("varnish", {}).get("ports"):
        out.append("varnish publishes no port")
    return out


@check("least privilege: read-only root, no capabilities, no-new-privileges, restart policy")
def _(doc):
    out = []
    for name, svc in services(doc).items():
        if not svc.get("read_only"):
            out.append(f"{name}: root filesystem writable")
        if svc.get("cap_drop") != ["ALL"] or svc.get("cap_add"):
            out.append(f"{name}: capabilities not all dropped ({svc.get('cap_drop')}, add {svc.get('cap_add')})")
        if "no-new-privileges:true" not in (svc.get("security_opt") or []):
            out.append(f"{name}: no no-new-privileges")
        if svc.get("privileged"):
            out.append(f"{name}: privileged")
        if name not in ONE_SHOT and svc.get("restart") != "unless-stopped":
            out.append(f"{name}: restart {svc.get('restart')!r}, want unless-stopped")
    if services(doc).get("secrets", {}).get("network_mode") != "none":
        out.append("secrets: has a network")
    return out


@check("every long-running service has a healthcheck; depends_on waits for a condition the target can meet")
def _(doc):
    s = services(doc)
    out = [f"{n} has no healthcheck" for n in long_running(doc) if not (s[n].get("healthcheck") or {}).get("test")]
    for name, svc in s.items():
        for dep, spec in (svc.get("depends_on") or {}).items():
            cond = spec.get("condition")
            if dep not in s:
                out.append(f"{name} depends on unknown service {dep}")
            elif cond == "service_healthy" and not s[dep].get("healthcheck"):
                out.append(f"{name} waits for {dep} to be healthy, but {dep} has no healthcheck")
            elif cond == "service_completed_successfully" and s[dep].get("restart") != "no":
                out.append(f"{name} waits for {dep} to complete, but {dep} keeps running")
    return out


@check("no secret in an environment variable: secrets are files under /run/secrets")
def _(doc):
    out = []
    for name, svc in services(doc).items():
        for k, v in (svc.get("environment") or {}).items():
            v = str(v or "")
            # TLS_KEY names a file in the certificate directory the user mounts, it holds no key.
            if re.search(r"(PASSWORD|SECRETS?|TOKEN|_KEYS?)$", k) and not (name == "tls" and k == "TLS_KEY" and "/" not in v and not v.startswith("-----")):
                out.append(f"{name}: {k} in the environment (docker inspect shows it); use {k}_FILE")
            if k.endswith("_FILE") and not v.startswith("/run/secrets/"):
                out.append(f"{name}: {k}={v} is not under /run/secrets")
            if re.search(r"whsec_|://[^/@]*:[^/@]+@", v):
                out.append(f"{name}: {k} holds a secret")
    return out


@check("each service mounts only its own secrets volume (stack/compose/secrets.sh's READERS), read-only")
def _(doc):
    out, readers = [], secrets_readers()
    s = services(doc)
    handed = {m["target"].split("/")[-1]: m["source"] for m in mounts(s.get("secrets", {})) if m["target"].startswith("/to/")}
    for reader in readers:
        if handed.get(reader) != f"secrets-{reader}":
            out.append(f"the secrets service does not fill secrets-{reader} at /to/{reader}")
    for reader in handed:
        if reader not in readers:
            out.append(f"the secrets service mounts /to/{reader}, which READERS does not name")
    for name, svc in s.items():
        if name == "secrets":
            continue
        for m in mounts(svc):
            if m.get("source") == "secrets":
                out.append(f"{name} mounts the vault of every secret")
            if m["target"] == "/run/secrets":
                reader = (m.get("source") or "").removeprefix("secrets-")
                if reader not in readers:
                    out.append(f"{name}: /run/secrets from {m.get('source')}, not a secrets-<reader> volume")
                    continue
                if not m.get("read_only"):
                    out.append(f"{name}: /run/secrets writable")
                for k, v in (svc.get("environment") or {}).items():
                    if k.endswith("_FILE") and os.path.basename(str(v)) not in readers[reader]:
                        out.append(f"{name}: {k}={v}, but secrets-{reader} has only {readers[reader]}")
    return out


@check("the admin password reaches only one-shot containers (wordpress-install), never a long-running one")
def _(doc):
    out, readers = [], secrets_readers()
    holders = [r for r, names in readers.items() if "admin_password" in names]
    if not holders:
        out.append("no service is given admin_password: the install could not set it")
    for name, svc in services(doc).items():
        for m in mounts(svc):
            reader = (m.get("source") or "").removeprefix("secrets-")
            if m["target"] == "/run/secrets" and reader in holders and svc.get("restart") != "no":
                out.append(f"{name} keeps running with the admin password (/run/secrets from secrets-{reader})")
    return out


@check("the sentinels require their own password, which the purger gets with REDIS_SENTINELS and the store never sees")
def _(doc):
    out, readers = [], secrets_readers()
    s = services(doc)
    for name, svc in s.items():
        if (svc.get("command") or [None])[0] != "sentinel":
            continue
        for m in mounts(svc):
            if m["target"] == "/run/secrets" and "redis_sentinel_password" not in readers.get((m.get("source") or "").removeprefix("secrets-"), []):
                out.append(f"{name}: no redis_sentinel_password in {m.get('source')} (start.sh refuses to run a sentinel without it)")
    for name in ("valkey", "valkey-replica-1"):
        for m in mounts(s.get(name, {})):
            if m["target"] == "/run/secrets" and "redis_sentinel_password" in readers.get((m.get("source") or "").removeprefix("secrets-"), []):
                out.append(f"{name} is given the sentinels' password")
    env = s.get("purger", {}).get("environment") or {}
    if env.get("REDIS_SENTINELS") and env.get("REDIS_SENTINEL_PASSWORD_FILE") != "/run/secrets/redis_sentinel_password":
        out.append(f"purger: REDIS_SENTINELS set but REDIS_SENTINEL_PASSWORD_FILE={env.get('REDIS_SENTINEL_PASSWORD_FILE')!r}")
    if not re.search(r"^requirepass \$REDIS_SENTINEL_PASSWORD$", read("stack/images/valkey/start.sh"), re.M):
        out.append("stack/images/valkey/start.sh: sentinel.conf has no requirepass $REDIS_SENTINEL_PASSWORD")
    return out


@check("no address or subnet pinned: WordPress believes X-Forwarded-For from its own internal network, found at start")
def _(doc):
    s = services(doc)
    out = []
    for name in ("wordpress", "wordpress-install", "wp-cron"):
        trusted = str((s.get(name, {}).get("environment") or {}).get("WEB_TRUSTED_PROXIES", ""))
        if trusted != "network":
            out.append(f"{name}: WEB_TRUSTED_PROXIES={trusted!r}, want 'network' (its own internal network, found at start)")
    for name, svc in s.items():
        for net, spec in (svc.get("networks") or {}).items():
            if (spec or {}).get("ipv4_address") or (spec or {}).get("ipv6_address"):
                out.append(f"{name} pins its address on {net}: two projects of this file would collide")
    for name, net in (doc.get("networks") or {}).items():
        if (net.get("ipam") or {}).get("config"):
            out.append(f"network {name} pins a subnet: two projects of this file would collide")
    return out


@check("the backend network is internal; Varnish's default origin is the demo's WordPress; acl purgers follows the purger")
def _(doc):
    out = []
    s = services(doc)
    if not doc.get("networks", {}).get("backend", {}).get("internal"):
        out.append("the backend network is not internal")
    env = s.get("varnish", {}).get("environment") or {}
    m = re.fullmatch(r"http://([a-z0-9-]+):(\d+)", str(env.get("ORIGIN_URL", "")))
    exposed = re.findall(r"^EXPOSE\s+(\d+)", read("stack/images/wordpress/Dockerfile"), re.M)
    if not m or m.group(1) not in s or [m.group(2)] != exposed:
        out.append(f"varnish: ORIGIN_URL={env.get('ORIGIN_URL')!r} is not the wordpress service's port {exposed}")
    purger_nets = s.get("purger", {}).get("networks") or {}
    internal = [n for n, spec in purger_nets.items() if env.get("PURGER_HOST") in ((spec or {}).get("aliases") or [])]
    if internal != ["backend"]:
        out.append(f"varnish: PURGER_HOST={env.get('PURGER_HOST')!r} is not the purger's alias on the backend network alone"
                   " (acl purgers admits the network that name is on: never the public one)")
    if "purger" not in (s.get("varnish", {}).get("depends_on") or {}):
        out.append("varnish does not start after the purger, whose network its acl purgers admits")
    return out


@check("the purger finds every Varnish node by the DNS alias both carry, on the port varnishd listens on")
def _(doc):
    out = []
    env = services(doc).get("purger", {}).get("environment") or {}
    dns = str(env.get("VARNISH_DNS", ""))
    name, _, port = dns.partition(":")
    for node in ("varnish", "varnish-2"):
        svc = services(doc).get(node, {})
        aliases = ((svc.get("networks") or {}).get("backend") or {}).get("aliases") or []
        if name not in aliases:
            out.append(f"{node} does not carry the alias {name!r} the purger resolves (VARNISH_DNS={dns})")
        if f"=:{port}," not in " ".join(varnish_command(svc)):
            out.append(f"{node}: varnishd does not listen on {port}")
    return out


def image_cmd(dockerfile):
    """The CMD of a Dockerfile of the repository (exec form), [] when it has none."""
    m = re.search(r"^CMD (\[.*\])$", read(dockerfile), re.M)
    return json.loads(m.group(1)) if m else []


def varnish_command(svc):
    """A Varnish service's command: its own, or the image's CMD (stack/images/varnish/Dockerfile)."""
    return svc.get("command") or image_cmd("stack/images/varnish/Dockerfile")


def start_problems(cmd, start):
    """The image's CMD against `npm start` (one launch of the purger: the native stack and the
    test kit run npm's script, the image runs node with the same arguments)."""
    return [] if cmd == start.split() else [f"the purger image runs {' '.join(cmd)!r}, npm start runs {start!r}"]


@check("the purger's image runs what `npm start` runs (purger/package.json)")
def _(doc):
    return start_problems(image_cmd("stack/images/purger/Dockerfile"), json.loads(read("purger/package.json"))["scripts"]["start"])


def test_a_purger_image_with_other_flags_fails():
    assert start_problems(["node", "dist/main.js"], "node --max-old-space-size=192 dist/main.js")


@check("the purger is given only settings it reads (purger/src/config/settings.ts)")
def _(doc):
    src = read("purger/src/config/settings.ts")
    out = []
    for k in services(doc).get("purger", {}).get("environment") or {}:
        base = k.removesuffix("_FILE")
        if not re.search(rf"\b{base}\b", src):
            out.append(f"purger: {k} is not read by purger/src/config/settings.ts")
    return out


@check("every setting the file reads is documented in .env.example, and .env stays out of git")
def _(doc):
    used = set(re.findall(r"(?<!\$)\$\{([A-Z_][A-Z0-9_]*)", read("docker-compose.yml")))
    documented = set(re.findall(r"^#?([A-Z_][A-Z0-9_]*)=", read(".env.example"), re.M))
    out = [f"${{{v}}} is not in .env.example" for v in sorted(used - documented)]
    out += [f".env.example names {v}, which docker-compose.yml does not read" for v in sorted(documented - used)]
    if subprocess.run(["git", "-C", ROOT, "check-ignore", "-q", ".env"], check=False).returncode != 0:
        out.append(".env is not in .gitignore")
    return out


# Ways to break the file; each must make at least one check fail.
def _set(path, value):
    def mutate(d):
        *keys, last = path
        for k in keys:
            d = d[k]
        d[last] = value
    return mutate


def _pop(path):
    def mutate(d):
        *keys, last = path
        for k in keys:
            d = d[k]
        d.pop(last)
    return mutate


MUTATIONS = {
    "a healthcheck removed": _pop(["services", "valkey", "healthcheck"]),
    "MariaDB published": _set(["services", "mariadb", "ports"], [{"target": 3306, "published": "3306", "host_ip": "127.0.0.1"}]),
    "Varnish published on every interface": lambda d: d["services"]["varnish"]["ports"][0].pop("host_ip"),
    "a password in the environment": _set(["services", "wordpress", "environment", "DB_PASSWORD"], "hunter2hunter2hunter2"),
    "a pulled image": lambda d: (d["services"]["mariadb"].pop("build"), d["services"]["mariadb"].__setitem__("image", "mariadb:11.4")),
    "a Dockerfile from another base": _set(["services", "purger", "build", "dockerfile"], "stack/images/../../purger/package.json"),
    "a Varnish outside the table": _set(["services", "varnish", "image"], "varnish-edge/varnish:6.0"),
    "a Node.js outside the table": _set(["services", "purger", "build", "args", "NODE"], "20"),
    "the backend network not internal": _pop(["networks", "backend", "internal"]),
    "WordPress given every secret": lambda d: d["services"]["wordpress"]["volumes"].append({"type": "volume", "source": "secrets", "target": "/vault"}),
    "the purger given the web's secrets": lambda d: [m.__setitem__("source", "secrets-web") for m in d["services"]["purger"]["volumes"] if m["target"] == "/run/secrets"],
    "a writable root": _set(["services", "purger", "read_only"], False),
    "a capability kept": _pop(["services", "valkey", "cap_drop"]),
    "a second node the purger cannot find": lambda d: d["services"]["varnish-2"]["networks"]["backend"].pop("aliases"),
    "a setting the purger does not read": _set(["services", "purger", "environment", "PURGER_NO_SUCH_SETTING"], "1"),
    "waiting for a service without a healthcheck": lambda d: d["services"]["wp-cron"].pop("healthcheck"),
    "the admin password in the running WordPress": lambda d: [m.__setitem__("source", "secrets-install") for m in d["services"]["wordpress"]["volumes"] if m["target"] == "/run/secrets"],
    "X-Forwarded-For believed from a pinned range": _set(["services", "wordpress", "environment", "WEB_TRUSTED_PROXIES"], "172.28.0.0/16"),
    "a varnish address pinned": _set(["services", "varnish-2", "networks", "backend", "ipv4_address"], "172.28.0.11"),
    "a pinned subnet": _set(["networks", "backend", "ipam"], {"config": [{"subnet": "172.28.0.0/16"}]}),
    "the purger published on every interface": lambda d: d["services"]["purger"]["ports"][0].pop("host_ip"),
    "an origin that is not the demo's": _set(["services", "varnish", "environment", "ORIGIN_URL"], "http://wordpress:80"),
    "sentinels without their password": lambda d: [m.__setitem__("source", "secrets-store") for m in d["services"]["valkey-sentinel-2"]["volumes"] if m["target"] == "/run/secrets"],
    "the purger without the sentinels' password": _pop(["services", "purger", "environment", "REDIS_SENTINEL_PASSWORD_FILE"]),
    "acl purgers following the purger onto the public network": _set(["services", "varnish", "environment", "PURGER_HOST"], "purger"),
}


def problems_of_every_check(doc):
    out = {}
    for name, fn in CHECKS.items():
        try:
            out[name] = fn(doc) or []
        except Exception as e:  # a crash in a check is a failure of that check
            out[name] = [f"{type(e).__name__}: {e}"]
    return out


@pytest.mark.parametrize("name", list(CHECKS))
def test_compose(name):
    problems = CHECKS[name](DOC) or []
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_a_broken_copy_fails(mutation):
    doc = copy.deepcopy(DOC)
    MUTATIONS[mutation](doc)
    assert any(problems_of_every_check(doc).values()), f"a compose file with {mutation} passes every check"
