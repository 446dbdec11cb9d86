// The calls the gateway makes of itself for its cache (pipeline/internal_call.h): the
// semantic cache's embeddings, and the background refresh of a stale entry.
//
// The semantic cache through the real binary against sluice-mock-upstream, whose bag-of-words
// embeddings put texts that share most of their words close (one word of forty changed:
// cosine ~0.975; four changed: ~0.9). A paraphrase is answered by the answer to the question
// it resembles, never across tenants, system prompts or long conversations; an embeddings
// route that fails or is slow costs the request nothing but the miss. The mock's per-key
// request counts prove which calls went upstream.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import path from 'node:path';

import {
  PROVIDER_KEY,
  makeTempDir,
  removeTempDir,
  startMock,
  startSluice,
  usageRecord,
  waitFor,
} from '../support/harness.mjs';

const ADMIN_KEY = 'sk-sluice-semantic-admin-key-0001';
const KEYS = {
  a1: 'sk-sluice-semantic-team-a-000001',
  a2: 'sk-sluice-semantic-team-a-000002',
  b: 'sk-sluice-semantic-team-b-000001',
};

let mock;
let gw;
let dir;
let admin;

const provider = (id, headers = {}) => ({
  id,
  adapter: 'openai',
  base_url: mock.baseUrl,
  api_key: PROVIDER_KEY,
  headers: { 'x-mock-count-key': id, ...headers },
});

function config() {
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 2, drain_timeout_ms: 3000 },
    admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
    store: { sqlite: path.join(dir, 'usage.db') },
    metering: { flush_interval_ms: 20 },
    providers: [
      provider('chat'),
      provider('chat_failing_emb'),
      provider('chat_slow_emb'),
      provider('emb', { 'x-mock-embeddings': 'bag-of-words' }),
      provider('emb_failing', { 'x-mock-status': '503' }),
      provider('emb_slow', { 'x-mock-latency-ms': '3000', 'x-mock-embeddings': 'bag-of-words' }),
      provider('swr_origin', { 'x-mock-latency-ms': '1500' }),
    ],
    routes: [
      { alias: 'faq', provider: 'chat', model: 'mock-model', cache: { semantic: { embeddings: 'embed', dimensions: 1024 } } },
      {
        alias: 'faq-broken',
        provider: 'chat_failing_emb',
        model: 'mock-model',
        cache: { semantic: { embeddings: 'embed-failing' } },
      },
      {
        alias: 'faq-slow',
        provider: 'chat_slow_emb',
        model: 'mock-model',
        cache: { semantic: { embeddings: 'embed-slow', timeout_ms: 200 } },
      },
      { alias: 'swr', provider: 'swr_origin', model: 'mock-model', cache: { ttl_ms: 1000, ttl_jitter: 0, stale_while_revalidate_ms: 60000 } },
      { alias: 'embed', kind: 'embeddings', provider: 'emb', model: 'mock-embed' },
      { alias: 'embed-failing', kind: 'embeddings', provider: 'emb_failing', model: 'mock-embed', retry: { per_target_attempts: 1 } },
      { alias: 'embed-slow', kind: 'embeddings', provider: 'emb_slow', model: 'mock-embed' },
    ],
    keys: [
      // The chat routes only: the embeddings route is the gateway's to call on their behalf.
      { name: 'a1', group: 'team-a', key: KEYS.a1, models: ['faq', 'faq-broken', 'faq-slow', 'swr'] },
      { name: 'a2', group: 'team-a', key: KEYS.a2, models: ['faq', 'faq-broken', 'faq-slow', 'swr'] },
      { name: 'b', group: 'team-b', key: KEYS.b, models: ['faq', 'faq-broken', 'faq-slow', 'swr'] },
    ],
  };
}

before(async () => {
  mock = await startMock();
  dir = makeTempDir('sluice-semantic-');
  gw = await startSluice(config(), { dir });
  admin = `http://127.0.0.1:${gw.listening.admin_port}`;
});

after(async () => {
  // A clean exit: under ASan, a leak of an internal call (or its context) fails it here.
  if (gw) assert.equal(await gw.stop({ timeoutMs: 8000 }), 0, gw.stderr.slice(-4000));
  await mock?.stop();
  if (dir) removeTempDir(dir);
});

const calls = async (countKey) => (await mock.stats()).requests_by_header?.[countKey] ?? 0;

