"""Static checks of docker-compose.yml (there is no Docker engine to run it here), under pytest:
python3 -m pytest stack/compose/test_compose.py (the `compose` suite of make test).

Cross-checks the compose file against the native stack (stack/lib.sh, stack/services/*.sh,
stack/render-config.sh), .env.example, vcl/default.vcl and the code that reads the settings
(purger/src/config.ts, wordpress-plugin/varnish-edge). Each check returns the problems it found;
test_compose runs every one on the real file, and test_a_broken_copy_fails proves that every
kind of breakage is caught by at least one of them.
"""
import copy
import os
import re
import subprocess

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKS = {}


def check(name):
    """Registers a check: a function that returns a list of problems (empty when it holds)."""
    def wrap(fn):
        CHECKS[name] = fn
        return fn
    return wrap


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


COMPOSE_FILE = os.path.join(ROOT, "docker-compose.yml")
ENV_EXAMPLE = dict(re.findall(r"^([A-Z_][A-Z0-9_]*)=(.*)$", read(".env.example"), re.M))
RAW = DOC = SERVICES = LONG_RUNNING = None


def load(path):
    """Points every check at the compose file at path."""
    global RAW, DOC, SERVICES, LONG_RUNNING
    with open(path, encoding="utf-8") as f:
        RAW = f.read()
    DOC = yaml.safe_load(RAW)
    SERVICES = DOC.get("services", {})
    LONG_RUNNING = [n for n, s in SERVICES.items() if not s.get("profiles") and s.get("restart") != "no"]


load(COMPOSE_FILE)
LIB = read("stack/lib.sh")


def lib_default(var):
    m = re.search(rf"^{var}=\$\{{{var}:-([^}}]*)\}}", LIB, re.M)
    return m.group(1) if m else None


def env_of(svc):
    env = SERVICES[svc].get("environment", {})
    if isinstance(env, list):
        env = dict(e.split("=", 1) for e in env)
    return {k: str(v) for k, v in env.items()}


def interpolations(text):
    """${VAR}, ${VAR:-default}, ${VAR:?msg} occurrences (not $${...} escapes)."""
    return re.findall(r"(?<!\$)\$\{([A-Z_][A-Z0-9_]*)(?:(:?[-?])([^}]*))?\}", text)


@check("parses; has the services varnish, wordpress, mariadb, redis, purger and a k6 profile")
def _():
    missing = [s for s in ("varnish", "wordpress", "mariadb", "redis", "purger", "k6") if s not in SERVICES]
    out = [f"missing service {s}" for s in missing]
    if "k6" in SERVICES and "load" not in (SERVICES["k6"].get("profiles") or []):
        out.append("k6 is not behind a profile")
    return out


@check("every long-running service has a healthcheck")
def _():
    return [f"{n} has no healthcheck" for n in LONG_RUNNING if not SERVICES[n].get("healthcheck", {}).get("test")]


@check("depends_on always waits for a condition on a service that can meet it")
def _():
    out = []
    for name, svc in SERVICES.items():
        deps = svc.get("depends_on") or {}
        if isinstance(deps, list):
            out.append(f"{name}: depends_on without conditions")
            continue
        for dep, spec in deps.items():
            cond = (spec or {}).get("condition")
            if dep not in SERVICES:
                out.append(f"{name} depends on unknown service {dep}")
            elif cond == "service_healthy" and not SERVICES[dep].get("healthcheck"):
                out.append(f"{name} waits for {dep} to be healthy, but {dep} has no healthcheck")
            elif cond not in ("service_healthy", "service_completed_successfully"):
                out.append(f"{name} -> {dep}: condition {cond!r}")
    for n in ("wordpress", "varnish", "purger"):
        if not SERVICES.get(n, {}).get("depends_on"):
            out.append(f"{n} starts without waiting for anything")
    return out


