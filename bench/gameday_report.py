#!/usr/bin/env python3
"""Turns one bench/gameday.sh output directory into GAMEDAY.md.

usage: gameday_report.py OUT_DIR GAMEDAY_MD [--results RESULTS_MD]

Reads OUT_DIR/meta.txt, phases.csv (phase boundaries and each mock's requests_total at the
end of the phase, counted from a reset at its start), requests-<gateway>.csv (one line per
client request) and polls-<gateway>.csv (each mock's requests_total once a second). Writes
GAMEDAY_MD, a per-second timeline-<gateway>.csv next to it, and with --results replaces (or
appends) the "## Game day" section of RESULTS_MD.
"""
import csv
import math
import os
import re
import sys

args = sys.argv[1:]
results_md = None
if "--results" in args:
    i = args.index("--results")
    results_md = args[i + 1]
    del args[i:i + 2]
out_dir, gameday_md = args

meta = {}
with open(os.path.join(out_dir, "meta.txt")) as f:
    for line in f:
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            meta[k] = v

phases = {}  # gateway -> [(name, start_ms, end_ms, primary, secondary)]
with open(os.path.join(out_dir, "phases.csv")) as f:
    for r in csv.DictReader(f):
        phases.setdefault(r["gateway"], []).append(
            (r["phase"], int(r["start_ms"]), int(r["end_ms"]), int(r["primary_requests"]),
             int(r["secondary_requests"])))

LABEL = {"sluice": "Sluice", "sluice-budget1": "Sluice, budget_ratio 1", "portkey": "Portkey"}
PHASE_LABEL = {"healthy": "healthy", "429": "429 + Retry-After: 1", "503": "503",
               "stall": "stall (no answer)", "heal": "healed"}


def pct(values, p):
    """Nearest-rank percentile (p in 0..100) of a list; None when empty."""
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, math.ceil(p / 100 * len(v)) - 1))
    return v[k]


def fmt_ms(x):
    if x is None:
        return "-"
    if x >= 1000:
        return f"{x / 1000:.2f} s"
    if x >= 100:
        return f"{x:.0f} ms"
    return f"{x:.1f} ms"


def fmt_added(x, base):
    if x is None or base is None:
        return "-"
    d = x - base
    sign = "+" if d >= 0 else "-"
    return sign + fmt_ms(abs(d))


def load_requests(gw):
    rows = []
    path = os.path.join(out_dir, f"requests-{gw}.csv")
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.append((int(r["send_ms"]), float(r["latency_ms"]), int(r["status"]), r["error"]))
    return rows


def load_polls(gw):
    """Per-second upstream requests per mock: {name: [(t_ms, delta)]}. A counter that went
    down (restart, /_mock/reset) counts from zero."""
    out, prev = {}, {}
    path = os.path.join(out_dir, f"polls-{gw}.csv")
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for r in csv.DictReader(f):
            name, t, v = r["name"], int(r["t_ms"]), int(r["requests_total"])
            p = prev.get(name)
            d = v if p is None or v < p else v - p
            prev[name] = v
            if p is not None:
                out.setdefault(name, []).append((t, d))
    return out


def is_ok(status):
    return 200 <= status < 300


def describe_errors(rs):
    counts = {}
    for _, _, st, err in rs:
        if is_ok(st):
            continue
        key = str(st) if st > 0 else ("shed by client" if st == -1 else (err or "no answer"))
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k} x{v}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])) or "-"


