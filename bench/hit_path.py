#!/usr/bin/env python3
"""hit_path.py: the hit-path side-by-side of make bench (bench/run.sh) and bench/hit-path.sh.

  hit_path.py OUT.json --host HOST --target NAME URL PIDFILE [--target ...]
              --workload hot=/path [--workload zipf=@paths.txt] [--encodings plain,gzip]
              [--rounds 3] [--seconds 10] [--threads 2] [--connections 10] [--reference NAME]...
              [--wrk-cpus LIST] [--header "Name: value"]... [--no-host] [--origin-log PATH]

Each target is a cache at URL (scheme://host:port) whose processes are the one in PIDFILE and
its children (NGINX's master and workers, varnishd's manager and child). Every round runs wrk
once per workload, encoding and target; the targets' order rotates from round to round, so
drift on a shared machine hits every target alike. wrk uses THREADS threads and CONNECTIONS
keep-alive connections, as a plain `wrk URL` does by default (2 and 10).

  hot   one path, the one-hot-URL run
  zipf  the paths of a file, most popular first, drawn from a Zipf distribution (s = 1) by
        bench/wrk-zipf.lua; right before each run, every path is requested twice through the
        target (8 at a time), so the run starts where a site under steady load is: every post
        cached and recently read
  plain wrk's own headers (no Accept-Encoding); gzip adds Accept-Encoding: gzip

A run fails, and is named and left out of every figure, when wrk exits non-zero, reports a
socket error (connect, read, write, timeout) or any non-2xx/3xx answer, or serves nothing;
before a workload the first path must answer 200 through every target (a redirect is a
failure: wrk would count it as a success). The exit status is 1 when any run failed.

Per run: requests/s, p50/p99/max latency, the cache's CPU time per request (user + system of
its processes from /proc, in microseconds), and with --origin-log the lines the origin's access
log gained. Per workload and encoding: each target's median, min and max requests/s over the
rounds, and each target's ratio to each reference target, computed round by round (the runs
next to each other), as median, min and max. --wrk-cpus pins wrk to those CPUs (taskset).
"""
import argparse, collections, concurrent.futures, http.client, json, os, platform, resource, statistics, subprocess, sys, time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
HZ = os.sysconf("SC_CLK_TCK")


def die(msg):
    print(f"hit_path: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--host", help="the Host header (the site's host)")
    p.add_argument("--no-host", action="store_true", help="send no Host header of our own (wrk's is the URL's host:port)")
    p.add_argument("--target", nargs=3, action="append", metavar=("NAME", "URL", "PIDFILE"), required=True)
    p.add_argument("--workload", action="append", required=True, help="hot=/path or zipf=@file")
    p.add_argument("--encodings", default="plain,gzip")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seconds", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--connections", type=int, default=10)
    p.add_argument("--reference", action="append", default=[])
    p.add_argument("--wrk-cpus")
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--origin-log")
    a = p.parse_args()
    if not a.host and not a.no_host:
        die("--host HOST or --no-host is needed")
    names = [t[0] for t in a.target]
    if len(set(names)) != len(names):
        die(f"target names must differ: {names}")
    for r in a.reference:
        if r not in names:
            die(f"--reference {r} is none of the targets {names}")
    for e in a.encodings.split(","):
        if e not in ("plain", "gzip"):
            die(f"--encodings: '{e}' is neither plain nor gzip")
    if a.rounds < 1 or a.seconds < 1 or a.threads < 1 or a.connections < a.threads:
        die("--rounds, --seconds and --threads must be at least 1, --connections at least --threads")
    workloads = []
    for w in a.workload:
        kind, _, arg = w.partition("=")
        if kind == "hot" and arg.startswith("/"):
            workloads.append({"name": "hot", "paths": [arg], "file": None})
        elif kind == "zipf" and arg.startswith("@"):
            try:
                paths = [l.strip() for l in open(arg[1:]) if l.strip()]
            except OSError as e:
                die(f"--workload {w}: {e.strerror}")
            if not paths or not all(x.startswith("/") for x in paths):
                die(f"--workload {w}: the file must hold paths, one per line, each starting with /")
            workloads.append({"name": "zipf", "paths": paths, "file": os.path.abspath(arg[1:])})
        else:
            die(f"--workload '{w}': give hot=/path or zipf=@file")
    a.workloads = workloads
    for h in a.header:
        if ":" not in h:
            die(f"--header '{h}' is not 'Name: value'")
    return a


def headers(a, enc):
    h = {} if a.no_host else {"Host": a.host}
    for line in a.header:
        k, _, v = line.partition(":")
        h[k.strip()] = v.strip()
    if enc == "gzip":
        h["Accept-Encoding"] = "gzip"
    return h


def get(url, path, hdrs):
    """One GET, no redirect followed: (status, body length)."""
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        c.request("GET", path, headers=hdrs)
        r = c.getresponse()
        return r.status, len(r.read())
    finally:
        c.close()