@check("only Varnish publishes a port, 8080 by default, matching its listen address and the native default")
def _():
    out = [f"{n} publishes ports" for n, s in SERVICES.items() if s.get("ports") and n != "varnish"]
    ports = SERVICES["varnish"].get("ports") or []
    if len(ports) != 1:
        return out + [f"varnish publishes {len(ports)} ports"]
    m = re.fullmatch(r"(?:\$\{VARNISH_BIND:-([^}]*)\}:)?\$\{VARNISH_PORT:-(\d+)\}:(\d+)", str(ports[0]))
    if not m:
        return out + [f"varnish port {ports[0]!r} is not ${{VARNISH_BIND:-…}}:${{VARNISH_PORT:-8080}}:<container port>"]
    bind, host_port, container_port = m.groups()
    if host_port != "8080" or lib_default("VARNISH_PORT") != "8080" or ENV_EXAMPLE.get("VARNISH_PORT") != "8080":
        out.append(f"default published port {host_port}, native {lib_default('VARNISH_PORT')}, .env.example {ENV_EXAMPLE.get('VARNISH_PORT')}: want 8080 everywhere")
    if bind not in (None, "127.0.0.1"):
        out.append(f"published on {bind} by default; 127.0.0.1 keeps it local until asked")
    cmd = " ".join(SERVICES["varnish"].get("command") or [])
    if f"=:{container_port}," not in cmd and f" :{container_port}" not in cmd:
        out.append(f"varnishd does not listen on the published container port {container_port}: {cmd}")
    penv = env_of("purger")
    nodes = penv.get("VARNISH_DNS") or penv.get("VARNISH_NODES", "")
    if nodes != f"varnish:{container_port}":
        out.append(f"purger VARNISH_DNS/VARNISH_NODES={nodes}, want varnish:{container_port}")
    return out


@check("every bind-mounted path and build context exists in the repository")
def _():
    out = []
    for name, svc in SERVICES.items():
        for v in svc.get("volumes") or []:
            src = v.split(":")[0] if isinstance(v, str) else v.get("source", "")
            if src.startswith((".", "/")):
                if not os.path.exists(os.path.join(ROOT, src)):
                    out.append(f"{name}: {src} does not exist")
            elif src not in (DOC.get("volumes") or {}):
                out.append(f"{name}: named volume {src} is not declared")
        b = svc.get("build")
        if b:
            ctx = b if isinstance(b, str) else b.get("context", ".")
            dockerfile = "Dockerfile" if isinstance(b, str) else b.get("dockerfile", "Dockerfile")
            if not os.path.isfile(os.path.join(ROOT, ctx, dockerfile)):
                out.append(f"{name}: build context {ctx} has no {dockerfile}")
    return out


@check("every ${VAR} is in .env.example or has a default; secrets are required and refused as placeholders")
def _():
    out = []
    for var, op, _ in interpolations(RAW):
        if var not in ENV_EXAMPLE and op not in (":-", "-"):
            out.append(f"${{{var}}} is neither in .env.example nor defaulted")
    secrets = re.search(r"^STACK_SECRETS=\(([^)]*)\)", LIB, re.M).group(1).split()
    pre = env_of("preflight")
    for s in secrets:
        if ENV_EXAMPLE.get(s) != "CHANGE_ME":
            out.append(f"{s}: .env.example should hold the CHANGE_ME placeholder")
        if not re.fullmatch(rf"\$\{{{s}:\?.+\}}", pre.get(s, "")):
            out.append(f"{s}: the preflight service does not require it (${{{s}:?…}})")
        if s not in read("stack/compose/check-env.sh"):
            out.append(f"{s}: stack/compose/check-env.sh does not check it")
    for name in SERVICES:
        for k, v in env_of(name).items():
            if re.search(r"PASSWORD|SECRET|TOKEN|AUTH", k) and "RANDOM" not in k and "$" not in v:
                out.append(f"{name}: {k} is hard-coded; take it from .env")
    return out