tables, recov_rows, notes = [], [], []
for gw in meta.get("gateways", "").split():
    reqs = load_requests(gw)
    polls = load_polls(gw)
    ph = phases.get(gw, [])
    if not ph or not reqs:
        notes.append(f"{gw}: no data")
        continue
    healthy = [r for r in reqs if ph[0][1] <= r[0] < ph[0][2]]
    base_ok = [r[1] for r in healthy if is_ok(r[2])]
    base_p50, base_p99 = pct(base_ok, 50), pct(base_ok, 99)
    rows = []
    for name, t0, t1, prim, sec in ph:
        rs = [r for r in reqs if t0 <= r[0] < t1]
        sent = sum(1 for r in rs if r[2] != -1)
        errs = sum(1 for r in rs if not is_ok(r[2]))
        ok_lat = [r[1] for r in rs if is_ok(r[2])]
        attempts = (prim if prim >= 0 else 0) + (sec if sec >= 0 else 0)
        rows.append({
            "phase": name, "secs": (t1 - t0) / 1000, "sent": sent, "primary": prim,
            "secondary": sec, "attempts": attempts,
            "amp": attempts / sent if sent else None, "errors": errs,
            "err_rate": errs / len(rs) if rs else None,
            "p50": pct(ok_lat, 50), "p99": pct(ok_lat, 99), "what": describe_errors(rs),
        })
    tables.append((gw, rows, base_p50, base_p99))

    # Per-second timeline over the whole run, and recovery after the heal.
    start = ph[0][1]
    end = ph[-1][2]
    nsec = int(math.ceil((end - start) / 1000))
    buckets = [[] for _ in range(nsec)]
    for r in reqs:
        k = (r[0] - start) // 1000
        if 0 <= k < nsec:
            buckets[k].append(r)
    up = {name: [0] * nsec for name in ("primary", "secondary")}
    for name, series in polls.items():
        for t, d in series:
            # A poll at t covers the second before it.
            k = (t - 1 - start) // 1000
            if 0 <= k < nsec and name in up:
                up[name][k] += d

    def phase_of(t):
        for name, t0, t1, _, _ in ph:
            if t0 <= t < t1:
                return name
        return ph[-1][0]

    with open(os.path.join(os.path.dirname(gameday_md) or ".", f"timeline-{gw}.csv"), "w") as f:
        w = csv.writer(f)
        w.writerow(["second", "phase", "client_requests", "ok", "errors", "p50_ms", "p99_ms",
                    "primary_requests", "secondary_requests"])
        for k, b in enumerate(buckets):
            lat = [r[1] for r in b if r[2] != -1]
            w.writerow([k, phase_of(start + k * 1000), len(b), sum(1 for r in b if is_ok(r[2])),
                        sum(1 for r in b if not is_ok(r[2])),
                        f"{pct(lat, 50):.1f}" if lat else "", f"{pct(lat, 99):.1f}" if lat else "",
                        up["primary"][k], up["secondary"][k]])

    heal = [p for p in ph if p[0] == "heal"]
    if heal:
        h0, h1 = heal[0][1], heal[0][2]
        recovered = primary_back = None
        k = 0
        while h0 + k * 1000 < h1:
            b = [r for r in reqs if h0 + k * 1000 <= r[0] < h0 + (k + 1) * 1000]
            lat = [r[1] for r in b]  # errors included: a slow failure is not a recovery
            if recovered is None and b and all(is_ok(r[2]) for r in b) and base_p99 is not None \
                    and pct(lat, 99) <= 2 * base_p99:
                recovered = k
            kk = (h0 - start) // 1000 + k
            if primary_back is None and 0 <= kk < nsec:
                p, s = up["primary"][kk], up["secondary"][kk]
                if p + s > 0 and p >= 0.5 * (p + s):
                    primary_back = k
            k += 1
        # Errors still seen in the healed phase after it first looked recovered.
        later = [r for r in reqs if recovered is not None and h0 + recovered * 1000 <= r[0] < h1
                 and not is_ok(r[2])]
        recov_rows.append((gw, base_p50, base_p99, recovered, primary_back, len(later)))

# ---------------------------------------------------------------------------------------
phase_desc = meta.get("phases", "").split()
lines = []
lines.append("## Game day")
lines.append("")
lines.append(
    f"Written by `bench/gameday.sh` ({meta.get('mode')}) on {meta.get('date')}, git {meta.get('git')}. "
    f"Raw outputs: `bench/out/{os.path.basename(os.path.abspath(out_dir))}/`.")
lines.append("")
lines.append(
    f"An open-loop client sends **{meta.get('rate')} requests/s** (non-stream chat completions) through "
    "the gateway for the whole run. The gateway has a fallback from a *primary* to a *secondary* "
    f"`sluice-mock-upstream` (both answer after {meta.get('upstream_latency_ms')} ms). The primary is "
    "restarted on the same port for each phase with different default faults: "
    + ", ".join(f"**{PHASE_LABEL.get(p.split(':')[0], p.split(':')[0])}** {p.split(':')[1]} s"
                for p in phase_desc)
    + ". Phases are contiguous on the client's clock, and the restart belongs to the phase it starts. "
    "Upstream attempts are each mock's `requests_total` (`/_mock/stats`) over the phase: the primary "
    "process's whole count, the secondary's difference between the two boundaries. Client requests "
    "and latencies are counted by send time, attempts by arrival, so a request sent just before a "
    "boundary may have its fallback counted in the next phase. "
    f"CPU placement: {meta.get('pinning')}. Client timeout {meta.get('client_timeout_s')} s.")