def process_tree(pidfile):
    try:
        root = int(open(pidfile).read().strip())
    except (OSError, ValueError):
        return []
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                parent[int(d)] = int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, pending = [], [root]
    while pending:
        p = pending.pop()
        tree.append(p)
        pending += [c for c, pp in parent.items() if pp == p]
    return tree


def cpu_ticks(pids):
    t = 0
    for p in pids:
        try:
            f = open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()
            t += int(f[11]) + int(f[12])   # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return t


def log_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def wrk(a, url, workload, hdrs):
    cmd = ["wrk", f"-t{a.threads}", f"-c{a.connections}", f"-d{a.seconds}s", "--timeout", "10s"]
    for k, v in hdrs.items():
        cmd += ["-H", f"{k}: {v}"]
    env = dict(os.environ)
    if workload["name"] == "zipf":
        cmd += ["-s", os.path.join(HERE, "wrk-zipf.lua"), url + "/"]
        env["WRK_URLS"] = workload["file"]
    else:
        cmd += ["-s", os.path.join(HERE, "wrk-summary.lua"), url + workload["paths"][0]]
    if a.wrk_cpus:
        cmd = ["taskset", "-c", a.wrk_cpus] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=a.seconds + 60)
    summary = None
    for line in reversed(p.stdout.splitlines()):
        if line.startswith("{"):
            try:
                summary = json.loads(line)
            except ValueError:
                pass
            break
    return p.returncode, summary, (p.stderr.strip().splitlines() or [""])[-1]


def warm(url, paths, hdrs):
    """Every path twice, on 8 connections at a time; returns the answers that were not a 200, as
    "503 ×3, no answer ×1" ("" when all were)."""
    def one(path):
        try:
            return str(get(url, path, hdrs)[0])
        except OSError as e:
            return f"no answer ({type(e).__name__})"
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        bad = collections.Counter(s for _ in range(2) for s in ex.map(one, paths) if s != "200")
    return ", ".join(f"{k} ×{n}" for k, n in bad.most_common())


def machine():
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    return {"cpu_model": model, "cpus": os.cpu_count(), "kernel": platform.release(),
            "load_start": open("/proc/loadavg").read().split()[:3]}


def spread(values):
    return {"median": round(statistics.median(values), 3), "min": round(min(values), 3), "max": round(max(values), 3), "n": len(values)} if values else None