@check("purger settings: the names compose and the native stack pass are the ones purger/src/config.ts reads")
def _():
    config = read("purger/src/config.ts")
    native = set(re.findall(r"\b((?:PURGER|REDIS|VARNISH)_[A-Z_]+)=", read("stack/services/purger.sh")))
    compose = set(env_of("purger"))
    out = [f"{k} (compose) is not read by purger/src/config.ts" for k in sorted(compose) if not re.search(rf"\b{k}\b", config)]
    out += [f"{k} (native) is not read by purger/src/config.ts" for k in sorted(native) if not re.search(rf"\b{k}\b", config)]
    # Compose finds its (scalable) Varnish nodes by DNS, the native stack lists its one node;
    # only compose has the optional Sentinel profile.
    alt = {"VARNISH_NODES", "VARNISH_DNS", "REDIS_SENTINELS", "REDIS_SENTINEL_MASTER"}
    if compose - alt != native - alt or not (compose & alt) or not (native & alt):
        out.append(f"compose and native differ: only compose {sorted(compose - native)}, only native {sorted(native - compose)}")
    return out


@check("plugin settings: the wp-config constants compose and the native stack define are the ones the plugin reads")
def _():
    plugin_src = ""
    for dp, _, files in os.walk(os.path.join(ROOT, "wordpress-plugin/varnish-edge")):
        for f in files:
            if f.endswith(".php"):
                with open(os.path.join(dp, f), encoding="utf-8") as fh:
                    plugin_src += fh.read()
    compose = set(re.findall(r"define\('(VARNISH_EDGE_[A-Z_]+)'", env_of("wordpress").get("WORDPRESS_CONFIG_EXTRA", "")))
    native = set(re.findall(r"define\('(VARNISH_EDGE_[A-Z_]+)'", read("stack/render-config.sh")))
    required = {"VARNISH_EDGE_PURGER_URL", "VARNISH_EDGE_SECRET", "VARNISH_EDGE_NAMESPACE", "VARNISH_EDGE_TTL"}
    out = [f"{k} is not read by wordpress-plugin/varnish-edge" for k in sorted(compose | native) if k not in plugin_src]
    out += [f"{k} missing from compose" for k in sorted(required - compose)]
    out += [f"{k} missing from the native wp-config" for k in sorted(required - native)]
    url = re.search(r"define\('VARNISH_EDGE_PURGER_URL',\s*'http://([a-z0-9.-]+):(\d+)'", env_of("wordpress").get("WORDPRESS_CONFIG_EXTRA", ""))
    if not url or url.group(1) not in SERVICES or url.group(2) != env_of("purger").get("PURGER_PORT"):
        out.append("VARNISH_EDGE_PURGER_URL does not point at the purger service's PURGER_PORT")
    if env_of("purger").get("PURGER_PORT") != lib_default("PURGER_PORT"):
        out.append(f"purger port {env_of('purger').get('PURGER_PORT')} differs from the native default {lib_default('PURGER_PORT')}")
    dockerfile = read("purger/Dockerfile") if os.path.exists(os.path.join(ROOT, "purger/Dockerfile")) else ""
    port = env_of("purger").get("PURGER_PORT")
    if dockerfile and not re.search(rf"^EXPOSE\s+{port}\b", dockerfile, re.M):
        out.append(f"purger/Dockerfile does not EXPOSE {port}")
    hc = " ".join(SERVICES["purger"]["healthcheck"]["test"])
    if f":{env_of('purger').get('PURGER_PORT')}/" not in hc:
        out.append("the purger healthcheck does not probe PURGER_PORT")
    return out


