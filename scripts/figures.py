#!/usr/bin/env python3
"""Writes the measured figures of README.md and docs/reliability.md from the published results.

make publish-results runs this after copying the newest results (scripts/publish-results.sh);
`python3 scripts/figures.py --check` fails when README.md's block is not what the files say.
Every row names the script that measured it and the date and machine its file records. A file
that is missing gives a row saying which command writes it, never a number from elsewhere.
Blocks sit between <!-- figures:NAME:begin --> and <!-- figures:NAME:end --> (BLOCKS below).
"""
import glob
import json
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def load(rel):
    try:
        with open(os.path.join(ROOT, rel)) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def get(d, path, default=None):
    for part in path.split("."):
        if not isinstance(d, dict) or part not in d:
            return default
        d = d[part]
    return d


def n(x, digits=0):
    if x is None:
        return "?"
    if isinstance(x, (int, float)) and digits == 0:
        return f"{round(x):,}"
    return f"{x:,.{digits}f}"


def when(d):
    """'2026-11-26, 2 × AMD EPYC, load 1.3' from whichever fields a results file has."""
    date = d.get("date") or d.get("finishedAt") or d.get("started") or d.get("generated") or ""
    m = d.get("machine") or {}
    cores = m.get("cores") or m.get("cpus") or d.get("cores")
    cpu = m.get("cpu") or ""
    cpu = re.sub(r"\s+\d+-Core Processor|\(R\)|\(TM\)|CPU @.*", "", cpu).strip()
    load = m.get("loadavg_1m_at_end") or (m.get("loadavg") or [None])[0] or (d.get("loadavg_before") or [None])[0]
    parts = [str(date)[:10]]
    if cores:
        parts.append(f"{cores} × {cpu}" if cpu else f"{cores} cores")
    if load is not None:
        parts.append(f"load {load}")
    return ", ".join(p for p in parts if p)


def missing(what, command):
    return (what, f"not measured yet: run `{command}`, then `make publish-results`", f"`{command}`", "–")


def e2e_rows():
    d = load("tests/e2e/results.json")
    if d is None:
        return [missing("edit saved → post page fresh at the edge", "make test-e2e")]
    fr, rest, au = d["fresh"], d["rest"], d["audit"]
    wp = f", WordPress {d['wordpress']}" if d.get("wordpress") else ""
    rows = [
        (f"edit saved → post page fresh at the edge, {fr['edits']} REST edits",
         f"p50 {n(get(fr, 'post.p50'))} ms, p99 {n(get(fr, 'post.p99'))} ms", "`make test-e2e` (check 2)", when(d) + wp),
        ("edit saved → post, home, category and feed all fresh",
         f"p50 {n(get(fr, 'all.p50'))} ms, p99 {n(get(fr, 'all.p99'))} ms", "`make test-e2e` (check 2)", when(d) + wp),
        (f"REST API and feeds after {rest['kinds']} kinds of change made from PHP or REST (comments, tags, uploads, authors, categories): edge answers what the origin answers",
         f"p50 {n(get(rest, 'fresh.p50'))} ms, max {n(get(rest, 'fresh.max'))} ms; a deleted comment's REST URL a 404 at the edge "
         f"{n(rest.get('deletedCommentGoneMs'))} ms after `wp_delete_comment()` returned", "`make test-e2e` (check 2d)", when(d) + wp),
        (f"stale pages and REST responses after {au.get('randomEdits', '?')} random edits of every kind, {n(au.get('checked'))} URLs audited",
         n(au.get("stale")), "`make test-e2e` (check 5), `make audit`", when(d) + wp),
    ]
    return rows


def own_site_rows():
    d = load("tests/compose/own-site.json")
    if d is None:
        return [missing("a new user puts the edge in front of their own WordPress", "make test-compose")]
    wp = f", WordPress {d['wordpress']}" if d.get("wordpress") else ""
    return [("a new user, the edge in front of a stock WordPress over HTTPS (README's commands, images built): "
             "first command → plugin uploaded and configured in a browser → an edit fresh at the edge; then an editor's save → fresh",
             f"{n(d.get('readme_first_command_to_fresh_edit_s'))} s; save → fresh {n(d.get('save_to_fresh_ms'))} ms",
             "`make test-compose` (tests/compose/own-site-test.sh)", when(d) + wp)]


def bulk_rows():
    d = load("tests/e2e/bulk-actions.json")
    if d is None:
        return [missing("bulk actions in one request: stale responses after each", "make test-e2e")]
    sc = d.get("scenarios") or []
    wp = f", WordPress {d['wordpress']}" if d.get("wordpress") else ""
    done = [s for s in sc if s.get("ok")]
    worst = lambda key: max((get(s, key) or 0) for s in done) if done else None
    return [(f"a bulk action in one request ({len(sc)} kinds: an import of 500 posts; Move to Trash, Restore, Bulk Edit and Delete Permanently "
             "on 20, 100 and 500 posts; Empty Trash; deleting 50 tags; deleting a user with 500 posts): stale responses after each; "
             "applied on every node after the request's answer; pages rendered again by the purger's refresh + by the next readers; an ordinary edit right after, fresh",
             f"**{sum(s.get('stale') or 0 for s in sc)} stale** ({len(done)} of {len(sc)} passed); applied max {n(worst('appliedMs'))} ms; "
             f"renders max {n(worst('renders.pipeline'))} + {n(worst('renders.nextVisit'))}; edit fresh max {n(worst('freshEditMs'))} ms",
             "`make test-e2e` (bulk actions)", when(d) + wp)]


