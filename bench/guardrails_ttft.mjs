// Time to first token of a stream through output guardrails (make bench-guardrails): the mock
// writes 64 words one delta every 20 ms ("w1 " ... ~4 characters each), Sluice relays them on a
// route without output policies, on routes whose policy holds text back 16, 64 and 256
// characters, and on one that holds 256 characters but never longer than 100 ms
// (hold_back_ms); then on one whose external checker (a loopback server that answers after
// CHECKER_MS) judges windows of 64 characters. TTFT = request sent to the first byte of model
// text read by the client; the
// total is the whole stream. Prints one table (medians over the runs); writes
// bench/out/guardrails-ttft-<time>.json.
//
//   node bench/guardrails_ttft.mjs [--runs N] [--pace-ms N] [--words N] [--checker-ms N]

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { GATEWAY_KEY, PROVIDER_KEY, startMock, startSluice } from '../tests/support/harness.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const RUNS = opt('runs', 15);
const PACE_MS = opt('pace-ms', 20);
const WORDS = opt('words', 64);
const WINDOWS = [16, 64, 256];
const TIMED = { chars: 256, ms: 100 };
const CHECKER = { window: 64, ms: opt('checker-ms', 50) };

const mock = await startMock();
// A generic checker that allows everything after CHECKER.ms.
const checker = http.createServer((req, res) => {
  req.resume();
  req.on('end', () =>
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"verdict":"allow"}');
    }, CHECKER.ms),
  );
});
await new Promise((resolve) => checker.listen(0, '127.0.0.1', resolve));
const policy = (n) => ({
  name: `out-${n}`,
  direction: 'output',
  hold_back_chars: n,
  detectors: [{ builtin: 'payment_card', action: 'block' }, { builtin: 'email', action: 'block' }],
});
const gw = await startSluice({
  version: 1,
  listen: '127.0.0.1:0',
  server: { workers: 1 },
  guardrails: {
    policies: [
      ...WINDOWS.map(policy),
      { ...policy(TIMED.chars), name: 'out-timed', hold_back_ms: TIMED.ms },
      {
        ...policy(16),
        name: 'out-checked',
        detectors: [
          ...policy(16).detectors,
          { name: 'judge', external: { provider: 'judge', format: 'generic', stream_window_chars: CHECKER.window } },
        ],
      },
    ],
  },
  providers: [
    {
      id: 'paced',
      adapter: 'openai',
      base_url: mock.baseUrl,
      api_key: PROVIDER_KEY,
      headers: { 'x-mock-events': String(WORDS), 'x-mock-pace-ms': String(PACE_MS) },
    },
    { id: 'judge', adapter: 'openai', base_url: `http://127.0.0.1:${checker.address().port}`, api_key: 'sk-judge' },
  ],
  routes: [
    { alias: 'plain', provider: 'paced', model: 'm' },
    ...WINDOWS.map((n) => ({ alias: `held-${n}`, provider: 'paced', model: 'm', guardrails: [`out-${n}`] })),
    { alias: 'held-timed', provider: 'paced', model: 'm', guardrails: ['out-timed'] },
    { alias: 'checked', provider: 'paced', model: 'm', guardrails: ['out-checked'] },
  ],
  keys: [{ name: 'bench', key: GATEWAY_KEY }],
});

// One stream: ms to the first event with model text, ms to the end.
async function once(model) {
  const started = performance.now();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'count' }] }),
  });
  if (res.status !== 200) throw new Error(`${model}: ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let seen = '';
  let first = null;
  for await (const chunk of res.body) {
    seen += decoder.decode(chunk, { stream: true });
    if (first === null && /"content":"[^"]/.test(seen)) first = performance.now() - started;
  }
  if (!seen.includes('[DONE]')) throw new Error(`${model}: the stream did not end`);
  return { ttft: first, total: performance.now() - started };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

const rows = [];
try {
  for (const model of ['plain', ...WINDOWS.map((n) => `held-${n}`), 'held-timed', 'checked']) {
    await once(model);  // warm the pool
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await once(model));
    rows.push({ model, ttft_ms: median(runs.map((r) => r.ttft)), total_ms: median(runs.map((r) => r.total)) });
  }
} finally {
  await gw.stop();
  await mock.stop();
  await new Promise((resolve) => checker.close(resolve));
}

const plain = rows[0];
console.log(`${WORDS} deltas ${PACE_MS} ms apart, ${RUNS} runs each (medians)\n`);
console.log('| route | hold-back | TTFT | added TTFT | whole stream |');
console.log('|---|---:|---:|---:|---:|');
for (const r of rows) {
  const window =
    r.model === 'plain'
      ? 'none'
      : r.model === 'held-timed'
        ? `${TIMED.chars} chars or ${TIMED.ms} ms`
        : r.model === 'checked'
          ? `16 chars, checker windows of ${CHECKER.window} (${CHECKER.ms} ms)`
          : `${r.model.slice(5)} chars`;
  const added = r === plain ? '-' : `+${(r.ttft_ms - plain.ttft_ms).toFixed(0)} ms`;
  console.log(`| ${r.model} | ${window} | ${r.ttft_ms.toFixed(0)} ms | ${added} | ${r.total_ms.toFixed(0)} ms |`);
}
const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'out');
fs.mkdirSync(dir, { recursive: true });
const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
fs.writeFileSync(path.join(dir, `guardrails-ttft-${stamp}.json`), JSON.stringify({ words: WORDS, pace_ms: PACE_MS, runs: RUNS, rows }, null, 2));