@check("vcl/default.vcl fits compose: backend is the wordpress service on port 80, purge ACL admits the backend network, includes exist")
def _():
    vcl = read("vcl/default.vcl")
    out = []
    host = re.search(r'\.host\s*=\s*"([^"]+)"', vcl)
    port = re.search(r'\.port\s*=\s*"([^"]+)"', vcl)
    if not host or host.group(1) not in SERVICES:
        out.append(f"backend .host {host and host.group(1)!r} is not a compose service")
    if not port or port.group(1) != "80":
        out.append(f"backend .port {port and port.group(1)!r}: the wordpress image serves on 80")
    subnet = DOC["networks"]["backend"]["ipam"]["config"][0]["subnet"]
    net, bits = subnet.split("/")
    if not re.search(rf'"{re.escape(net)}"\s*/\s*{bits}', vcl):
        out.append(f"acl purgers does not admit the backend network {subnet} the purger sends from")
    for inc in re.findall(r'^\s*include\s+"([^"]+)"', vcl, re.M):
        if not os.path.exists(os.path.join(ROOT, "vcl", inc)):
            out.append(f"include {inc} not found under vcl/")
    vcl_files = [os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(os.path.join(ROOT, "vcl")) for f in fs if f.endswith(".vcl")]
    imports = {m for f in vcl_files for m in re.findall(r"^\s*import\s+(\w+)", read(f), re.M)}
    if "xkey" not in imports:
        out.append(f"no VCL under vcl/ imports xkey: the vmod check read {len(vcl_files)} files and proves nothing")
    for mod in sorted(imports):
        if mod not in ("std", "purge", "xkey", "directors", "cookie", "blob", "proxy", "unix", "var", "header", "str", "bodyaccess", "vsthrottle", "tcp", "saintmode", "accept"):
            out.append(f"vmod {mod} is in neither Varnish nor varnish-modules (the varnish image ships both)")
    return out


@check("the purge token: Varnish has the secret file vcl/default.vcl reads, the purger sends the same variable")
def _():
    out = []
    path = re.search(r'std\.fileread\("(/run/secrets/([^"]+))"\)', read("vcl/default.vcl"))
    if not path:
        return ["vcl/default.vcl reads no /run/secrets/<name> token file"]
    name = path.group(2)
    if name not in (SERVICES["varnish"].get("secrets") or []):
        out.append(f"the varnish service does not mount the secret {name} that default.vcl reads from {path.group(1)}")
    source = ((DOC.get("secrets") or {}).get(name) or {}).get("environment")
    sent = str(env_of("purger").get("VARNISH_PURGE_TOKEN", ""))
    if not source or sent != f"${{{source}}}":
        out.append(f"the secret {name} comes from {source!r} but the purger's VARNISH_PURGE_TOKEN is {sent!r}: they must be the same variable")
    return out


@check("Redis has a memory cap that refuses writes instead of evicting the purger's log (maxmemory + noeviction), like the native stack")
def _():
    cmd = " ".join(map(str, SERVICES["redis"].get("command") or []))
    out = []
    if "--maxmemory " not in cmd:
        out.append("redis runs without --maxmemory: one sender can fill the host's memory")
    if "--maxmemory-policy noeviction" not in cmd:
        out.append("redis is not --maxmemory-policy noeviction: at the cap it would evict the purger's log silently")
    if "maxmemory-policy noeviction" not in read("stack/render-config.sh"):
        out.append("the native stack's redis.conf is not noeviction")
    return out


@check("`docker compose up --scale varnish=3` works: no fixed container name or address, a publishable port range, the purger finds every node by DNS")
def _():
    out = []
    varnish = SERVICES["varnish"]
    if "container_name" in varnish:
        out.append("varnish has a container_name: compose cannot run two of them")
    nets = varnish.get("networks") or {}
    if isinstance(nets, dict) and any(isinstance(v, dict) and ("ipv4_address" in v or "ipv6_address" in v) for v in nets.values()):
        out.append("varnish has a fixed address: replicas would collide")
    for p in varnish.get("ports") or []:
        if not re.search(r"\$\{VARNISH_PORT(:-[0-9-]+)?\}:\d+$", str(p)):
            out.append(f"varnish publishes {p!r}: the host port must be the VARNISH_PORT variable so a range (8080-8082) can be given for replicas")
    purger = env_of("purger")
    if purger.get("VARNISH_DNS", "").split(":")[0] != "varnish":
        out.append(f"the purger's VARNISH_DNS is {purger.get('VARNISH_DNS')!r}: it must be the varnish service name, whose DNS answer lists every replica")
    if "VARNISH_NODES" in purger:
        out.append("the purger also has a fixed VARNISH_NODES list: replicas beyond it would never be purged")
    return out