def bulk_table():
    d = load("tests/e2e/bulk-actions.json")
    if d is None:
        return "Not measured yet: run `make test-e2e`, then `make publish-results`."
    out = [f"Measured by `make test-e2e` ({when(d)}, WordPress {d.get('wordpress', '?')}), from `tests/e2e/bulk-actions.json`:", "",
           "| action, in one request | posts | answered in | applied on every node after | renders: refresh + next readers | audit clean after | stale |",
           "|---|--:|--:|--:|--:|--:|--:|"]
    for s in d.get("scenarios") or []:
        out.append(f"| {s['name']} | {n(s.get('posts'))} | {n(s.get('actionMs'))} ms | {n(s.get('appliedMs'))} ms | "
                   f"{n(get(s, 'renders.pipeline'))} + {n(get(s, 'renders.nextVisit'))} | {n(s.get('cleanMs'))} ms | {n(s.get('stale'))} |")
    return "\n".join(out)


def freshness_rows():
    d = load("bench/freshness.json")
    if d is None:
        return [missing("edit → fresh under read load", "make bench-freshness")]
    post, allp = d["post"], d["post_home_category_feed"]
    repeats = d.get("purger_repurge_delays_ms") or "0"
    repeats = "none" if repeats in ("0", "") else f"{repeats} ms"
    share = get(d, "origin.share_pct")
    refresh = d.get("refresh_concurrency")
    with_refresh = "" if refresh is None else f", purger refresh {'off' if refresh == 0 else f'on ({refresh} at a time per node)'}"
    rows = [(f"the same under read load ({d['edits']} REST edits at {d['edit_rate']}/s, {n(d['reader_rps'])} reads/s{with_refresh}): post page; post + home + category + feed",
             f"p50 {n(post['p50_ms'])} / {n(allp['p50_ms'])} ms, p99 {n(post['p99_ms'])} / {n(allp['p99_ms'])} ms, **max {n(max(post['max_ms'], allp['max_ms']))} ms** "
             f"(purger repeats: {repeats}{f'; origin answered {share} % of requests' if share is not None else ''})", "`make bench-freshness`", when(d))]
    off = d.get("refresh_off")
    if not d.get("sitewide") or not off:
        return rows  # a run from before site-wide changes and the refresh comparison
    site, offsite, base = d["sitewide"], off.get("sitewide") or {}, d.get("baseline") or {}
    rd, offrd = d.get("readers") or {}, off.get("readers") or {}
    rows += [
        (f"site-wide changes under read load ({d['sitewide_changes']} at {d['sitewide_rate']}/s, site title and navigation by turns): every page checked fresh; purger refresh on / off",
         f"p50 {n(site['p50_ms'])} / {n(offsite.get('p50_ms'))} ms, p99 {n(site['p99_ms'])} / {n(offsite.get('p99_ms'))} ms, "
         f"**max {n(site['max_ms'])} ms** / {n(offsite.get('max_ms'))} ms", "`make bench-freshness`", when(d)),
        ("readers during those edits: p99; requests that waited on the origin (miss, pass, or a hit after waiting for a fetch); purger refresh on / off / no edits",
         f"p99 **{n(rd.get('p99_ms'), 1)}** / {n(offrd.get('p99_ms'), 1)} / {n(base.get('p99_ms'), 1)} ms; "
         f"waited {n(rd.get('origin_wait_pct'), 2)} / {n(offrd.get('origin_wait_pct'), 2)} / {n(base.get('origin_wait_pct'), 2)} %", "`make bench-freshness`", when(d)),
        ("origin requests per edit beyond the readers' own (pages fetched again by readers, the writer's checks or the refresh): post edit; site-wide change; purger refresh on / off",
         f"{n(d.get('origin_per_post_edit'), 1)} / {n(off.get('origin_per_post_edit'), 1)}; "
         f"{n(d.get('origin_per_sitewide_change'), 1)} / {n(off.get('origin_per_sitewide_change'), 1)}", "`make bench-freshness`", when(d)),
    ]
    bound = d.get("origin_busy")
    if bound:
        br = bound.get("readers") or {}
        rows.append((f"this machine's bound, without edits: WordPress rendering the {bound['sitewide_pages']} pages a site title change is checked on, "
                     "straight from the origin, as fast as it can beside the same readers: its rate, the least time to render them all again, the readers' p99 (inside Varnish)",
                     f"{n(bound['renders_per_s'], 1)} pages/s; **{n(bound['sitewide_floor_ms'])} ms**; p99 {n(br.get('p99_ms'), 1)} ms "
                     f"({n(br.get('edge_p99_ms'), 2)} ms; without edits {n(get(d, 'baseline.edge_p99_ms'), 2)} ms, during edits {n(rd.get('edge_p99_ms'), 2)} ms)",
                     "`make bench-freshness`", when(d)))
    return rows


STAGES = [("save", "save: WordPress answers the edit (the editor's wait; not in edit → fresh)"),
          ("sending", "sending: the plugin commits after the response and sends; the purger reads and checks it"),
          ("accepting", "accepting: the purger appends it to its durable log"),
          ("applying", "applying: a worker reads it, every node answers its purge"),
          ("refetched", "refetched: the next read misses, WordPress renders the page, Varnish serves it"),
          ("purger", "**the purger's and the nodes' share**: accepted → applied on every node"),
          ("pipeline", "the pipeline's own share: save answered → applied on every node"),
          ("edit_to_fresh", "**edit → fresh**: save answered → the first fresh read")]


def stage_runs():
    """(label, results file) of the make bench-freshness runs that broke edit → fresh down by stage."""
    out = []
    for rel, label in (("bench/freshness.json", "quiet"), ("bench/freshness-loaded.json", "loaded")):
        d = load(rel)
        if d and get(d, "stages.stages_ms"):
            hogs = d.get("cpu_hogs") or 0
            out.append((f"{label}{f' ({hogs} busy processes)' if hogs else ''}", d))
    return out


