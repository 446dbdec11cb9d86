// Rate limits and concurrency slots (issue 11): the 429 in every caller protocol with Retry-After
// and x-ratelimit-* headers, and, against a real redis-server (SLUICE_TEST_REDIS_URL, started by
// scripts/test-services.sh), limits that hold across two instances, TPM settled with real
// usage, concurrency slots freed after an upstream timeout and a client disconnect, and Redis
// killed mid-run (fail open, counted, logged once; limits back when Redis is). The only fake is
// the upstream (sluice-mock-upstream). Request-size limits are tests/integration/limits.test.mjs.

import assert from 'node:assert/strict';
import { execFileSync, execSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';

import { PROVIDER_KEY, postJson, startMock, startSluice, waitFor } from '../support/harness.mjs';

const REDIS_URL = process.env.SLUICE_TEST_REDIS_URL;
const ADMIN_KEY = 'admin-limits-0123456789abcdef';
const KEYS = {
  dev: 'sk-limits-dev-000000000000001',
  app: 'sk-limits-app-000000000000002',
  research: 'sk-limits-research-0000000003',
  busy: 'sk-limits-busy-00000000000004',
};

let mock;
before(async () => {
  mock = await startMock();
});
after(async () => {
  await mock?.stop();
});

function config({ limits, state, prefix } = {}) {
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 2, drain_timeout_ms: 2000 },
    admin: { listen: '127.0.0.1:0', key: ADMIN_KEY, metrics_on_main: true },
    ...(state ? { state } : REDIS_URL && prefix ? { state: redisState(prefix) } : {}),
    providers: [
      { id: 'up', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, forward_headers: ['x-mock-*'] },
      {
        id: 'slow',
        adapter: 'openai',
        base_url: mock.baseUrl,
        api_key: PROVIDER_KEY,
        headers: { 'x-mock-first-byte-ms': '5000' },
        timeout: { first_byte_ms: 300 },
      },
      { id: 'mock', adapter: 'mock' },
    ],
    routes: [
      { alias: 'gpt-test', provider: 'up', model: 'mock-model' },
      { alias: 'slow-test', provider: 'slow', model: 'mock-model' },
      { alias: 'mock-chat', provider: 'mock', model: 'mock-1' },
    ],
    keys: [
      { name: 'dev', key: KEYS.dev },
      { name: 'app', group: 'apps', key: KEYS.app },
      { name: 'research', group: 'research', key: KEYS.research },
      { name: 'busy', group: 'busy', key: KEYS.busy },
    ],
    limits,
  };
}

const redisState = (prefix, extra = {}) => ({
  redis: { url: REDIS_URL, timeout_ms: 20, on_error: 'fail_open', key_prefix: prefix, ...extra },
});
const uniquePrefix = (name) => `it${process.pid}${Date.now()}-${name}:`;

const chat = (model, extra = {}) => ({
  model,
  messages: [{ role: 'user', content: 'Say hello in a few words please.' }],
  ...extra,
});

// postJson, timed.
async function call(gw, path, body, key, { headers = {}, signal } = {}) {
  const started = performance.now();
  const r = await postJson(gw, path, body, { headers, key, signal });
  return { ...r, ms: performance.now() - started };
}

async function metric(gw, name, labels) {
  const res = await fetch(`${gw.url}/metrics`);
  const text = await res.text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) {
      continue;
    }
    if (Object.entries(labels ?? {}).every(([k, v]) => line.includes(`${k}="${v}"`))) {
      sum += Number(line.split(' ').pop());
    }
  }
  return sum;
}