// Forty distinct words of a topic, then the same question with `changed` words replaced.
let topic = 0;
function question(changed = 0) {
  topic += 1;
  const words = Array.from({ length: 40 }, (_, i) => `t${topic}w${i}`);
  const variant = (n) => [...words.slice(0, 40 - n), ...Array.from({ length: n }, (_, i) => `t${topic}x${i}`)].join(' ');
  return { original: words.join(' '), variant: variant(changed) };
}

async function chat(model, text, { key = KEYS.a1, system, history = [], stream = false } = {}) {
  const messages = [...(system ? [{ role: 'system', content: system }] : []), ...history, { role: 'user', content: text }];
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 32, messages, ...(stream ? { stream: true } : {}) }),
  });
  const body = await res.text();
  return { res, body, cache: res.headers.get('x-sluice-cache'), similarity: res.headers.get('x-sluice-cache-similarity') };
}

const textOf = (body) => JSON.parse(body).choices[0].message.content;

const recordOf = (requestId) => usageRecord(admin, ADMIN_KEY, requestId);

describe('semantic cache', () => {
  test('a paraphrase is answered by the answer to the question it resembles', async () => {
    const q = question(1);
    const chatBefore = await calls('chat');
    const embBefore = await calls('emb');
    const first = await chat('faq', q.original);
    assert.equal(first.res.status, 200, first.body);
    assert.equal(first.cache, 'miss');
    const second = await chat('faq', q.variant, { key: KEYS.a2 });
    assert.equal(second.res.status, 200, second.body);
    assert.equal(second.cache, 'semantic');
    const similarity = Number(second.similarity);
    assert.ok(similarity >= 0.97 && similarity < 1, `similarity ${second.similarity}`);
    assert.equal(textOf(second.body), textOf(first.body), 'the same answer');
    assert.equal(await calls('chat'), chatBefore + 1, 'one chat call upstream');
    assert.equal(await calls('emb'), embBefore + 2, 'each question embedded once');

    // The paraphrase is now an exact entry of its own: no embedding for it again.
    const third = await chat('faq', q.variant);
    assert.equal(third.cache, 'hit');
    assert.equal(await calls('emb'), embBefore + 2);

    // The hit is a cache_hit record that saved the tokens; the embeddings are records of their
    // own under the caller's key, named after the request they served.
    const hit = await recordOf(second.res.headers.get('x-request-id'));
    assert.equal(hit.outcome, 'cache_hit');
    assert.ok(hit.saved_output_tokens > 0, JSON.stringify(hit));
    const embedding = await recordOf(`${second.res.headers.get('x-request-id')}.embedding`);
    assert.equal(embedding.alias, 'embed');
    assert.equal(embedding.key_name, 'a2');
    assert.ok(embedding.input_tokens > 0, JSON.stringify(embedding));
  });

  test('a streamed paraphrase is told as a stream', async () => {
    const q = question(1);
    await chat('faq', q.original);
    const streamed = await chat('faq', q.variant, { stream: true });
    assert.equal(streamed.res.status, 200);
    assert.equal(streamed.cache, 'semantic');
    assert.match(streamed.res.headers.get('content-type'), /text\/event-stream/);
    assert.match(streamed.body, /data: \[DONE\]/);
  });

  test('a question that is only somewhat alike is a miss', async () => {
    const q = question(4);
    const chatBefore = await calls('chat');
    await chat('faq', q.original);
    const near = await chat('faq', q.variant);
    assert.equal(near.cache, 'miss');
    assert.equal(await calls('chat'), chatBefore + 2);
  });

  test("another tenant's neighbour never answers", async () => {
    const q = question(1);
    const chatBefore = await calls('chat');
    await chat('faq', q.original, { key: KEYS.a1 });
    const other = await chat('faq', q.variant, { key: KEYS.b });
    assert.equal(other.cache, 'miss');
    // team-b's own variant is its entry now: the original is its neighbour there.
    const own = await chat('faq', q.original, { key: KEYS.b });
    assert.equal(own.cache, 'semantic');
    assert.equal(await calls('chat'), chatBefore + 2);
  });

  test('the system prompt and earlier turns must be equal; long conversations are not looked up', async () => {
    const q = question(1);
    await chat('faq', q.original, { system: 'You are terse.' });
    const otherSystem = await chat('faq', q.variant, { system: 'You are verbose.' });
    assert.equal(otherSystem.cache, 'miss');
    const sameSystem = await chat('faq', q.variant, { system: 'You are terse.' });
    assert.equal(sameSystem.cache, 'semantic');

    // Two user turns with the default max_turns of 1: not embedded at all.
    const embBefore = await calls('emb');
    const history = [
      { role: 'user', content: 'hello there' },
      { role: 'assistant', content: 'hi' },
    ];
    const long = await chat('faq', q.variant, { history });
    assert.equal(long.cache, 'miss');
    assert.equal(await calls('emb'), embBefore);
  });

  test('a failing embeddings route costs a miss, then is skipped by its breaker', async () => {
    const before = await calls('emb_failing');
    for (let i = 0; i < 6; i += 1) {
      const r = await chat('faq-broken', question(0).original);
      assert.equal(r.res.status, 200, r.body);
      assert.equal(r.cache, 'miss');
    }
    assert.equal(await calls('emb_failing'), before + 3, 'three failures open the breaker');
  });

  test('a slow embeddings route is given up after its timeout, and the call goes on', async () => {
    const started = performance.now();
    const r = await chat('faq-slow', question(0).original);
    const took = performance.now() - started;
    assert.equal(r.res.status, 200, r.body);
    assert.equal(r.cache, 'miss');
    assert.ok(took < 2500, `answered in ${took} ms, not after the 3 s embedding`);
    const embedding = await recordOf(`${r.res.headers.get('x-request-id')}.embedding`);
    assert.equal(embedding.outcome, 'client_gone', 'the embedding call was cancelled');
  });
});