def stage_rows():
    runs = stage_runs()
    if not runs:
        return [missing("a post edit → fresh by stage (plugin sending, purger accepting, node applying, page refetched)", "make bench-freshness")]
    rows = []
    for label, d in runs:
        st = get(d, "stages.stages_ms")
        wide = "" if not d.get("cpu_hogs") else (
            f"; site-wide changes ({d['sitewide_changes']} at {d['sitewide_rate']}/s) every page fresh p50 {n(get(d, 'sitewide.p50_ms'))} ms, "
            f"{d['timeouts']} changes not fresh within {n(d.get('fresh_timeout_ms', 10000) / 1000)} s: the origin renders {n(get(d, 'origin_busy.renders_per_s'), 1)} pages/s at most under that load")
        parts = "; ".join(f"{k} {n(get(st, f'{k}.p50'))} / {n(get(st, f'{k}.p99'))}" for k in ("sending", "accepting", "applying", "refetched"))
        rows.append((f"a post edit → fresh by stage, machine {label}, purger refresh on: p50 / p99 ms per stage; the purger's and nodes' share (accepted → applied on every node); "
                     "the pipeline's (save answered → applied); edit → fresh",
                     f"{parts}; purger + nodes **{n(get(st, 'purger.p50'))} / {n(get(st, 'purger.p99'))} ms**; pipeline {n(get(st, 'pipeline.p50'))} / {n(get(st, 'pipeline.p99'))} ms; "
                     f"edit → fresh {n(get(st, 'edit_to_fresh.p50'))} / {n(get(st, 'edit_to_fresh.p99'))} ms"
                     f"{'' if not get(d, 'refresh_off.stages.stages_ms.edit_to_fresh') else ' (refresh off: ' + n(get(d, 'refresh_off.stages.stages_ms.edit_to_fresh.p50')) + ' / ' + n(get(d, 'refresh_off.stages.stages_ms.edit_to_fresh.p99')) + ' ms)'}{wide}",
                     "`make bench-freshness`" + (f" `BENCH_CPU_HOGS={d['cpu_hogs']}`" if d.get("cpu_hogs") else ""), when(d)))
    return rows


def stage_table():
    runs = stage_runs()
    if not runs:
        return "Not measured yet: run `make bench-freshness` (and with `BENCH_CPU_HOGS=2`), then `make publish-results`."
    head = " | ".join(f"{label}: p50 / p90 / p99 / max" for label, _ in runs)
    out = ["Each post edit of the refresh-on run, from the k6 writer's clock and the purger's log and receipts (`bench/fresh-stages.py`); "
           + "; ".join(f"{label}: {when(d)}, {get(d, 'stages.matched')} edits at {d.get('edit_rate')}/s under {n(d.get('reader_rps'))} reads/s" for label, d in runs) + ".", "",
           f"| stage | {head} |", "|---|" + "---|" * len(runs)]
    for key, text in STAGES:
        cells = []
        for _, d in runs:
            v = get(d, f"stages.stages_ms.{key}")
            cells.append("-" if not v else f"{n(v['p50'])} / {n(v['p90'])} / {n(v['p99'])} / {n(v['max'])} ms")
        out.append(f"| {text} | {' | '.join(cells)} |")
    return "\n".join(out)


def cache_size_rows():
    d = load("bench/cache-size.json")
    if d is None:
        return [missing("one edit with 1k / 10k / 100k pages cached: edit → fresh, Varnish CPU", "make bench-cache-size")]
    sizes, setup, r = d["sizes"], d["setup"], get(d, "target.ratios") or {}
    label = " / ".join(kilo(s["pages"]) for s in sizes)
    verdict = f"{'met' if get(d, 'target.met') else '**not met**'}: largest ÷ smallest p50 {render(r.get('edit_fresh_p50'))}×, CPU {render(r.get('varnish_cpu_per_edit'))}×"
    bulk = [s["bulk"] for s in sizes]
    return [
        (f"a post edit ({setup['keys_per_edit']} keys hard-purged, {setup['refresh_pages_per_edit']} pages refreshed) with {label} pages cached: "
         "edit → fresh at the edge p50 (browsers; clients without gzip); Varnish CPU per edit",
         f"p50 {' / '.join(n(get(s, 'edits.fresh_ms.p50')) for s in sizes)} ms"
         f"{'' if get(sizes[0], 'edits.fresh_plain_ms') is None else f' (plain: ' + ' / '.join(n(get(s, 'edits.fresh_plain_ms.p50')) for s in sizes) + ' ms)'}; "
         f"CPU {' / '.join(n(get(s, 'edits.varnish_cpu_ms_per_edit'), 1) for s in sizes)} ms (target ≤ 2× {verdict})",
         "`make bench-cache-size`", when(d)),
        (f"a bulk action ({n(setup['bulk_keys'])} keys, {n(setup['bulk_key_bytes'])} bytes, one event) with {label} pages cached: edit → fresh; Varnish CPU",
         f"{' / '.join('stalled' if b['stalled'] else n(b['fresh_ms']) for b in bulk)}{'' if all(b['stalled'] for b in bulk) else ' ms'}; "
         f"CPU {' / '.join(n(b['varnish_cpu_ms']) for b in bulk)} ms", "`make bench-cache-size`", when(d)),
    ]


def kilo(x):
    return f"{x // 1000:,}k" if x >= 1000 and x % 1000 == 0 else n(x)