describe('rejections (local limiter)', () => {
  let gw;
  before(async () => {
    gw = await startSluice(
      config({ limits: { keys: { dev: { rpm: 1 } }, groups: { research: { tpm: 1000 } } } }),
    );
  });
  after(async () => {
    await gw?.stop();
  });

  test('a 200 carries the tightest limits; the 429 names layer and dimension in each protocol', async () => {
    const ok = await call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.dev);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers.get('x-ratelimit-limit-requests'), '1');
    assert.equal(ok.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.equal(ok.headers.get('x-ratelimit-reset-requests'), '1m0s'); // full again in a minute

    const openai = await call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.dev);
    assert.equal(openai.status, 429);
    assert.ok(Number(openai.headers.get('retry-after')) >= 1);
    assert.equal(openai.headers.get('x-ratelimit-remaining-requests'), '0');
    assert.equal(openai.json.error.type, 'rate_limit_error');
    assert.equal(openai.json.error.code, 'requests_limit_exceeded');
    assert.match(openai.json.error.message, /key dev: requests per minute/);

    const anthropic = await call(
      gw,
      '/v1/messages',
      { model: 'gpt-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
      KEYS.dev,
      { headers: { 'anthropic-version': '2023-06-01' } },
    );
    assert.equal(anthropic.status, 429);
    assert.ok(anthropic.headers.get('retry-after'));
    assert.equal(anthropic.json.type, 'error');
    assert.equal(anthropic.json.error.type, 'rate_limit_error');
    assert.match(anthropic.json.error.message, /key dev: requests per minute/);

    const gemini = await call(
      gw,
      '/v1beta/models/gpt-test:generateContent',
      { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      KEYS.dev,
    );
    assert.equal(gemini.status, 429);
    assert.ok(gemini.headers.get('retry-after'));
    assert.equal(gemini.json.error.status, 'RESOURCE_EXHAUSTED');
    assert.match(gemini.json.error.message, /key dev: requests per minute/);
  });

  test('a request larger than a whole token bucket is refused for good, naming the group', async () => {
    const res = await call(gw, '/v1/chat/completions', chat('gpt-test', { max_tokens: 5000 }), KEYS.research);
    assert.equal(res.status, 429);
    assert.equal(res.json.error.code, 'tokens_limit_exceeded');
    assert.match(res.json.error.message, /key group research: tokens per minute \(limit 1000\)/);
    assert.match(res.json.error.message, /more than the limit allows/);
    // Other keys and groups are untouched.
    const other = await call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.app);
    assert.equal(other.status, 200);
    assert.equal(other.headers.get('x-ratelimit-limit-requests'), null);
  });
});