describe('stale-while-revalidate', () => {
  test('a stale entry is served at once and refreshed once, in the background', async () => {
    const text = 'what does stale while revalidate mean';
    const first = await chat('swr', text);
    assert.equal(first.cache, 'miss');
    const origin = await calls('swr_origin');

    // The entry lives a second; then it is stale (the origin takes 1.5 s to answer).
    let stale;
    let took;
    await waitFor(
      async () => {
        const started = performance.now();
        stale = await chat('swr', text);
        took = performance.now() - started;
        return stale.cache !== 'hit';
      },
      { timeoutMs: 4000, intervalMs: 100, message: 'the entry to go stale' },
    );
    assert.equal(stale.cache, 'stale');
    assert.equal(stale.res.status, 200);
    assert.equal(textOf(stale.body), textOf(first.body));
    assert.ok(took < 1200, `the stale answer did not wait for the origin (${took} ms)`);

    // Others meanwhile get the stale answer too, and start no refresh of their own.
    const again = await chat('swr', text, { key: KEYS.a2 });
    assert.equal(again.cache, 'stale');

    // The refresh is its own record, under the caller's key, and replaces the entry.
    const refresh = await recordOf(`${stale.res.headers.get('x-request-id')}.refresh`);
    assert.equal(refresh.outcome, 'complete');
    assert.equal(refresh.key_name, 'a1');
    assert.equal(await calls('swr_origin'), origin + 1, 'one refresh upstream');
    const fresh = await chat('swr', text);
    assert.equal(fresh.cache, 'hit');
    assert.equal(await calls('swr_origin'), origin + 1);
  });
});

describe('internal calls and the drain', () => {
  test('SIGTERM waits for a background refresh, which completes and is logged', async () => {
    const own = await startSluice(
      {
        version: 1,
        listen: '127.0.0.1:0',
        server: { workers: 1, drain_timeout_ms: 8000 },
        providers: [provider('drain_origin', { 'x-mock-latency-ms': '1500' })],
        routes: [
          {
            alias: 'swr',
            provider: 'drain_origin',
            model: 'mock-model',
            cache: { ttl_ms: 1000, ttl_jitter: 0, stale_while_revalidate_ms: 60000 },
          },
        ],
        keys: [{ name: 'a1', group: 'team-a', key: KEYS.a1 }],
      },
      { dir: makeTempDir('sluice-semantic-drain-') },
    );
    let stopped = false;
    try {
      const ask = async () => {
        const res = await fetch(`${own.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEYS.a1}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'swr', max_tokens: 8, messages: [{ role: 'user', content: 'drain me' }] }),
        });
        await res.text();
        return res.headers.get('x-sluice-cache');
      };
      assert.equal(await ask(), 'miss');
      await waitFor(async () => (await ask()) === 'stale', {
        timeoutMs: 4000,
        intervalMs: 100,
        message: 'the entry to go stale',
      });
      // The refresh is now waiting on the 1.5 s origin: the drain must let it finish.
      const code = await own.stop({ timeoutMs: 9000 });
      stopped = true;
      assert.equal(code, 0);
      const refresh = own.accessLog().filter((line) => line.internal === 'refresh');
      assert.equal(refresh.length, 1, own.stdout);
      assert.equal(refresh[0].status, 200);
      assert.equal(refresh[0].outcome, 'complete');
    } finally {
      if (!stopped) await own.stop();
    }
  });
});