def cache_size_table(rel, title):
    """One run of make bench-cache-size: a row per cache size, then the target's ratios."""
    d = load(rel)
    load_avg = lambda key: " ".join(str(x) for x in get(d, key, []))
    out = [f"{title} ({rel}; {when(d)}; hard key purge with refresh: {d['setup']['invalidation']}; {d['varnish']}; "
           f"load average {load_avg('machine.loadavg_at_start')} at the start, {load_avg('machine.loadavg')} at the end):", "",
           "| pages cached | objects | edit → fresh p50 / p90 / max (clients without gzip) | Varnish CPU per edit | bans added (most at once) | ban tests per edit "
           "| ban lurker still busy a second after the last edit | objects purged per edit (the node's count) | bulk action → fresh | its Varnish CPU |",
           "|---:|---:|---|---:|---|---:|---:|---:|---|---:|"]
    for s in d["sizes"]:
        e, b, fresh = s["edits"], s["bulk"], s["edits"]["fresh_ms"]
        timeouts = f" ({e['timeouts']} not fresh in {n(b['limit_ms'])} ms)" if e["timeouts"] else ""
        purged = "by bans (not counted)" if e["bans_added"] else n(get(e, "objects_invalidated_per_edit.p50"))
        repeats = f" (median of {b['repeats']})" if b.get("repeats", 1) > 1 else ""
        answer = (b.get("node_answer") or "").replace("answered ", "")
        bulk = (f"**stalled**: not fresh in {n(b['limit_ms'])} ms{f' (Varnish answered `{answer}`)' if answer else ''}"
                if b["stalled"] else f"{n(b['fresh_ms'])} ms{repeats}")
        fp = e.get("fresh_plain_ms")
        plain = f" ({n(fp['p50'])} / {n(fp['p90'])} / {n(fp['max'])} ms)" if fp else " (not measured)"
        out.append(f"| {n(s['pages'])} | {n(s['n_object'])} | {n(fresh['p50'])} / {n(fresh['p90'])} / {n(fresh['max'])} ms{plain}{timeouts} | "
                   f"**{n(e['varnish_cpu_ms_per_edit'], 1)} ms** | {n(e['bans_added'])} ({n(e['bans_max'])}) | {n(e['ban_tests_per_edit'])} | "
                   f"{n(e.get('lurker_busy_s_after'), 1)} s | "
                   f"{purged} | {bulk} | {n(b['varnish_cpu_ms'])} ms |")
    r = get(d, "target.ratios") or {}
    ratio = lambda k: "–" if r.get(k) is None else f"{render(r[k])}×"
    a, z = d["sizes"][0], d["sizes"][-1]
    slope = round((z["edits"]["varnish_cpu_ms_per_edit"] - a["edits"]["varnish_cpu_ms_per_edit"]) * 1000 / max(z["n_object"] - a["n_object"], 1), 2) + 0.0
    out += ["", f"Varnish CPU per edit, from the smallest cache to the largest: {slope:+.2f} µs per cached object."]
    out += ["", f"Target, {get(d, 'target.rule')}: edit → fresh p50 {ratio('edit_fresh_p50')}, p90 {ratio('edit_fresh_p90')}, "
            f"Varnish CPU per edit {ratio('varnish_cpu_per_edit')}, bulk action → fresh {ratio('bulk_fresh')}, its CPU {ratio('bulk_varnish_cpu')}: "
            f"**{'met' if get(d, 'target.met') else 'not met'}**."]
    return "\n".join(out)


def cache_size_text():
    if load("bench/cache-size.json") is None:
        return "No published run yet: run `make bench-cache-size`, then `make publish-results`."
    out = [cache_size_table("bench/cache-size.json", "Last `make bench-cache-size`")]
    if load("bench/cache-size-before.json") is not None:
        out += ["", cache_size_table("bench/cache-size-before.json", "Before: the same bench against the tree where a hard key purge with refresh was a ban")]
    return "\n".join(out)


def purger_rows():
    d = load("purger/bench/results.json")
    if d is None:
        return [missing("purger: webhook accepted → applied", "make bench-purger")]
    rows = [
        (f"purger: webhook accepted → applied on {get(d, 'setup.varnish_nodes')} Varnish nodes, sustained",
         f"{n(get(d, 'sustained.applied_per_s'))} events/s", "`make bench-purger`", when(d)),
        ("purger: accepted → applied at 500 events/s",
         f"p50 {n(get(d, 'paced_500_per_s.p50_ms'))} ms, p99 {n(get(d, 'paced_500_per_s.p99_ms'))} ms", "`make bench-purger`", when(d)),
    ]
    per_node = get(d, "burst_1000.requests_per_node") or {}
    repeats = get(d, "setup.repurge_delays_ms") or []
    burst = f"{max(per_node.values()) if per_node else '?'} requests per Varnish node"
    if repeats:
        burst += f", plus the same in each repeat ({', '.join(f'{r} ms' for r in repeats)})"
    rows.append(("purger: 1,000-event burst", burst, "`make bench-purger`", when(d)))
    race = d.get("purge_racing_a_fetch")
    if race:
        rows.append((f"purge landing while a fetch of the old page is in flight ({race['races']} races): edit → first fresh response",
                     f"p50 {n(get(race, 'fresh_ms_when_purged_during_fetch.p50'))} ms, max {n(get(race, 'fresh_ms_all.max'))} ms; "
                     f"old page kept after the purge: {race['old_page_kept_after_the_purge']}", "`make bench-purger`", when(d)))
    fan = d.get("fanout") or {}
    if fan:
        keys = sorted(fan, key=int)
        rows.append((f"purger: 1,000-event burst to {' / '.join(keys)} Varnish nodes, time to the last node",
                     " / ".join(n(get(fan[k], "burst_1000.to_last_node_ms")) for k in keys) + " ms", "`make bench-purger` (fan-out)", when(d)))
        rows.append((f"purger: sustained with {' / '.join(keys)} nodes; at 500 events/s",
                     " / ".join(n(get(fan[k], "sustained.applied_per_s")) for k in keys) + " events/s; p99 "
                     + " / ".join(n(get(fan[k], "paced_500_per_s.p99_ms")) for k in keys) + " ms", "`make bench-purger` (fan-out)", when(d)))
    rows.append(("purger RSS under load", f"{n(d.get('purger_max_rss_mb'))} MB", "`make bench-purger`", when(d)))
    w = load("purger/bench/wait-latency.json")
    if w:
        a, b = w["concurrency_1_events_1"], w["concurrency_1_events_50"]
        rows.append(("purger: a webhook's 202 waiting for a Redis replica (`WAIT`, Sentinel deployments)",
                     f"p50 {n(a['with_wait_1_replica']['p50_ms'], 1)} ms instead of {n(a['without_wait']['p50_ms'], 1)} ms for one event; "
                     f"{n(b['with_wait_1_replica']['p50_ms'], 1)} instead of {n(b['without_wait']['p50_ms'], 1)} ms for 50", "`npm run bench:wait` in `purger/`", when(w)))
    return rows


