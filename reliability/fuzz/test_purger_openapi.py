"""Fuzzes the running purger from its own OpenAPI document (GET /openapi.json) with schemathesis.

Every operation gets schema-valid and schema-violating requests (schemathesis' positive and
negative modes). POST /v1/events is signed with the real secret (so validation past the signature
is reached) and POST /v1/purge half the time carries the operator token; half of the bodies get
the purger's own site so that the per-event checks run. For every request:
  - never a 5xx, never a dropped connection, and the purger is still alive afterwards;
  - only documented status codes, each answered with JSON;
  - the log's sequence counter (Redis <prefix>:seq) moves only on a 202, by exactly the number of
    accepted events, and only for a request that an independent oracle (the request schema of the
    OpenAPI document plus docs/protocol.md's per-event rules) calls valid.
Environment: FUZZ_PURGER_URL, FUZZ_SITE, FUZZ_SECRET, FUZZ_TOKEN, FUZZ_REDIS_PORT, FUZZ_REDIS_AUTH,
FUZZ_PREFIX, FUZZ_EXAMPLES (per operation).
"""
import base64
import hashlib
import hmac
import json
import os
import re
import subprocess
import time
import uuid
from datetime import datetime
from urllib.parse import urlsplit

import jsonschema_rs
import requests
import schemathesis
from hypothesis import HealthCheck, settings

BASE = os.environ["FUZZ_PURGER_URL"]
SITE = os.environ["FUZZ_SITE"]
SECRET = os.environ["FUZZ_SECRET"]
TOKEN = os.environ["FUZZ_TOKEN"]
PREFIX = os.environ.get("FUZZ_PREFIX", "purger")
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))

# The document, receipts and metrics are behind a bearer token (the operator token reads them).
READ_AUTH = {"authorization": f"Bearer {TOKEN}"}
schema = schemathesis.openapi.from_url(f"{BASE}/openapi.json", headers=READ_AUTH)
DOC = requests.get(f"{BASE}/openapi.json", headers=READ_AUTH, timeout=10).json()
session = requests.Session()
STATS = {"requests": 0, "accepted": 0, "by_status": {}}


def redis_seq():
    out = subprocess.run(
        ["redis-cli", "-h", "127.0.0.1", "-p", os.environ["FUZZ_REDIS_PORT"], "--no-auth-warning", "GET", f"{PREFIX}:seq"],
        env={**os.environ, "REDISCLI_AUTH": os.environ["FUZZ_REDIS_AUTH"]}, capture_output=True, text=True, timeout=10, check=True,
    )
    return int(out.stdout.strip() or 0)


def sign(msg_id, ts, raw):
    key = base64.b64decode(SECRET.removeprefix("whsec_"))
    return "v1," + base64.b64encode(hmac.new(key, f"{msg_id}.{ts}.".encode() + raw, hashlib.sha256).digest()).decode()


def normalized_host(netloc):
    host = netloc.lower()
    m = re.fullmatch(r"(.+?)\.?(?::(\d{1,5}))?", host)
    if not m:
        return None
    name, port = m.group(1), m.group(2)
    return name if port in (None, "80", "443") else f"{name}:{port}"


RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


def oracle_valid(path, body):
    """docs/protocol.md §1, written independently of the purger's code."""
    req_schema = DOC["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    if not jsonschema_rs.validator_for(req_schema).is_valid(body):
        return False, "violates the request schema"
    if body["site"] != SITE:
        return False, "site not allowed"
    for e in body["events"]:
        kind, urls, tags = e["kind"], e.get("urls"), e.get("tags")
        if "time" in e and not RFC3339.fullmatch(e["time"]):
            return False, f"time {e['time']!r} is not RFC 3339"
        if kind in ("urls", "prefix"):
            if not urls or tags is not None:
                return False, "urls/prefix needs urls only"
            for u in urls:
                p = urlsplit(u)
                if p.scheme not in ("http", "https") or p.username or p.password or normalized_host(p.netloc) != SITE:
                    return False, f"url {u!r} is not on the site"
        elif kind == "tags":
            if not tags or urls is not None:
                return False, "tags needs tags only"
        elif urls is not None or tags is not None:
            return False, "all takes neither urls nor tags"
    return True, ""


def on_site(events):
    """Half the generated URLs become paths on the site, so the URL checks and delivery run."""
    if not isinstance(events, list):
        return events
    out = []
    for e in events:
        if isinstance(e, dict) and isinstance(e.get("urls"), list):
            e = {**e, "urls": [f"http://{SITE}/{u.lstrip('/')}" if isinstance(u, str) and i % 2 == 0 else u for i, u in enumerate(e["urls"])]}
        out.append(e)
    return out


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
def test_purger_api(case):
    path = case.operation.path
    headers = {k: str(v) for k, v in (case.headers or {}).items() if not re.search(r"[\r\n\x00]", f"{k}{v}")}
    raw = None
    body = case.body if case.body is not schemathesis.core.NOT_SET else None
    if body is not None:
        if isinstance(body, dict) and isinstance(body.get("site"), str) and len(json.dumps(body)) % 2 == 0:
            body = {**body, "site": SITE, "events": on_site(body.get("events"))}
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers.setdefault("content-type", case.media_type or "application/json")
    if case.method == "POST" and path == "/v1/events":
        msg_id, ts = f"fuzz_{uuid.uuid4().hex}", str(int(time.time()))
        headers.update({"webhook-id": msg_id, "webhook-timestamp": ts, "webhook-signature": sign(msg_id, ts, raw or b"")})
    if case.method == "POST" and path == "/v1/purge" and len(raw or b"") % 2 == 0:
        headers["authorization"] = f"Bearer {TOKEN}"
    if case.method == "GET" and len(case.formatted_path) % 2 == 0:
        headers.update(READ_AUTH)   # half the reads with the token, half without (401)

    before = redis_seq()
    res = session.request(case.method, BASE + case.formatted_path, params=case.query, headers=headers, data=raw, timeout=30)
    after = redis_seq()
    STATS["requests"] += 1
    STATS["by_status"][res.status_code] = STATS["by_status"].get(res.status_code, 0) + 1

    assert res.status_code < 500, f"{case.method} {path}: {res.status_code} {res.text[:300]}"
    operation = DOC["paths"][path].get(case.method.lower())
    if operation is None:  # a method the document does not list: refused, not served
        assert 400 <= res.status_code < 500, f"{case.method} {path}: {res.status_code}"
    else:
        assert str(res.status_code) in operation.get("responses", {}), f"{case.method} {path}: undocumented status {res.status_code} {res.text[:200]}"
    if case.method != "HEAD":
        res.json()  # every answer is JSON

    if res.status_code == 202:
        ok, why = oracle_valid(path, json.loads(raw))
        assert ok, f"{path} accepted an invalid request ({why}): {raw[:300]!r}"
        STATS["accepted"] += 1
        assert after - before == len(res.json()["accepted"]), f"{path}: {after - before} events stored, {len(res.json()['accepted'])} acknowledged"
    else:
        assert after == before, f"{case.method} {path} answered {res.status_code} but stored {after - before} events: {(raw or b'')[:300]!r}"
    assert session.get(f"{BASE}/healthz", timeout=5).status_code == 200


def test_zz_figures():
    """Prints the fuzz figures (runs last) and checks the run reached the valid path."""
    print(f"\nfuzz figures: {json.dumps(STATS, sort_keys=True)}")
    with open(os.environ.get("FUZZ_FIGURES", "/dev/null"), "w", encoding="utf-8") as f:
        json.dump(STATS, f)
    assert STATS["requests"] > 0