def main():
    a = parse_args()
    encodings = a.encodings.split(",")
    targets = [{"name": n, "url": u.rstrip("/"), "pidfile": f} for n, u, f in a.target]
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    info = machine()
    runs, failures, probe_failed = [], [], set()

    for w in a.workloads:
        for enc in encodings:
            for t in targets:
                key = f"{t['name']} {w['name']} {enc}"
                try:
                    status, size = get(t["url"], w["paths"][0], headers(a, enc))
                except OSError as e:
                    status, size = None, 0
                    failures.append(f"{key}: probe of {w['paths'][0]} failed ({e})")
                if status is not None and status != 200:
                    failures.append(f"{key}: {w['paths'][0]} answered {status}, not 200")
                if status != 200:
                    probe_failed.add(key)
                t.setdefault("page_bytes", {})[f"{w['name']}.{enc}"] = size

    for rnd in range(1, a.rounds + 1):
        order = targets[(rnd - 1) % len(targets):] + targets[:(rnd - 1) % len(targets)]
        for w in a.workloads:
            for enc in encodings:
                for t in order:
                    key = f"{t['name']} {w['name']} {enc}"
                    run = {"target": t["name"], "workload": w["name"], "encoding": enc, "round": rnd}
                    if key in probe_failed:
                        run["failed"] = "its probe failed (above)"
                        runs.append(run)
                        continue
                    pids = process_tree(t["pidfile"])
                    if not pids:
                        run["failed"] = f"no process in {t['pidfile']}"
                        runs.append(run)
                        failures.append(f"{key} round {rnd}: {run['failed']}")
                        continue
                    if w["name"] == "zipf":
                        # steady state: a site under load has every post in its cache, so each
                        # zipf run starts right after two passes over every path
                        bad = warm(t["url"], w["paths"], headers(a, enc))
                        if bad:
                            run["failed"] = f"warm-up answers that were not a 200: {bad}"
                            runs.append(run)
                            failures.append(f"{key} round {rnd}: {run['failed']}")
                            continue
                    off = log_size(a.origin_log) if a.origin_log else 0
                    c0, k0 = cpu_ticks(pids), resource.getrusage(resource.RUSAGE_CHILDREN)
                    rc, s, err = wrk(a, t["url"], w, headers(a, enc))
                    c1, k1 = cpu_ticks(process_tree(t["pidfile"]) or pids), resource.getrusage(resource.RUSAGE_CHILDREN)
                    if a.origin_log:
                        time.sleep(0.2)
                        run["origin_requests"] = sum(1 for l in open(a.origin_log, "rb").read()[off:].splitlines()
                                                     if b"/robots.txt" not in l and b"/wp-cron.php" not in l) \
                            if log_size(a.origin_log) >= off else None
                    reason = None
                    if rc != 0 or s is None:
                        reason = f"wrk exited {rc}: {err}"
                    elif s["requests"] == 0:
                        reason = "no request was answered"
                    elif s["socket_errors"]:
                        reason = f"{s['socket_errors']} socket errors (connect, read, write or timeout)"
                    elif s["non_2xx_3xx"]:
                        reason = f"{s['non_2xx_3xx']} answers were not 2xx or 3xx"
                    if s:
                        secs = s["duration_us"] / 1e6
                        run.update({"requests": s["requests"], "rps": round(s["requests"] / secs, 1),
                                    "p50_ms": s["p50_us"] / 1000, "p99_ms": s["p99_us"] / 1000, "max_ms": s["max_us"] / 1000,
                                    "socket_errors": s["socket_errors"], "non_2xx_3xx": s["non_2xx_3xx"],
                                    "cpu_s": round((c1 - c0) / HZ, 2),
                                    "cpu_us_per_request": round((c1 - c0) / HZ * 1e6 / s["requests"], 2) if s["requests"] else None,
                                    "wrk_cpu_s": round(k1.ru_utime + k1.ru_stime - k0.ru_utime - k0.ru_stime, 2)})
                    run["failed"] = reason
                    runs.append(run)
                    shown = f"{run.get('rps', 0):>10,.0f} req/s  p99 {run.get('p99_ms', 0):6.1f} ms  " \
                            f"{run.get('cpu_us_per_request') or 0:6.1f} µs CPU/req"
                    if "origin_requests" in run:
                        shown += f"  origin {run['origin_requests']}"
                    print(f"round {rnd} {w['name']:4} {enc:5} {t['name']:14} {shown}{'  FAILED: ' + reason if reason else ''}", flush=True)
                    if reason:
                        failures.append(f"{key} round {rnd}: {reason}")

    cells = {}
    for w in a.workloads:
        for enc in encodings:
            cell = {"targets": {}, "ratios": {}}
            ok = {(r["target"], r["round"]): r for r in runs
                  if r["workload"] == w["name"] and r["encoding"] == enc and not r.get("failed")}
            for t in targets:
                mine = [r for (n, _), r in ok.items() if n == t["name"]]
                cell["targets"][t["name"]] = {
                    "rps": spread([r["rps"] for r in mine]),
                    "cpu_us_per_request": spread([r["cpu_us_per_request"] for r in mine if r.get("cpu_us_per_request")]),
                    "p99_ms": spread([r["p99_ms"] for r in mine]),
                    "failed_runs": a.rounds - len(mine), "page_bytes": t["page_bytes"].get(f"{w['name']}.{enc}")}
            for ref in a.reference:
                for t in targets:
                    if t["name"] != ref:
                        per_round = [ok[(t["name"], r)]["rps"] / ok[(ref, r)]["rps"] for r in range(1, a.rounds + 1)
                                     if (t["name"], r) in ok and (ref, r) in ok]
                        cell["ratios"][f"{t['name']}/{ref}"] = spread(per_round)
            cells[f"{w['name']}.{enc}"] = cell

    result = {"started": started, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": info,
              "settings": {"rounds": a.rounds, "seconds": a.seconds, "threads": a.threads, "connections": a.connections,
                           "encodings": encodings, "wrk_cpus": a.wrk_cpus, "host": None if a.no_host else a.host,
                           "headers": a.header, "references": a.reference,
                           "workloads": {w["name"]: (w["paths"][0] if w["name"] == "hot" else f"{len(w['paths'])} paths") for w in a.workloads},
                           "wrk": subprocess.run(["wrk", "-v"], capture_output=True, text=True).stdout.split("\n")[0].strip()},
              "targets": {t["name"]: t["url"] for t in targets}, "cells": cells, "runs": runs, "failures": failures}
    info["load_end"] = open("/proc/loadavg").read().split()[:3]
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)

    print(f"\nhit path on {info['cpu_model']} ({info['cpus']} CPUs), {a.rounds} rounds of {a.seconds} s, "
          f"wrk -t{a.threads} -c{a.connections}; median req/s [min-max] and CPU µs per request:")
    for name, cell in cells.items():
        parts = []
        for t, c in cell["targets"].items():
            if c["rps"]:
                parts.append(f"{t} {c['rps']['median']:,.0f} [{c['rps']['min']:,.0f}-{c['rps']['max']:,.0f}] "
                             f"{c['cpu_us_per_request']['median'] if c['cpu_us_per_request'] else '?'} µs")
            else:
                parts.append(f"{t} no successful run")
        print(f"  {name:10} " + "; ".join(parts))
        for k, r in cell["ratios"].items():
            print(f"  {'':10} {k} {r['median']:.2f}x [{r['min']:.2f}-{r['max']:.2f}] over {r['n']} rounds" if r else f"  {'':10} {k}: no round to compare")
    if failures:
        print(f"\n{len(failures)} failed (left out of every figure):")
        for f in failures:
            print(f"  {f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