def conformance_rows():
    files = sorted(glob.glob(os.path.join(ROOT, "wordpress-plugin/tests/results/conformance-*.json")),
                   key=lambda f: [int(x) for x in re.findall(r"\d+", os.path.basename(f))])
    if not files:
        return [missing("plugin: views checked after every kind of edit", "make test-plugin")]
    reports = [json.load(open(f)) for f in files]
    first = reports[0]["counts"]
    figure = "; ".join(
        f"WordPress {r['wordpress']}: {r['counts']['under']} under-invalidated, {r['counts']['soft']} removals purged soft, "
        f"{r['counts']['over']} over-invalidated ({r['counts']['over_by_ban']} of them by {r['counts']['bans']} deliberate site-wide bans) of {n(r['counts']['checks'])} checks"
        for r in reports)
    return [(f"plugin: {first['views']} views (pages, feeds, REST responses) checked after {first['edits']} kinds of edit",
             figure, "`make test-plugin`, `make test-platforms` (conformance harness)", when(reports[-1]))]


def bench_rows():
    d = load("bench/results.json")
    if d is None:
        return [missing("concurrent misses on one cold URL", "make bench")]
    herd = d.get("herd") or {}
    origin = sorted({v.get("origin_requests") for v in herd.values()})
    return [("concurrent misses on one cold URL: 10 clients (varnishtest), 100 clients (k6 `herd`)",
             f"{' / '.join(str(o) for o in origin)} origin request(s) per cache", "`make test-vcl`, `make bench`",
             when({"date": d.get("generated") or get(d, "run.date") or "", "machine": {"cores": get(d, "machine.cores"), "cpu": get(d, "machine.cpu")}}))]


def chaos_rows():
    d = load("reliability/results/chaos.json")
    if d is None:
        return [missing("origin down under read load", "make chaos")]
    f = {r["check"].split("/")[-1]: r.get("figures") or {} for r in d["results"]}
    rows = []
    if "origin-down" in f:
        o = f["origin-down"]
        rows.append((f"origin down {o['outageSeconds']} s under read load",
                     f"{n(o['cachedRequestsDuringOutage'])} cached-page requests, {o['clientErrors']} errors; uncached pages a 503 in ≤ {n(get(o, 'uncached503Ms.max'))} ms",
                     "`make chaos`", when(d)))
    if "origin-hung" in f:
        o = f["origin-hung"]
        rows.append((f"origin hung {o['hangSeconds']} s (accepts, never answers)",
                     f"{o['clientErrors']} errors on {n(o['cachedRequestsDuring'])} cached-page requests; once the probe says sick (after {o['originMarkedSickAfterS']} s), "
                     f"uncached pages answered within {n(get(o, 'uncachedAfterSickMs.max'))} ms", "`make chaos`", when(d)))
    if "worker-kill" in f:
        o = f["worker-kill"]
        applied = sorted(set((o.get("receiptsApplied") or {}).values()))
        rows.append((f"purger worker SIGKILLed mid-burst of {n(o['events'])} events, {o['nodes']} Varnish nodes",
                     f"{' / '.join(n(a) for a in applied)} applied on every node, {o['canariesStale']} stale", "`make chaos`", when(d)))
    return rows


def soak_rows():
    d = load("reliability/results/soak.json")
    if d is None:
        return [missing("soak", "make soak")]
    f = d["figures"]
    mem = f.get("memory") or {}
    growth = max((m.get("perProcessGrowthPct", m.get("growthPct", 0)) for k, m in mem.items() if k != "redis-server"), default=None)
    r = f.get("redis") or {}
    o = f.get("origin") or {}
    origin = (f"origin answered {o['sharePct']} % of reads (the edits' refetches), {o.get('passedSharePct')} % of reads passed across an invalidation"
              if "sharePct" in o else "origin share not measured in this run")
    return [(f"{round(f['seconds'] / 60)} min soak: {n(f.get('readsPerSecond'))} reads/s, an edit every 5 s, 20 key purges/s, bans",
             f"{len(f.get('failures') or [])} errors, {origin}, memory growth ≤ {growth} % per process "
             f"(Redis: {n(r.get('bytesPerEvent'))} bytes per stored event), ban list ≤ {get(f, 'bans.max')}, "
             f"time-to-fresh p95 {n(get(f, 'timeToFreshMs.p95'))} ms, {f.get('auditStale')} stale", "`make soak`", when(d))]


def words(key):
    """camelCase figure names as words: 'cachedRequestsDuringOutage' → 'cached requests during outage'."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: " " + m.group(1).lower(), key).replace("_", " ")


def render(value):
    """A results file's figure as text: numbers with separators, small objects inline, long lists counted."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return n(value, 0 if float(value).is_integer() or abs(value) >= 100 else 1)
    if isinstance(value, dict):
        return ", ".join(f"{k if not re.match(r'^[a-z]+[A-Z]', k) else words(k)} {render(v)}" for k, v in value.items())
    if isinstance(value, list):
        return f"{len(value)} listed" if len(value) > 6 else ", ".join(render(v) for v in value)
    return str(value)


