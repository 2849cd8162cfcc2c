#!/usr/bin/env python3
"""Edit → fresh, stage by stage: where the time of each post edit of a k6/freshness.js run went.

Usage: fresh-stages.py K6_LOG OUT_JSON. Needs REDIS_PORT, REDIS_PASSWORD (the stack's) and
redis-cli; PURGER_REDIS_PREFIX (default purger).

The run logs each edit with EDIT_TIMES=1 (k6 clock, ms since the epoch): the save sent (start),
its response (saved) and the first read of the post through Varnish that showed it (fresh). The
purger's Redis has the rest, on the same machine's clock: an event's acceptedAt (the webhook
parsed and checked), its log entry's id (the time Redis appended it) and, in its receipt, when
each node applied it. An edit's event is the first event accepted after the save was sent whose
reason names that post's change ("post 12 updated (title)"), not any event naming its page: an
edit of a neighbouring post purges it too. Stages:
  save      start → saved      WordPress saves the post and answers (the editor's wait)
  sending   saved → accepted   the plugin commits its events after the response and sends them;
                               the purger reads and checks the webhook
  accepting accepted → logged  the purger appends the batch to its durable log (Redis)
  applying  logged → applied   a worker reads it and the last node answers its purge
  refetched applied → fresh    the next poll misses, the origin renders the page, Varnish serves it
Writes p50 / p90 / p99 / max per stage, the purger's and nodes' share (accepted → applied), the
pipeline's own share (saved → applied: sending, accepting and applying) and edit → fresh
(saved → fresh) to OUT_JSON, and prints them.
"""

import json
import os
import re
import statistics
import subprocess
import sys
from datetime import datetime

STAGES = ("save", "sending", "accepting", "applying", "refetched")
MSG = re.compile(r'msg=("(?:[^"\\]|\\.)*")')


def edits(log_path):
    """The edits the k6 log lists, in order."""
    out = []
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = MSG.search(line)
            if not m:
                continue
            msg = json.loads(m.group(1))
            if msg.startswith("freshness: edit "):
                out.append(json.loads(msg[len("freshness: edit "):]))
    return out


def redis(*commands):
    """Replies to these commands, in one redis-cli session (RESP3 as JSON, one per line)."""
    port, password = os.environ["REDIS_PORT"], os.environ["REDIS_PASSWORD"]
    script = "".join(" ".join(json.dumps(a) for a in c) + "\n" for c in commands)
    run = subprocess.run(["redis-cli", "-p", port, "--no-auth-warning", "-a", password, "--json"],
                         input=script, capture_output=True, text=True, check=True)
    replies = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
    if len(replies) != len(commands):
        raise SystemExit(f"fresh-stages: redis-cli answered {len(replies)} replies to {len(commands)} commands: {run.stderr.strip()}")
    return replies


def log_events(prefix, since_ms):
    """The purger log's events from since_ms on: (logged ms, event)."""
    (entries,) = redis(["XRANGE", f"{prefix}:log", f"{since_ms}-0", "+"])
    out = []
    for entry_id, fields in entries:
        pairs = dict(zip(fields[0::2], fields[1::2]))
        if "e" in pairs:
            out.append((int(entry_id.split("-")[0]), json.loads(pairs["e"])))
    return out


def applied_at(prefix, events):
    """Per event: the time (ms) its last node applied it, None where a node has not."""
    replies = redis(*[["HGETALL", f"{prefix}:evt:{e['site']}/{e['id']}"] for e in events])
    out = []
    for h in replies:
        times = [json.loads(v)["t"] for k, v in (h or {}).items() if k.startswith("n:")]
        ok = bool(times) and all(json.loads(v)["s"] == "applied" for k, v in h.items() if k.startswith("n:"))
        out.append(max(int(datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp() * 1000) for t in times) if ok else None)
    return out


def pct(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]


def main():
    log_path, out_path = sys.argv[1], sys.argv[2]
    prefix = os.environ.get("PURGER_REDIS_PREFIX", "purger")
    timed = edits(log_path)
    if not timed:
        raise SystemExit(f"fresh-stages: {log_path} lists no edits (EDIT_TIMES=1 not set?)")
    logged = log_events(prefix, min(e["start"] for e in timed) - 1000)
    rows, unmatched, used = [], 0, set()
    for e in timed:
        own = re.compile(rf"\bpost {int(e['post'])}\b(?! saved)")
        match = next((i for i, (_, ev) in enumerate(logged)
                      if i not in used and ev.get("acceptedAt", 0) >= e["start"] and own.search(ev.get("reason", ""))), None)
        if match is None:
            unmatched += 1
            continue
        used.add(match)
        rows.append((e, logged[match][0], logged[match][1]))
    applied = applied_at(prefix, [ev for _, _, ev in rows])
    per = {s: [] for s in STAGES}
    per["purger"] = []
    per["pipeline"] = []
    per["edit_to_fresh"] = []
    not_applied, each = 0, []
    for (e, logged_ms, ev), done in zip(rows, applied):
        if done is None:
            not_applied += 1
            continue
        marks = (e["start"], e["saved"], ev["acceptedAt"], logged_ms, done, e["fresh"])
        each.append({"post": e["post"], "event": ev["id"], **dict(zip(("start", "saved", "accepted", "logged", "applied", "fresh"), marks))})
        for name, a, b in zip(STAGES, marks, marks[1:]):
            per[name].append(b - a)
        per["purger"].append(done - ev["acceptedAt"])
        per["pipeline"].append(done - e["saved"])
        per["edit_to_fresh"].append(e["fresh"] - e["saved"])
    result = {
        "edits": len(timed), "matched": len(rows) - not_applied, "unmatched": unmatched, "not_applied": not_applied,
        "stages_ms": {k: {"p50": pct(v, 50), "p90": pct(v, 90), "p99": pct(v, 99), "max": max(v), "mean": round(statistics.fmean(v), 1)}
                      for k, v in per.items() if v},
        "each": each,
    }
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=2)
    print(f"  edit → fresh by stage ({result['matched']} of {len(timed)} edits matched to their event): p50 / p99 / max ms")
    for k, v in result["stages_ms"].items():
        print(f"    {k:<14} {v['p50']:>6} {v['p99']:>6} {v['max']:>6}")
    if not result["matched"]:
        raise SystemExit("fresh-stages: no edit matched an applied event")


if __name__ == "__main__":
    main()