lines.append("")
lines.append(
    f"- **Sluice** ({meta.get('sluice')}): route `policy: fallback` over the two providers, "
    f"`on_status: [{meta.get('on_status')}]`, provider `timeout.first_byte_ms: {meta.get('first_byte_ms')}`, "
    f"`retry: {{ per_target_attempts: {meta.get('per_target_attempts')}, budget_ratio: {meta.get('budget_ratio')}, "
    "budget_burst: 10, retry_after_max_ms: 500 }`, `circuit_breaker: { error_rate: 0.5, "
    f"min_requests: 20, window_ms: 10000, open_ms: {meta.get('open_ms')} }}` (config in `sluice.yaml`). "
    "**Sluice, budget_ratio 1** is the same with `budget_ratio: 1` (`sluice-budget1.yaml`): the retry "
    "budget counts every attempt after a request's first, a fallback to another provider included, so "
    "with the default 0.1 at most about one request in ten may fail over once the burst is spent.")
lines.append(
    f"- **Portkey** ({meta.get('portkey')}, Node.js {meta.get('node')}): `x-portkey-config` with "
    f"`strategy: {{ mode: fallback, on_status_codes: [{meta.get('on_status')}] }}` and two openai targets "
    f"whose `custom_host` are the two mocks, each with `request_timeout: {meta.get('first_byte_ms')}` "
    "(Portkey answers a timed-out attempt with 408, hence 408 in the list; config in "
    "`portkey-config.json`). Portkey's open-source gateway has no retry budget and no circuit breaker.")
lines.append("")
lines.append("Amplification = upstream attempts / client requests. Latency is that of the successful "
             "answers; added = phase minus healthy phase of the same gateway.")
lines.append("")
lines.append("| gateway | phase | client requests | upstream attempts (primary + secondary) | amplification "
             "| client error rate | p50 | p99 | added p50 | added p99 | what the clients got besides 200 |")
lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for gw, rows, b50, b99 in tables:
    for r in rows:
        amp = f"{r['amp']:.2f}" if r["amp"] is not None else "-"
        er = f"{100 * r['err_rate']:.1f}%" if r["err_rate"] is not None else "-"
        added50 = "-" if r["phase"] == "healthy" else fmt_added(r["p50"], b50)
        added99 = "-" if r["phase"] == "healthy" else fmt_added(r["p99"], b99)
        lines.append(
            f"| {LABEL.get(gw, gw)} | {PHASE_LABEL.get(r['phase'], r['phase'])} | {r['sent']:,} | "
            f"{r['attempts']:,} ({r['primary']:,} + {r['secondary']:,}) | {amp} | {er} | "
            f"{fmt_ms(r['p50'])} | {fmt_ms(r['p99'])} | {added50} | {added99} | {r['what']} |")
lines.append("")
lines.append("Recovery after the heal: the first second (counted from the restart of the healthy primary, "
             "second 0 = the first) in which no client request failed and the p99 of all requests sent in it "
             "was within 2x the healthy p99; and the first second in which the primary took at least half "
             "of the upstream attempts again (from `/_mock/stats` polled once a second).")
lines.append("")
lines.append("| gateway | healthy p50 | healthy p99 | recovered (errors 0, p99 <= 2x healthy) | "
             "primary takes traffic again | client errors in the healed phase after recovery |")
lines.append("|---|---:|---:|---:|---:|---:|")
for gw, b50, b99, rec, pb, later in recov_rows:
    lines.append(f"| {LABEL.get(gw, gw)} | {fmt_ms(b50)} | {fmt_ms(b99)} | "
                 f"{'second %d' % rec if rec is not None else 'not within the phase'} | "
                 f"{'second %d' % pb if pb is not None else 'not within the phase'} | {later} |")
lines.append("")
lines.append("Per-second figures (client requests, errors, p50/p99, attempts at each mock): "
             "`timeline-<gateway>.csv` in the raw output directory.")
for n in notes:
    lines.append(f"- Note: {n}")
section = "\n".join(lines) + "\n"

with open(gameday_md, "w") as f:
    f.write("# Sluice game day\n\n" + section.replace("## Game day\n\n", "", 1))
print(section)

if results_md:
    text = open(results_md).read() if os.path.exists(results_md) else "# Sluice benchmark results\n"
    m = re.search(r"^## Game day\n.*?(?=^## |\Z)", text, flags=re.S | re.M)
    if m:
        text = text[:m.start()] + section + ("\n" if text[m.end():] else "") + text[m.end():]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(results_md, "w") as f:
        f.write(text)