@check("the optional ha profile: two replicas of redis and three sentinels (quorum 2) monitoring it, the purger can follow them")
def _():
    out = []
    replicas = [n for n, s in SERVICES.items() if "ha" in (s.get("profiles") or []) and "--replicaof redis 6379" in " ".join(map(str, s.get("command") or []))]
    sentinels = [n for n, s in SERVICES.items() if "ha" in (s.get("profiles") or []) and "redis-sentinel" in " ".join(map(str, s.get("command") or []))]
    if len(replicas) < 2:
        out.append(f"the ha profile has {len(replicas)} replica(s) of redis; two are needed to survive one loss")
    if len(sentinels) < 3:
        out.append(f"the ha profile has {len(sentinels)} sentinel(s); three are needed for a quorum of two")
    for n in sentinels:
        cmd = " ".join(map(str, SERVICES[n]["command"]))
        m = re.search(r"sentinel monitor (\S+) redis 6379 (\d+)", cmd)
        if not m or m.group(2) != "2":
            out.append(f"{n} does not monitor the redis service with quorum 2")
        elif m.group(1) not in RAW:
            out.append(f"{n} monitors {m.group(1)!r}")
        if "auth-pass" not in cmd:
            out.append(f"{n} has no auth-pass: it cannot reach a password-protected primary")
    for n in replicas:
        cmd = " ".join(map(str, SERVICES[n]["command"]))
        if "--masterauth" not in cmd or "noeviction" not in cmd:
            out.append(f"{n} lacks --masterauth or the noeviction memory policy of the primary")
    purger = env_of("purger")
    if not {"REDIS_SENTINELS", "REDIS_SENTINEL_MASTER"} <= set(purger):
        out.append("the purger does not pass REDIS_SENTINELS and REDIS_SENTINEL_MASTER through")
    return out


@check("images are pinned to a version tag; the varnish image is one that ships varnish-modules (>= 7.1)")
def _():
    out = []
    for name, svc in SERVICES.items():
        img = svc.get("image")
        if img is None:
            continue
        tag = img.rsplit(":", 1)[1] if ":" in img else ""
        if not tag or tag == "latest":
            out.append(f"{name}: image {img} is not pinned")
    v = re.fullmatch(r"varnish:(\d+)\.(\d+)(?:\.\d+)?", SERVICES["varnish"]["image"])
    if not v or (int(v.group(1)), int(v.group(2))) < (7, 1):
        out.append(f"varnish image {SERVICES['varnish']['image']}: xkey comes with the official image from 7.1 on")
    return out


@check("least privilege: internal backend network, no-new-privileges, dropped capabilities, read-only mounts")
def _():
    out = []
    nets = DOC.get("networks", {})
    if not nets.get("backend", {}).get("internal"):
        out.append("backend network is not internal")
    for name, svc in SERVICES.items():
        if svc.get("privileged"):
            out.append(f"{name} is privileged")
        if "no-new-privileges:true" not in (svc.get("security_opt") or []):
            out.append(f"{name} lacks no-new-privileges")
        if "public" in (svc.get("networks") or []) and name != "varnish":
            out.append(f"{name} is on the public network")
        for v in svc.get("volumes") or []:
            if isinstance(v, str) and v.startswith(".") and not v.endswith(":ro"):
                out.append(f"{name}: bind mount {v} is writable")
    for name in ("varnish", "redis", "purger"):
        if "ALL" not in (SERVICES[name].get("cap_drop") or []):
            out.append(f"{name} keeps its capabilities")
        if not SERVICES[name].get("read_only"):
            out.append(f"{name} has a writable root filesystem")
    return out