describe('limits shared through Redis', { skip: !REDIS_URL && 'SLUICE_TEST_REDIS_URL is not set' }, () => {
  test('two instances enforce one global RPM limit (100 RPM, 300 requests over both)', async () => {
    const prefix = uniquePrefix('rpm');
    const cfg = config({ prefix, limits: { keys: { app: { rpm: 100 } } } });
    const a = await startSluice(cfg);
    const b = await startSluice(cfg);
    try {
      const statuses = [];
      // 300 requests, alternating instances, 30 at a time.
      for (let round = 0; round < 10; round++) {
        const batch = [];
        for (let i = 0; i < 30; i++) {
          const gw = (round * 30 + i) % 2 === 0 ? a : b;
          batch.push(call(gw, '/v1/chat/completions', chat('mock-chat'), KEYS.app));
        }
        for (const r of await Promise.all(batch)) {
          statuses.push(r.status);
        }
      }
      const admitted = statuses.filter((s) => s === 200).length;
      const limited = statuses.filter((s) => s === 429).length;
      assert.equal(admitted + limited, 300, `unexpected statuses: ${[...new Set(statuses)]}`);
      // A bucket of 100 that refills 100 a minute: the run takes well under 3 s (< 5 more).
      // Checks Redis did not answer in time (a loaded machine) were admitted by fail_open and
      // took nothing from the bucket: they come on top.
      const failedOpen =
        (await metric(a, 'sluice_limiter_decisions_total', { result: 'failed_open' })) +
        (await metric(b, 'sluice_limiter_decisions_total', { result: 'failed_open' }));
      const charged = admitted - failedOpen;
      assert.ok(charged >= 95 && charged <= 105, `admitted ${admitted}, ${failedOpen} of them failed open`);
      const counted =
        (await metric(a, 'sluice_limiter_decisions_total', { result: 'limited', layer: 'key', dimension: 'rpm' })) +
        (await metric(b, 'sluice_limiter_decisions_total', { result: 'limited', layer: 'key', dimension: 'rpm' }));
      assert.equal(counted, limited);
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  test('TPM is reserved at entry and settled with the real usage', async () => {
    const prefix = uniquePrefix('tpm');
    const gw = await startSluice(config({ prefix, limits: { groups: { research: { tpm: 1000 } } } }));
    try {
      // Each request reserves its prompt estimate plus max_tokens (600): two at once would not
      // fit in 1000. Settled with the mock's real usage (a few dozen tokens), they all do.
      // The previous request settles on its own worker's Redis connection after its answer is
      // out; this one may travel on another's and arrive first (a 429 that takes nothing):
      // asked again until the settlement is there, for at most two seconds.
      let remaining;
      for (let i = 0; i < 4; i++) {
        let res;
        await waitFor(
          async () => {
            res = await call(gw, '/v1/chat/completions', chat('gpt-test', { max_tokens: 600 }), KEYS.research);
            return res.status !== 429;
          },
          { timeoutMs: 2000, message: `request ${i} admitted once the previous one settled` },
        );
        assert.equal(res.status, 200, `request ${i}: ${res.text}`);
        assert.equal(res.headers.get('x-ratelimit-limit-tokens'), '1000');
        remaining = Number(res.headers.get('x-ratelimit-remaining-tokens'));
        assert.ok(remaining < 400, `the reservation shows: ${remaining}`);
      }
      // Without settlement the second request would have been refused; what the four used
      // (about 25 tokens each) is what stays taken. A request settles once its answer has
      // gone out, on its worker's Redis connection; the probe's check may travel on another
      // worker's and overtake the last settlement on a loaded machine, so up to three probes
      // (about 25 tokens each) look for it.
      let left;
      for (let probes = 0; probes < 3 && !(left > 800); probes++) {
        const probe = await call(gw, '/v1/chat/completions', chat('gpt-test', { max_tokens: 1 }), KEYS.research);
        assert.equal(probe.status, 200);
        left = Number(probe.headers.get('x-ratelimit-remaining-tokens'));
      }
      assert.ok(left > 800 && left < 1000, `after settlement: ${left}`);
      // Two concurrent 600-token reservations: one is refused with Retry-After.
      const both = await Promise.all([
        call(gw, '/v1/chat/completions', chat('slow-test', { max_tokens: 600 }), KEYS.research),
        call(gw, '/v1/chat/completions', chat('slow-test', { max_tokens: 600 }), KEYS.research),
      ]);
      assert.deepEqual(both.map((r) => r.status).sort(), [429, 504]);
    } finally {
      await gw.stop();
    }
  });

  test('a concurrency slot is released after an upstream timeout and after a client disconnect', async () => {
    const prefix = uniquePrefix('slots');
    const gw = await startSluice(config({ prefix, limits: { groups: { busy: { concurrency: 1 } } } }));
    try {
      // Upstream timeout (first byte after 300 ms): 504, and the slot is free again at once.
      const timedOut = await call(gw, '/v1/chat/completions', chat('slow-test'), KEYS.busy);
      assert.equal(timedOut.status, 504, timedOut.text);
      const next = await call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.busy);
      assert.equal(next.status, 200, next.text);

      // A held request takes the only slot: a second one is refused while it is held.
      const before = (await mock.stats()).requests_total;
      const abort = new AbortController();
      const held = call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.busy, {
        headers: { 'x-mock-stall-after': '0' },
        signal: abort.signal,
      }).catch((e) => e);
      await waitFor(async () => (await mock.stats()).requests_total > before, { timeoutMs: 3000 });
      const refused = await call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.busy);
      assert.equal(refused.status, 429);
      assert.equal(refused.json.error.code, 'concurrency_limit_exceeded');
      assert.match(refused.json.error.message, /key group busy: concurrent requests/);
      // The caller leaves: the gateway notices, cancels the upstream call and frees the slot.
      abort.abort();
      assert.equal((await held).name, 'AbortError');
      const freed = await waitFor(
        async () => {
          const r = await call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.busy);
          return r.status === 200 ? r : undefined;
        },
        { timeoutMs: 3000, message: 'the slot to be released' },
      );
      assert.equal(freed.status, 200);
    } finally {
      await gw.stop();
    }
  });

  test('a Redis stall past the timeout: requests fail open, and no lease or token is left behind', async () => {
    const prefix = uniquePrefix('stall');
    const gw = await startSluice(config({ prefix, limits: { groups: { busy: { concurrency: 2, rpm: 10 } } } }));
    const redis = (...args) => execFileSync('redis-cli', ['-u', REDIS_URL, ...args], { encoding: 'utf8' }).trim();
    const leases = () =>
      redis('--scan', '--pattern', `${prefix}*`)
        .split('\n')
        .filter((k) => k && redis('TYPE', k) === 'zset')
        .reduce((n, k) => n + Number(redis('ZCARD', k)), 0);
    try {
      assert.equal((await call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.busy)).status, 200);
      redis('CLIENT', 'PAUSE', '1500', 'ALL');
      const during = await Promise.all(
        [1, 2, 3].map(() => call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.busy)),
      );
      assert.deepEqual(during.map((r) => r.status), [200, 200, 200]);
      assert.ok(Math.max(...during.map((r) => r.ms)) < 1200, 'they did not wait for Redis');
      redis('PING'); // answers once the pause is over and the stalled scripts have run
      // The stalled checks took nothing: the slots are free, the bucket has only what the
      // admitted requests took (10 a minute refill one every 6 s).
      let last;
      for (let i = 0; i < 4; i++) {
        last = await call(gw, '/v1/chat/completions', chat('gpt-test'), KEYS.busy);
        assert.equal(last.status, 200, `request ${i} after the stall: ${last.text}`);
      }
      const remaining = Number(last.headers.get('x-ratelimit-remaining-requests'));
      assert.ok(remaining === 5 || remaining === 6, `remaining requests ${remaining}`);
      await waitFor(() => leases() === 0, { timeoutMs: 3000, intervalMs: 50, message: 'every lease to be released' });
    } finally {
      await gw.stop();
    }
  });

  test('Redis killed mid-run: requests flow (fail open, counted, logged once), limits resume when it returns', {
    skip: !process.env.SLUICE_TEST_REDIS_STOP && 'SLUICE_TEST_REDIS_STOP is not set',
  }, async () => {
    const prefix = uniquePrefix('outage');
    const gw = await startSluice(config({ prefix, limits: { keys: { app: { rpm: 5 } } } }));
    let redisDown = false;
    try {
      const statuses = [];
      for (let i = 0; i < 6; i++) {
        statuses.push((await call(gw, '/v1/chat/completions', chat('mock-chat'), KEYS.app)).status);
      }
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);

      execSync(process.env.SLUICE_TEST_REDIS_STOP);
      redisDown = true;
      const during = await Promise.all(
        Array.from({ length: 20 }, () => call(gw, '/v1/chat/completions', chat('mock-chat'), KEYS.app)),
      );
      assert.deepEqual(new Set(during.map((r) => r.status)), new Set([200]));
      // None waited on Redis: the 20 ms timeout or an immediate "not connected" (the bound
      // here only separates "bounded" from "hung").
      assert.ok(Math.max(...during.map((r) => r.ms)) < 1000, `slowest ${Math.max(...during.map((r) => r.ms))} ms`);
      assert.ok((await metric(gw, 'sluice_limiter_decisions_total', { result: 'failed_open' })) >= 20);
      assert.equal(await metric(gw, 'sluice_limiter_redis_up'), 0);
      const downLines = gw.stderr.split('\n').filter((l) => l.includes('is not answering'));
      assert.equal(downLines.length, 1, gw.stderr);

      execSync(process.env.SLUICE_TEST_REDIS_START);
      redisDown = false;
      // The restarted Redis is empty (a fresh bucket of 5): limits are enforced again.
      const limitedAgain = await waitFor(
        async () => {
          const r = await call(gw, '/v1/chat/completions', chat('mock-chat'), KEYS.app);
          return r.status === 429 ? r : undefined;
        },
        { timeoutMs: 5000, intervalMs: 20, message: 'limits to resume' },
      );
      assert.match(limitedAgain.json.error.message, /key app: requests per minute/);
      assert.equal(await metric(gw, 'sluice_limiter_redis_up'), 1);
      await waitFor(() => gw.stderr.includes('answers again'), { message: 'the recovery log line' });
    } finally {
      if (redisDown) {
        execSync(process.env.SLUICE_TEST_REDIS_START);
      }
      await gw.stop();
    }
  });
});
