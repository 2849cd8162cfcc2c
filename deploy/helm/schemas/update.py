#!/usr/bin/env python3
"""Regenerates the vendored Kubernetes JSON schemas that scripts/lint/helm.sh validates the chart's
rendering against (kubeconform -strict, offline), for only the kinds the chart renders (KINDS).

Source: the PyPI package kubernetes-validate (KV_VERSION), whose wheel carries the Kubernetes
OpenAPI schemas as JSON Schema 2020-12, one file per kind plus one shared _definitions.json that
every kind file $ref's. Each vendored file is the strict variant (no unknown field anywhere) made
self-contained: the definitions it reaches, and only those, copied into its own "$defs" with every
$ref pointed at them; descriptions dropped (the validation is the same, the files a tenth the size).
File names follow kubeconform's -schema-location template {{ .ResourceKind }}{{ .KindSuffix }}.json:
the kind in lower case, then "-" and the group's first label when it has one, then "-" version
(deployment-apps-v1.json, networkpolicy-networking-v1.json, service-v1.json).

    deploy/helm/schemas/update.py                 # pip downloads the wheel into a temporary folder
    deploy/helm/schemas/update.py WHEEL           # or reads one already downloaded
"""
import json
import os
import subprocess
import sys
import tempfile
import zipfile

KV_VERSION = "1.37.0"         # kubernetes-validate: its newest schemas are Kubernetes 1.37's
K8S_VERSION = "v1.37.0"
# (kind, apiVersion) of every object the chart can render; kubeconform fails on any other.
KINDS = [
    ("ConfigMap", "v1"),
    ("Deployment", "apps/v1"),
    ("NetworkPolicy", "networking.k8s.io/v1"),
    ("PodDisruptionBudget", "policy/v1"),
    ("Secret", "v1"),
    ("Service", "v1"),
    ("ServiceAccount", "v1"),
    ("StatefulSet", "apps/v1"),
]
HERE = os.path.dirname(os.path.abspath(__file__))
DEFS_REF = "/api/_definitions.json#/$defs/"   # how kind files name the shared definitions
LOCAL_REF = "#/$defs/"                        # how _definitions.json names its own


def file_name(kind, api_version):
    """kubeconform's {{ .ResourceKind }}{{ .KindSuffix }}.json (pkg/registry/registry.go)."""
    group, _, version = api_version.rpartition("/")
    suffix = f"-{group.split('.')[0].lower()}" if group else ""
    return f"{kind.lower()}{suffix}-{version.lower()}.json"


def strip(node, in_properties=False):
    """The schema without annotations (description); a property that is *named* description stays."""
    if isinstance(node, list):
        return [strip(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if not in_properties and key == "description" and isinstance(value, str):
            continue
        out[key] = strip(value, in_properties=(key in ("properties", "$defs") and not in_properties))
    return out


def refs(node):
    """Every definition name a $ref in node points at."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                for prefix in (DEFS_REF, LOCAL_REF):
                    if value.startswith(prefix):
                        yield value[len(prefix):]
                        break
                else:
                    sys.exit(f"update.py: unexpected $ref {value!r}")
            else:
                yield from refs(value)
    elif isinstance(node, list):
        for x in node:
            yield from refs(x)


def relink(node):
    """The $ref's pointed at the file's own $defs."""
    if isinstance(node, dict):
        return {k: (LOCAL_REF + v[len(DEFS_REF):] if k == "$ref" and isinstance(v, str) and v.startswith(DEFS_REF)
                    else relink(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [relink(x) for x in node]
    return node


def standalone(kind_schema, definitions):
    schema = {k: v for k, v in kind_schema.items() if k != "$id"}
    needed, pending = set(), list(refs(schema))
    while pending:
        name = pending.pop()
        if name in needed:
            continue
        if name not in definitions:
            sys.exit(f"update.py: {name} is not in _definitions.json")
        needed.add(name)
        pending.extend(refs(definitions[name]))
    schema = relink(strip(schema))
    schema["$defs"] = {name: relink(strip(definitions[name])) for name in sorted(needed)}
    return schema


def wheel_path(argv, tmp):
    if len(argv) > 1:
        return argv[1]
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    f"kubernetes-validate=={KV_VERSION}", "-d", tmp], check=True)
    found = [f for f in os.listdir(tmp) if f.endswith(".whl")]
    if len(found) != 1:
        sys.exit(f"update.py: expected one wheel in {tmp}, found {found}")
    return os.path.join(tmp, found[0])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        wheel = wheel_path(sys.argv, tmp)
        base = f"kubernetes_validate/kubernetes-json-schema/{K8S_VERSION}-local-strict/"
        with zipfile.ZipFile(wheel) as z:
            definitions = json.loads(z.read(base + "_definitions.json"))["$defs"]
            wanted = {file_name(k, v): (k, v) for k, v in KINDS}
            for name, (kind, api_version) in sorted(wanted.items()):
                schema = standalone(json.loads(z.read(base + name)), definitions)
                gvk = schema.get("x-kubernetes-group-version-kind", [{}])[0]
                got = (gvk.get("kind"), "/".join(x for x in (gvk.get("group"), gvk.get("version")) if x))
                if got != (kind, api_version):
                    sys.exit(f"update.py: {name} describes {got}, not {(kind, api_version)}")
                with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
                    json.dump(schema, f, indent=1, sort_keys=True)
                    f.write("\n")
                print(f"update.py: {name} ({len(schema['$defs'])} definitions)")
    stale = sorted(f for f in os.listdir(HERE) if f.endswith(".json") and f not in wanted)
    for f in stale:
        os.remove(os.path.join(HERE, f))
        print(f"update.py: removed {f} (no kind of KINDS)")
    with open(os.path.join(HERE, "SOURCE"), "w", encoding="utf-8") as f:
        f.write(f"kubernetes-validate=={KV_VERSION} (PyPI), {K8S_VERSION}-local-strict; regenerate with update.py\n")


if __name__ == "__main__":
    main()