def results_table(rel, command, title):
    """Every check of a reliability results file with all its figures, and where they came from."""
    d = load(rel)
    if d is None:
        return f"No published results yet: run `{command}`, then `make publish-results`."
    out = [f"Last `{command}` ({rel}): {d.get('passed', '?')} passed, {d.get('failed', '?')} failed; {when(d)}, "
           f"{get(d, 'machine.os', '')}, Node {get(d, 'machine.node', '?')}.", "",
           f"| {title} | figures |", "|---|---|"]
    for r in d["results"]:
        figures = "; ".join(f"{words(k)}: {render(v)}" for k, v in (r.get("figures") or {}).items())
        out.append(f"| `{r['check']}` {'' if r.get('pass') else '**FAILED** '}| {figures.replace('|', '/')} |")
    return "\n".join(out)


def soak_text():
    d = load("reliability/results/soak.json")
    if d is None:
        return "No published soak yet: run `make soak`, then `make publish-results`."
    f = d["figures"]
    mib = lambda k: f"{k / 1024:,.1f} MiB"
    out = [f"Last run: {when(d)}, {f['seconds']} s, warm-up {f['warmupSeconds']} s; result: **{'pass' if d.get('pass') else 'FAIL'}**.", "",
           "| process (with children) | first minute after warm-up | last minute | growth | per process | processes | max |",
           "|---|---|---|---|---|---|---|"]
    for name, m in (f.get("memory") or {}).items():
        procs = m.get("processes") or {}
        out.append(f"| {name} | {mib(m['firstMinuteKiB'])} | {mib(m['lastMinuteKiB'])} | {m['growthPct']:+.1f} % | "
                   f"{m.get('perProcessGrowthPct', m['growthPct']):+.1f} % | {procs.get('lastMinute', '?')} ({procs.get('max', '?')} at most) | {mib(m['maxKiB'])} |")
    r, by, ttf, bans = f.get("redis") or {}, f.get("byCache") or {}, f.get("timeToFreshMs") or {}, f.get("bans") or {}
    reads = f.get("reads") or 0
    o = f.get("origin") or {}
    share = (f"origin requests {n(o['requests'])} ({o['sharePct']} % of reads; at most {o.get('maxPct')} %), reads passed across an invalidation "
             f"{n(o.get('passedReads'))} ({o.get('passedSharePct')} %; at most {o.get('passedMaxPct')} %)" if "sharePct" in o else "origin share not measured in this run")
    out += ["",
            f"- Redis: `used_memory` {n(r.get('usedBytesAfterWarmup', 0) / 1e6, 1)} MB after warm-up, {n(r.get('usedBytesAtEnd', 0) / 1e6, 1)} MB at the end "
            f"for {n(r.get('eventsStoredAfterWarmup'))} events stored: **{n(r.get('bytesPerEvent'))} bytes per event** (limit {n(r.get('bytesPerEventMax'))}); "
            f"a day at 5 events/s would hold {n(r.get('projected24hAt5PerSecondBytes', 0) / 2**20)} MiB (maxmemory {n(r.get('maxmemoryBytes', 0) / 2**20)} MiB); "
            f"the log peaked at {n(r.get('logEntriesMax'))} entries.",
            f"- Reads: {n(reads)} ({n(f.get('readsPerSecond'))}/s), {n(f.get('readErrors'))} errors, p50 {render(get(f, 'readLatencyMs.p50'))} ms, "
            f"p95 {render(get(f, 'readLatencyMs.p95'))} ms, max {render(get(f, 'readLatencyMs.max'))} ms; by X-Cache: {render(by)}; {share}.",
            f"- Events: {n(f.get('eventsSent'))} signed events accepted, {n(f.get('edits'))} WordPress edits; failures: {len(f.get('failures') or [])}.",
            f"- Ban list: at most {bans.get('max')} (first minute after warm-up ≤ {bans.get('firstMinuteMax')}, last minute ≤ {bans.get('lastMinuteMax')}); {n(bans.get('added'))} bans added.",
            f"- Time-to-fresh (edit saved → new content through Varnish): p50 {n(ttf.get('p50'))} ms, p95 {n(ttf.get('p95'))} ms, max {n(ttf.get('max'))} ms over {n(ttf.get('n'))} edits.",
            f"- Final audit: {n(f.get('auditChecked'))} pages, **{n(f.get('auditStale'))} stale**."]
    return "\n".join(out)


def purger_tables():
    d = load("purger/bench/results.json")
    if d is None:
        return "No published run yet: run `make bench-purger`, then `make publish-results`."
    m = d.get("machine") or {}
    setup = d.get("setup") or {}
    repeats = setup.get("repurge_delays_ms") or []
    race = d.get("purge_racing_a_fetch") or {}
    per_node = get(d, "burst_1000.requests_per_node") or {}
    lanes = get(d, "burst_1000.requests_per_node_and_lane_with_repeats") or {}
    out = [f"Run of {when(d)}, Node {m.get('node', '?')}, {setup.get('varnish_nodes', '?')} Varnish nodes, "
           f"Redis `appendfsync {setup.get('redis_appendfsync', '?')}`, purger repeats: {', '.join(f'{r} ms' for r in repeats) or 'none'}.", "",
           "| measure | result | target |", "|---|---|---|",
           f"| sustained, accepted → applied on every node | **{n(get(d, 'sustained.applied_per_s'))} events/s** ({n(get(d, 'sustained.events'))} events; accepted {n(get(d, 'sustained.accepted_per_s'))}/s) | ≥ 5,000/s |",
           f"| accepted → applied on every node at 500 events/s | **p50 {n(get(d, 'paced_500_per_s.p50_ms'))} ms, p99 {n(get(d, 'paced_500_per_s.p99_ms'))} ms** (max {n(get(d, 'paced_500_per_s.max_ms'))} ms) | p99 < 50 ms |",
           f"| purger RSS, max over the run | **{n(d.get('purger_max_rss_mb'))} MB** | < 150 MB |",
           f"| 1,000-event burst | **{max(per_node.values()) if per_node else '?'} requests per node**"
           + (f"; with repeats, per node and lane: {render(lanes)}" if repeats and lanes else "") + " | ≤ 10 per lane |"]
    if race:
        out.append(f"| a purge landing during a {n(get(d, 'setup.race_fetch_ms', 200))} ms fetch of the old page: edit → fresh | **p50 {n(get(race, 'fresh_ms_when_purged_during_fetch.p50'))} ms, "
                   f"max {n(get(race, 'fresh_ms_all.max'))} ms** ({race.get('purged_during_fetch')}/{race.get('races')} purged during the fetch; "
                   f"old page kept {race.get('old_page_kept_after_the_purge')} times) | max < 500 ms |")
    fan = d.get("fanout") or {}
    if fan:
        out += ["", "| Varnish nodes | 1,000-event burst: first → last node | requests per node | sustained, applied on every node | accepted → applied on every node at 500 events/s |",
                "|---|---|---|---|---|"]
        for k in sorted(fan, key=int):
            f = fan[k]
            b = f.get("burst_1000") or {}
            first, last = b.get("to_first_node_ms"), b.get("to_last_node_ms")
            burst = f"**{n(last)} ms**" if first == last else f"{n(first)} → **{n(last)} ms**"
            reqs = sorted(set(b.get("requests_per_node") or []))
            out.append(f"| {k} | {burst} | {' / '.join(str(r) for r in reqs)} | {n(get(f, 'sustained.applied_per_s'))} events/s | "
                       f"p50 {n(get(f, 'paced_500_per_s.p50_ms'))} ms, p99 {n(get(f, 'paced_500_per_s.p99_ms'))} ms |")
    return "\n".join(out)


