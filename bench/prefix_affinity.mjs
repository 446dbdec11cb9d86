// Prefix affinity vs weighted balancing (make bench-affinity): three mock providers that each
// keep a prompt cache (x-mock-prompt-cache), agent-like conversations through Sluice on two
// routes over the same three targets, and what share of the prompt tokens the providers read
// from their caches. Prints one table; writes bench/out/affinity-<time>.json.
//
//   node bench/prefix_affinity.mjs [--conversations N] [--turns N] [--concurrency N]

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { GATEWAY_KEY, PROVIDER_KEY, startMock, startSluice } from '../tests/support/harness.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const CONVERSATIONS = opt('conversations', 60);
const TURNS = opt('turns', 8);
const CONCURRENCY = opt('concurrency', 16);

const mock = await startMock();
const run = `${process.pid}-${Date.now()}`;
const provider = (id) => ({
  id,
  adapter: 'openai',
  base_url: mock.baseUrl,
  api_key: PROVIDER_KEY,
  headers: { 'x-mock-prompt-cache': `${run}-${id}` },
});
const targets = ['p1', 'p2', 'p3'].map((p) => ({ provider: p, model: 'm' }));
const gw = await startSluice({
  version: 1,
  listen: '127.0.0.1:0',
  server: { workers: 2 },
  providers: [provider('p1'), provider('p2'), provider('p3')],
  routes: [
    { alias: 'prefix_affinity', policy: { loadbalance: { strategy: 'prefix_affinity', targets } } },
    { alias: 'weighted', policy: { loadbalance: { strategy: 'weighted', targets } } },
  ],
  keys: [{ name: 'bench', key: GATEWAY_KEY }],
});

async function ask(model, messages) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 32, messages }),
  });
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return res.json();
}

// Per strategy: prompt tokens of the turns after the first, those read from a cache, and the
// turns that read the whole previous prompt.
async function measure(model) {
  const totals = { prompt: 0, cached: 0, later: 0, whole: 0, ms: 0 };
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let c = next++; c < CONVERSATIONS; c = next++) {
        const messages = [{ role: 'system', content: `Agent ${c} (${model}). ${'Policy text. '.repeat(40)}` }];
        let previous = 0;
        for (let t = 0; t < TURNS; t++) {
          messages.push({ role: 'user', content: `step ${t}: ${'tool output line. '.repeat(25)}` });
          const body = await ask(model, messages);
          if (t > 0) {
            totals.later += 1;
            totals.prompt += body.usage.prompt_tokens;
            totals.cached += body.usage.prompt_tokens_details.cached_tokens;
            if (body.usage.prompt_tokens_details.cached_tokens >= previous) totals.whole += 1;
          }
          previous = body.usage.prompt_tokens;
          messages.push({ role: 'assistant', content: body.choices[0].message.content });
        }
      }
    }),
  );
  totals.ms = performance.now() - started;
  return totals;
}

try {
  const results = {};
  for (const model of ['weighted', 'prefix_affinity']) results[model] = await measure(model);
  const rows = Object.entries(results).map(([model, r]) => ({
    strategy: model,
    token_share: r.cached / r.prompt,
    whole_prefix_share: r.whole / r.later,
    requests: CONVERSATIONS * TURNS,
    seconds: r.ms / 1000,
  }));
  console.log(`| strategy | cache-read share of prompt tokens | turns reading the whole previous prompt | requests | s |`);
  console.log(`|---|---|---|---|---|`);
  for (const r of rows) {
    console.log(`| ${r.strategy} | ${(100 * r.token_share).toFixed(1)}% | ${(100 * r.whole_prefix_share).toFixed(1)}% | ${r.requests} | ${r.seconds.toFixed(1)} |`);
  }
  const ratio = rows[1].token_share / rows[0].token_share;
  console.log(`\nprefix_affinity / weighted cache-read share: ${ratio.toFixed(2)}x (${CONVERSATIONS} conversations x ${TURNS} turns, concurrency ${CONCURRENCY})`);
  const out = path.join(path.dirname(fileURLToPath(import.meta.url)), 'out');
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, `affinity-${Date.now()}.json`), JSON.stringify({ rows, ratio }, null, 2));
} finally {
  await gw.stop();
  await mock.stop();
}