@check("the k6 profile runs a scenario that exists, with variables k6/ reads")
def _():
    k6 = SERVICES["k6"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in k6.get("volumes") or [] if isinstance(v, str)}
    cmd = k6.get("command") or []
    script = next((c for c in cmd if c.endswith(".js")), None)
    out = []
    if not script:
        return ["k6 runs no script"]
    base = next((m for m in mounts if script.startswith(m + "/")), None)
    if base is None or not os.path.isfile(os.path.join(ROOT, mounts[base], script[len(base) + 1:])):
        out.append(f"{script} is not a file of a mounted directory")
    src = ""
    if base is not None and os.path.isdir(os.path.join(ROOT, mounts[base])):
        for dp, _, files in os.walk(os.path.join(ROOT, mounts[base])):
            for f in files:
                if f.endswith(".js"):
                    with open(os.path.join(dp, f), encoding="utf-8") as fh:
                        src += fh.read()
    for k in env_of("k6"):
        if not re.search(rf"__ENV\.{k}\b|env\('{k}'|num\('{k}'", src):
            out.append(f"k6 scripts do not read {k}")
    return out


@check(".env is ignored by git")
def _():
    r = subprocess.run(["git", "-C", ROOT, "check-ignore", "-q", ".env"])
    return [] if r.returncode == 0 else [".env is not in .gitignore"]


# Ways to break the file; each must make at least one check fail.
MUTATIONS = {
    "a healthcheck removed": lambda d: d["services"]["redis"].pop("healthcheck"),
    "MariaDB port published": lambda d: d["services"]["mariadb"].__setitem__("ports", ["3306:3306"]),
    "a password hard-coded": lambda d: d["services"]["wordpress"]["environment"].__setitem__("WORDPRESS_DB_PASSWORD", "secret"),
    "a mount of a missing path": lambda d: d["services"]["varnish"]["volumes"].append("./no-such-dir:/x:ro"),
    "depends_on without condition": lambda d: d["services"]["varnish"].__setitem__("depends_on", ["wordpress"]),
    "a writable bind mount": lambda d: d["services"]["varnish"].__setitem__("volumes", ["./vcl:/etc/varnish"]),
    "a purger variable it does not read": lambda d: d["services"]["purger"]["environment"].__setitem__("PURGER_NO_SUCH_SETTING", "1"),
    "an unpinned image": lambda d: d["services"]["redis"].__setitem__("image", "redis"),
    "backend network not internal": lambda d: d["networks"]["backend"].pop("internal"),
    "Varnish without the purge token": lambda d: d["services"]["varnish"].pop("secrets"),
    "a fixed Varnish container name": lambda d: d["services"]["varnish"].__setitem__("container_name", "varnish"),
    "a fixed Varnish node list": lambda d: d["services"]["purger"]["environment"].__setitem__("VARNISH_NODES", "varnish:8080"),
    "a sentinel fewer": lambda d: d["services"].pop("redis-sentinel-3"),
    "Redis evicting at its cap": lambda d: d["services"]["redis"].__setitem__("command", [c.replace("noeviction", "allkeys-lru") for c in d["services"]["redis"]["command"]]),
}


def problems_of_every_check():
    out = {}
    for name, fn in CHECKS.items():
        try:
            out[name] = fn() or []
        except Exception as e:  # a crash in a check is a failure of that check
            out[name] = [f"{type(e).__name__}: {e}"]
    return out


@pytest.mark.parametrize("name", list(CHECKS))
def test_compose(name):
    problems = CHECKS[name]() or []
    assert not problems, "\n".join(problems)


@pytest.fixture
def copy_of_the_file(tmp_path):
    """Yields (doc, write): write(doc) points the checks at a copy; the real file is restored."""
    def write(doc):
        path = tmp_path / "docker-compose.yml"
        path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
        load(str(path))
    yield copy.deepcopy(DOC), write
    load(COMPOSE_FILE)


def test_the_unchanged_file_re_serialized_passes(copy_of_the_file):
    doc, write = copy_of_the_file
    write(doc)
    failing = {n: p for n, p in problems_of_every_check().items() if p}
    assert not failing, f"the self-test would prove nothing: {failing}"


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_a_broken_copy_fails(mutation, copy_of_the_file):
    doc, write = copy_of_the_file
    MUTATIONS[mutation](doc)
    write(doc)
    assert any(problems_of_every_check().values()), f"a compose file with {mutation} passes every check"