def purger_wait_table():
    w = load("purger/bench/wait-latency.json")
    if w is None:
        return "No published run yet: run `npm run bench:wait` in `purger/`, then `make publish-results`."
    rows = [("one at a time", 1, "concurrency_1_events_1"), ("one at a time", 50, "concurrency_1_events_50"), ("16 concurrent", 50, "concurrency_16_events_50")]
    out = [f"Run of {when(w)} (1-minute load average {(w.get('loadavg_after') or ['?'])[0]} at the end), {n(w.get('requests_per_case'))} webhooks per case.", "",
           "| webhooks | events each | without WAIT (`PURGER_REDIS_MIN_REPLICAS=0`) p50 / p99 | with WAIT for 1 replica p50 / p99 |", "|---|---|---|---|"]
    for label, events, key in rows:
        c = w.get(key) or {}
        a, b = c.get("without_wait") or {}, c.get("with_wait_1_replica") or {}
        out.append(f"| {label} | {events} | {render(a.get('p50_ms'))} / {render(a.get('p99_ms'))} ms | {render(b.get('p50_ms'))} / {render(b.get('p99_ms'))} ms |")
    return "\n".join(out)

def hit_when(d):
    """'2026-11-28 13:54 UTC, 2 × AMD EPYC, load 0.31' of a bench/hit_path.py or profile file."""
    m = d.get("machine") or {}
    cpu = re.sub(r"\s+\d+-Core Processor|\(R\)|\(TM\)|CPU @.*", "", m.get("cpu_model") or "").strip()
    return f"{(d.get('started') or '')[:16].replace('T', ' ')} UTC, {m.get('cpus')} × {cpu}, load {(m.get('load_start') or ['?'])[0]}"


def spread(d, digits=0, unit=""):
    return "–" if not d else f"{n(d['median'], digits)}{unit} [{n(d['min'], digits)}–{n(d['max'], digits)}]"


HIT_EXPLAIN = [
    ("explain-config", "The configurations, one hot post: make bench's NGINX before (buffered log, `Accept-Encoding` cleared) "
     "and Debian's `nginx.conf` (sendfile, tcp_nopush, gzip) against the article's block on NGINX's defaults; make bench's "
     "VCL before (cache state shown to everyone) against the VCL as users run it"),
    ("explain-pinned", "Pinned as an outside run may be: the caches on CPU 0, wrk on CPU 1, plain"),
    ("explain-close", "`Connection: close` (a new connection per request), plain"),
    ("explain-zipf", "Zipf over every post, plain: the article's NGINX, and NGINX with `proxy_cache_background_update on`"),
]
HIT_NAMES = {"nginx": "NGINX, the article's block on NGINX's defaults", "nginx-bench-old": "NGINX as make bench had it before",
             "nginx-debian": "NGINX with Debian's sendfile, tcp_nopush, gzip", "minimal": "minimal Varnish",
             "vcl": "this VCL as users run it (quiet)", "vcl-debug-for-all": "this VCL with the cache state for everyone (make bench's before)",
             "nginx-background-update": "NGINX + proxy_cache_background_update"}


