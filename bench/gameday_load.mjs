#!/usr/bin/env node
// Open-loop load for bench/gameday.sh: sends POSTs at a fixed rate for a fixed time and logs
// every request, so that the report can cut the run into phases and seconds afterwards.
// Node.js only (no npm packages).
//
//   node bench/gameday_load.mjs --url http://127.0.0.1:8080/v1/chat/completions \
//     --body-file body.json --header 'Authorization: Bearer k' --rate 100 --duration-s 60 \
//     --out requests.csv [--poll primary=http://127.0.0.1:P/_mock/stats --poll-out polls.csv]
//
// Requests are sent on a fixed schedule (request i at start + i / rate), whatever the
// answers do: a stalled gateway does not slow the clients down (no coordinated omission).
// At most --max-inflight requests are outstanding; a request that would exceed it is not
// sent and is logged with status -1 ("shed by the client").
//
// --out CSV, one line per request: send_ms (Unix epoch, ms), latency_ms, status, error.
//   status 0 = no HTTP answer (error says why: timeout, reset, refused, ...).
// --poll NAME=URL (repeatable): GET URL every second (a sluice-mock-upstream /_mock/stats)
//   and log "t_ms,NAME,requests_total" to --poll-out; an unreachable URL is skipped.
import fs from "node:fs";
import http from "node:http";

const args = process.argv.slice(2);
const opt = { headers: [], polls: [], rate: 100, durationS: 60, timeoutMs: 15000, maxInflight: 2000 };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const v = () => {
    if (i + 1 >= args.length) throw new Error(`${a} needs a value`);
    return args[++i];
  };
  switch (a) {
    case "--url": opt.url = v(); break;
    case "--body-file": opt.body = fs.readFileSync(v()); break;
    case "--header": opt.headers.push(v()); break;
    case "--rate": opt.rate = Number(v()); break;
    case "--duration-s": opt.durationS = Number(v()); break;
    case "--timeout-ms": opt.timeoutMs = Number(v()); break;
    case "--max-inflight": opt.maxInflight = Number(v()); break;
    case "--out": opt.out = v(); break;
    case "--poll": opt.polls.push(v()); break;
    case "--poll-out": opt.pollOut = v(); break;
    case "-h": case "--help":
      console.log(fs.readFileSync(new URL(import.meta.url)).toString().split("\n").slice(1, 20).join("\n"));
      process.exit(0);
    default: throw new Error(`unknown option ${a}`);
  }
}
if (!opt.url || !opt.body || !opt.out) throw new Error("--url, --body-file and --out are required");
if (!(opt.rate > 0)) throw new Error("--rate must be > 0");

const url = new URL(opt.url);
const headers = { "content-type": "application/json", "content-length": String(opt.body.length) };
for (const h of opt.headers) {
  const k = h.indexOf(":");
  if (k > 0) headers[h.slice(0, k).trim().toLowerCase()] = h.slice(k + 1).trim();
}
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });

const out = fs.createWriteStream(opt.out);
out.write("send_ms,latency_ms,status,error\n");
let lines = [];
const flush = () => { if (lines.length) { out.write(lines.join("")); lines = []; } };

let inflight = 0, sent = 0, done = 0, ok = 0;
function fire() {
  const t0 = performance.now();
  const sendMs = Date.now();
  if (inflight >= opt.maxInflight) {
    lines.push(`${sendMs},0,-1,shed\n`);
    return;
  }
  inflight++;
  sent++;
  let finished = false;
  const finish = (status, err) => {
    if (finished) return;
    finished = true;
    inflight--;
    done++;
    if (status >= 200 && status < 300) ok++;
    lines.push(`${sendMs},${(performance.now() - t0).toFixed(3)},${status},${err}\n`);
  };
  const req = http.request({
    host: url.hostname, port: url.port, path: url.pathname + url.search, method: "POST",
    headers, agent,
  }, (res) => {
    res.on("data", () => {});
    res.on("end", () => finish(res.statusCode, ""));
    res.on("error", (e) => finish(0, e.code || "body_error"));
    res.on("aborted", () => finish(0, "aborted"));
  });
  req.setTimeout(opt.timeoutMs, () => { finish(0, "timeout"); req.destroy(); });
  req.on("error", (e) => finish(0, (e.code || e.message || "error").replace(/[,\n]/g, " ")));
  req.end(opt.body);
}

// Poll the mocks' counters once a second.
const pollOut = opt.pollOut ? fs.createWriteStream(opt.pollOut) : null;
pollOut?.write("t_ms,name,requests_total\n");
function pollOnce() {
  for (const p of opt.polls) {
    const k = p.indexOf("=");
    const name = p.slice(0, k), target = p.slice(k + 1);
    const t = Date.now();
    const req = http.get(target, { timeout: 800, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => { body += d; });
      res.on("end", () => {
        try { pollOut.write(`${t},${name},${JSON.parse(body).requests_total}\n`); } catch { /* skip */ }
      });
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => {});
  }
}
let pollTimer = null;
if (pollOut && opt.polls.length) { pollOnce(); pollTimer = setInterval(pollOnce, 1000); }

const start = performance.now();
// The schedule's origin, for the harness: request i goes out at start_ms + i / rate.
process.stdout.write(`${JSON.stringify({ start_ms: Date.now() })}\n`);
const total = Math.round(opt.rate * opt.durationS);
let scheduled = 0;
const tick = setInterval(() => {
  const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * opt.rate) + 1);
  while (scheduled < due) { scheduled++; fire(); }
  if (lines.length > 256) flush();
  if (scheduled >= total) {
    clearInterval(tick);
    // Wait for the answers still out (each ends by its own timeout at the latest).
    const waitEnd = setInterval(() => {
      flush();
      if (inflight === 0) {
        clearInterval(waitEnd);
        if (pollTimer) clearInterval(pollTimer);
        const summary = { sent, done, ok, scheduled, duration_s: (performance.now() - start) / 1000 };
        out.end(() => {
          pollOut?.end();
          process.stderr.write(`gameday_load: ${JSON.stringify(summary)}\n`);
          agent.destroy();
          process.exit(0);
        });
      }
    }, 50);
  }
}, 2);

process.on("SIGTERM", () => { flush(); out.end(() => process.exit(143)); });