def hit_path_text():
    rel = "bench/hit-path"
    out = []
    for name, title in HIT_EXPLAIN:
        d = load(f"{rel}/{name}.json")
        if d is None:
            out += [f"*{title}*: not measured yet: run `make bench-hit-path MODE=explain`, then `make publish-results`.", ""]
            continue
        st = d["settings"]
        out += [f"*{title}* (`{rel}/{name}.json`: {hit_when(d)}; wrk -t{st['threads']} -c{st['connections']}, "
                f"{st['rounds']} rounds of {st['seconds']} s in rotated order; median [min–max])", "",
                "| cell | cache | requests/s | CPU µs/request | p99 ms | ÷ " + " | ÷ ".join(st["references"]) + " |",
                "|---|---|---:|---:|---:|" + "---:|" * len(st["references"])]
        for cell, c in d["cells"].items():
            for t, v in c["targets"].items():
                ratios = [spread(c["ratios"].get(f"{t}/{r}"), 2, "×") if t != r else "" for r in st["references"]]
                out.append(f"| {cell.replace('.', ', ')} | {HIT_NAMES.get(t, t)} | {spread(v['rps'])} | {spread(v['cpu_us_per_request'], 1)} | "
                           f"{spread(v['p99_ms'], 1)} | " + " | ".join(ratios) + " |")
        if d["failures"]:
            out.append(f"\nFailed and left out: {'; '.join(d['failures'])}.")
        out.append("")
    d = load(f"{rel}/explain-no-host.json")
    if d is not None:
        out += [f"*No `Host` header* (`{rel}/explain-no-host.json`, {hit_when(d)}): every run reported failed, none averaged in: "
                + "; ".join(d["failures"]) + ".", ""]
    d = load(f"{rel}/ablate.json")
    if d is None:
        out += ["*Ablation*: not measured yet: run `make bench-hit-path MODE=ablate`, then `make publish-results`.", ""]
    else:
        st, cell = d["settings"], next(iter(d["cells"].values()))
        base = cell["targets"]["vcl"]
        out += [f"*Each feature's calls removed in turn* (`{rel}/ablate.json`: {hit_when(d)}; one hot post, plain, {st['rounds']} rounds of "
                f"{st['seconds']} s; a bench-only copy of vcl/, never a configuration to run). The quiet VCL: {spread(base['rps'])} req/s, "
                f"{spread(base['cpu_us_per_request'], 1)} µs CPU per request.", "",
                "| without | requests/s ÷ the whole VCL (round by round) | CPU µs/request |", "|---|---:|---:|"]
        for t, v in cell["targets"].items():
            if t != "vcl":
                out.append(f"| {t.removeprefix('no-')} | {spread(cell['ratios'].get(f'{t}/vcl'), 2, '×')} | {spread(v['cpu_us_per_request'], 1)} |")
        out.append("")
    d = load(f"{rel}/profile.json")
    if d is None:
        out.append("*Profile*: not measured yet: run `make bench-profile`, then `make publish-results`.")
    else:
        out += [f"*Where the CPU goes* (`{rel}/profile.json`: {hit_when(d)}; {d['perf']}; the VCL compiled without inlining, so "
                "its subroutines have their own samples): share of the cache's samples; *outside the kernel* is the CPU per request times "
                "the share of samples in user space: the server, libc, the VCL, its vmods", "",
                "| cache | requests/s | CPU µs/request | of which outside the kernel | kernel | the server binary | libc | pcre2 | compiled VCL | top user-space symbols |",
                "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for t, c in d["caches"].items():
            share = lambda pred: sum(p for p, dso in c["dso"] if pred(dso))
            top = [f"{sym} {p:.1f} %" for p, dso, sym in c["symbols"] if dso != "[kernel.kallsyms]"][:5]
            user = c["cpu_us_per_request"] * (100 - share(lambda x: x == "[kernel.kallsyms]")) / 100 if c.get("cpu_us_per_request") else None
            out.append(f"| {HIT_NAMES.get(t, t)} | {n(c['rps'])} | {n(c['cpu_us_per_request'], 1)} | {n(user, 1)} µs | {share(lambda x: x == '[kernel.kallsyms]'):.1f} % | "
                       f"{share(lambda x: x in ('nginx', 'varnishd')):.1f} % | {share(lambda x: x.startswith('libc')):.1f} % | "
                       f"{share(lambda x: x.startswith('libpcre2')):.1f} % | {share(lambda x: x == 'vgc.so'):.1f} % | {', '.join(top)} |")
        subs = d["caches"].get("vcl", {}).get("vcl_subs") or []
        if subs:
            out += ["", "The compiled VCL's own subroutines, share of all its samples: " + ", ".join(f"{s} {p:.2f} %" for p, s in subs[:12]) + "."]
    return "\n".join(out)


def readme_table():
    rows = e2e_rows() + own_site_rows() + bulk_rows() + freshness_rows() + stage_rows() + cache_size_rows() + purger_rows() + conformance_rows() + bench_rows() + chaos_rows() + soak_rows()
    out = ["| what | figure | script | measured |", "|---|---|---|---|"]
    out += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    return "\n".join(out)


# (file, block name, generator): each block sits between <!-- figures:NAME:begin --> and
# <!-- figures:NAME:end --> (README's is figures:readme).
BLOCKS = [
    ("README.md", "readme", readme_table),
    ("docs/benchmarks.md", "cache-size", cache_size_text),
    ("docs/benchmarks.md", "bulk-actions", bulk_table),
    ("docs/benchmarks.md", "fresh-stages", stage_table),
    ("docs/benchmarks.md", "hit-path", hit_path_text),
    ("docs/reliability.md", "chaos", lambda: results_table("reliability/results/chaos.json", "make chaos", "fault")),
    ("docs/reliability.md", "quick", lambda: results_table("reliability/results/quick.json", "make test-reliability", "check")),
    ("docs/reliability.md", "soak", soak_text),
    ("purger/README.md", "purger", purger_tables),
    ("purger/README.md", "purger-wait", purger_wait_table),
]


def main():
    check = "--check" in sys.argv
    stale = []
    for rel, name, make in BLOCKS:
        path = os.path.join(ROOT, rel)
        begin, end = f"<!-- figures:{name}:begin -->", f"<!-- figures:{name}:end -->"
        text = open(path).read()
        if begin not in text or end not in text:
            sys.exit(f"figures: {rel} has no {begin} … {end} block")
        block = (f"{begin}\n<!-- generated by scripts/figures.py from the published results files (make publish-results); "
                 f"edit the generator, not this block -->\n{make()}\n{end}")
        new = re.sub(re.escape(begin) + r".*?" + re.escape(end), lambda _: block, text, flags=re.S)
        if new == text:
            continue
        if check:
            stale.append(f"{rel} ({name})")
        else:
            open(path, "w").write(new)
            print(f"figures: {rel} ({name}) regenerated")
    if stale:
        sys.exit(f"figures: {', '.join(stale)} differ from the results files: run python3 scripts/figures.py")


if __name__ == "__main__":
    main()
