// The response cache through the real binary against sluice-mock-upstream: one entry answers
// every caller protocol in both modes (compared with the upstream's own answer), tenants never
// share entries, the caller's Cache-Control is honoured, and nothing but a whole 200 answer is
// kept. The mock's per-key request counts prove how many calls went upstream.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';

import path from 'node:path';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  fixturesDir,
  makeTempDir,
  removeTempDir,
  runBinary,
  sluiceBin,
  startMock,
  startSluice,
  usageRecord,
  waitFor,
} from '../support/harness.mjs';

const ADMIN_KEY = 'sk-sluice-cache-admin-key-0000001';

const KEYS = {
  a1: 'sk-sluice-cache-team-a-0000001',
  a2: 'sk-sluice-cache-team-a-0000002',
  b: 'sk-sluice-cache-team-b-0000001',
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
    cache: { memory_bytes: '16MiB', ttl_ms: 60000 },
    admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
    store: { sqlite: path.join(dir, 'usage.db') },
    metering: { flush_interval_ms: 20 },
    providers: [
      provider('oa'),
      provider('priced'),
      provider('oa_shared'),
      provider('failing', { 'x-mock-status': '503' }),
      provider('nocache'),
      provider('slow_stream', { 'x-mock-events': '40', 'x-mock-pace-ms': '50' }),
      provider('stampede', { 'x-mock-first-byte-ms': '400', 'x-mock-events': '20', 'x-mock-pace-ms': '20' }),
      provider('slow_fail', { 'x-mock-latency-ms': '300', 'x-mock-status': '503' }),
      provider('thinking', { 'x-mock-first-byte-ms': '1500', 'x-mock-events': '5' }),
      provider('lingering', { 'x-mock-end-delay-ms': '8000' }),
      {
        id: 'claude_tools',
        adapter: 'anthropic',
        base_url: mock.url,
        api_key: PROVIDER_KEY,
        headers: { 'x-mock-count-key': 'claude_tools', 'x-mock-fixture': 'stream-tool-use.sse' },
      },
    ],
    routes: [
      { alias: 'cached', provider: 'oa', model: 'mock-model', cache: true },
      { alias: 'priced', provider: 'priced', model: 'gpt-4o-mini', cache: true },
      { alias: 'billed', provider: 'priced', model: 'gpt-4o-mini', cache: { bill_percent: 25 } },
      { alias: 'shared', provider: 'oa_shared', model: 'mock-model', cache: { scope: 'shared' } },
      { alias: 'failing', provider: 'failing', model: 'mock-model', cache: true },
      { alias: 'plain', provider: 'nocache', model: 'mock-model' },
      { alias: 'slow', provider: 'slow_stream', model: 'mock-model', cache: true },
      { alias: 'stampede', provider: 'stampede', model: 'mock-model', cache: true },
      { alias: 'slow-fail', provider: 'slow_fail', model: 'mock-model', cache: true, retry: { per_target_attempts: 1 } },
      { alias: 'tools', provider: 'claude_tools', model: 'claude-x', cache: true },
      { alias: 'thinking', provider: 'thinking', model: 'mock-model', cache: true, heartbeat_ms: 200 },
      { alias: 'lingering', provider: 'lingering', model: 'mock-model', cache: true },
    ],
    keys: [
      { name: 'test', key: GATEWAY_KEY },
      { name: 'a1', group: 'team-a', key: KEYS.a1 },
      { name: 'a2', group: 'team-a', key: KEYS.a2 },
      { name: 'b', group: 'team-b', key: KEYS.b },
    ],
  };
}

before(async () => {
  mock = await startMock({ fixtures: `${fixturesDir}/anthropic` });
  dir = makeTempDir('sluice-cache-');
  gw = await startSluice(config(), { dir });
  admin = `http://127.0.0.1:${gw.listening.admin_port}`;
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
  if (dir) removeTempDir(dir);
});

const adminCall = async (method, p) => {
  const res = await fetch(`${admin}${p}`, { method, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return { status: res.status, body: await res.json() };
};

// The usage record of one request, once the sink has stored it.
const recordOf = (requestId) => usageRecord(admin, ADMIN_KEY, requestId);

let run = 0;
beforeEach(() => {
  run += 1;
});

const upstreamCalls = async (countKey) => (await mock.stats()).requests_by_header?.[countKey] ?? 0;

// One question, in each caller protocol's words: the same IR, so the same entry.
function ask(protocol, { model, text, stream, key = GATEWAY_KEY, headers = {} }) {
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers };
  switch (protocol) {
    case 'chat':
      return fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          model,
          max_tokens: 64,
          messages: [{ role: 'user', content: text }],
          ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        }),
      });
    case 'anthropic':
      return fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { ...auth, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model,
          max_tokens: 64,
          messages: [{ role: 'user', content: text }],
          ...(stream ? { stream: true } : {}),
        }),
      });
    case 'gemini':
      return fetch(
        `${gw.url}/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({
            contents: [{ role: 'user', parts: [{ text }] }],
            generationConfig: { maxOutputTokens: 64 },
          }),
        },
      );
    case 'responses':
      return fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          model,
          max_output_tokens: 64,
          input: [{ role: 'user', content: text }],
          ...(stream ? { stream: true } : {}),
        }),
      });
    default:
      throw new Error(protocol);
  }
}

// The answer's text and tool calls, read from any protocol's body or stream.
function answerOf(protocol, stream, raw) {
  let text = '';
  const calls = [];
  const add = (name, args) => calls.push({ name, args: args === '' ? {} : JSON.parse(args) });
  if (!stream) {
    const b = JSON.parse(raw);
    if (protocol === 'chat') {
      text = b.choices[0].message.content ?? '';
      for (const c of b.choices[0].message.tool_calls ?? []) add(c.function.name, c.function.arguments);
    } else if (protocol === 'anthropic') {
      for (const c of b.content) {
        if (c.type === 'text') text += c.text;
        if (c.type === 'tool_use') calls.push({ name: c.name, args: c.input });
      }
    } else if (protocol === 'gemini') {
      for (const p of b.candidates[0].content.parts) {
        if (p.text !== undefined) text += p.text;
        if (p.functionCall) calls.push({ name: p.functionCall.name, args: p.functionCall.args });
      }
    } else {
      for (const item of b.output) {
        if (item.type === 'message') text += item.content.map((c) => c.text).join('');
        if (item.type === 'function_call') add(item.name, item.arguments);
      }
    }
    return { text, calls };
  }
  const datas = raw
    .split(/\r?\n\r?\n/)
    .map((block) => block.split(/\r?\n/).filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n'))
    .filter((d) => d !== '' && d !== '[DONE]')
    .map((d) => JSON.parse(d));
  const args = new Map();
  for (const e of datas) {
    if (protocol === 'chat') {
      const delta = e.choices?.[0]?.delta ?? {};
      text += delta.content ?? '';
      for (const c of delta.tool_calls ?? []) {
        if (c.function?.name) args.set(c.index, { name: c.function.name, args: '' });
        if (c.function?.arguments) args.get(c.index).args += c.function.arguments;
      }
    } else if (protocol === 'anthropic') {
      if (e.type === 'content_block_start' && e.content_block.type === 'tool_use') {
        args.set(e.index, { name: e.content_block.name, args: '' });
      }
      if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
      if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta') {
        args.get(e.index).args += e.delta.partial_json;
      }
    } else if (protocol === 'gemini') {
      for (const p of e.candidates?.[0]?.content?.parts ?? []) {
        if (p.text !== undefined) text += p.text;
        if (p.functionCall) calls.push({ name: p.functionCall.name, args: p.functionCall.args });
      }
    } else if (e.type === 'response.output_text.delta') {
      text += e.delta;
    } else if (e.type === 'response.output_item.done' && e.item.type === 'function_call') {
      add(e.item.name, e.item.arguments);
    }
  }
  for (const { name, args: a } of args.values()) add(name, a);
  return { text, calls };
}

const MODES = [];
for (const protocol of ['chat', 'anthropic', 'gemini', 'responses']) {
  for (const stream of [false, true]) MODES.push({ protocol, stream });
}

describe('one entry, every protocol and mode', () => {
  test('the first answer is stored; every protocol and mode is then served from it', async () => {
    const text = `what is the capital of France? (${run})`;
    const before = await upstreamCalls('oa');
    const first = await ask('chat', { model: 'cached', text, stream: false });
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('x-sluice-cache'), 'miss');
    const original = answerOf('chat', false, await first.text());
    assert.match(original.text, /Mock reply/);
    for (const { protocol, stream } of MODES) {
      const res = await ask(protocol, { model: 'cached', text, stream });
      const raw = await res.text();
      assert.equal(res.status, 200, `${protocol} stream=${stream}: ${raw}`);
      assert.equal(res.headers.get('x-sluice-cache'), 'hit', `${protocol} stream=${stream}`);
      assert.match(res.headers.get('age'), /^\d+$/);
      if (stream) assert.match(res.headers.get('content-type'), /^text\/event-stream/);
      assert.deepEqual(answerOf(protocol, stream, raw), original, `${protocol} stream=${stream}`);
    }
    assert.equal((await upstreamCalls('oa')) - before, 1, 'one upstream call for all nine answers');
  });

  test('a streamed answer is stored too, and answers a plain request', async () => {
    const text = `stream first (${run})`;
    const before = await upstreamCalls('oa');
    const first = await ask('anthropic', { model: 'cached', text, stream: true });
    assert.equal(first.headers.get('x-sluice-cache'), 'miss');
    const original = answerOf('anthropic', true, await first.text());
    const hit = await ask('chat', { model: 'cached', text, stream: false });
    assert.equal(hit.headers.get('x-sluice-cache'), 'hit');
    assert.deepEqual(answerOf('chat', false, await hit.text()), original);
    assert.equal((await upstreamCalls('oa')) - before, 1);
  });

  test('a stream is stored when its terminator passes, not when the upstream closes its body', async () => {
    // The upstream holds its body open 8 s after message_stop: the caller has the whole answer
    // long before the call is over, and a request it sends then is a hit.
    const text = `lingering upstream (${run})`;
    const before = await upstreamCalls('lingering');
    const first = await ask('anthropic', { model: 'lingering', text, stream: true });
    assert.equal(first.headers.get('x-sluice-cache'), 'miss');
    const reader = first.body.getReader();
    const decoder = new TextDecoder();
    let raw = '';
    while (!raw.includes('event: message_stop')) {
      const { value, done } = await reader.read();
      assert.equal(done, false, `the stream ended before its terminator: ${raw}`);
      raw += decoder.decode(value, { stream: true });
    }
    const hit = await ask('chat', { model: 'lingering', text, stream: false });
    assert.equal(hit.headers.get('x-sluice-cache'), 'hit');
    assert.deepEqual(answerOf('chat', false, await hit.text()), answerOf('anthropic', true, raw));
    assert.equal((await upstreamCalls('lingering')) - before, 1);
    await reader.cancel();
  });

  test('a recorded tool-use stream replays its tool call to every protocol', async () => {
    const text = `call the tool (${run})`;
    const first = await ask('anthropic', { model: 'tools', text, stream: true });
    assert.equal(first.status, 200);
    const original = answerOf('anthropic', true, await first.text());
    assert.equal(original.calls.length, 1, 'the fixture has one tool call');
    const before = await upstreamCalls('claude_tools');
    for (const { protocol, stream } of MODES) {
      const res = await ask(protocol, { model: 'tools', text, stream });
      const raw = await res.text();
      assert.equal(res.headers.get('x-sluice-cache'), 'hit', `${protocol} stream=${stream}: ${raw}`);
      assert.deepEqual(answerOf(protocol, stream, raw).calls, original.calls, `${protocol} stream=${stream}`);
    }
    assert.equal(await upstreamCalls('claude_tools'), before);
  });
});

describe('tenants', () => {
  test("a key group's entry serves its own keys, never another group", async () => {
    const text = `team secret (${run})`;
    const before = await upstreamCalls('oa');
    const a1 = await ask('chat', { model: 'cached', text, stream: false, key: KEYS.a1 });
    assert.equal(a1.headers.get('x-sluice-cache'), 'miss');
    await a1.text();
    const a2 = await ask('chat', { model: 'cached', text, stream: false, key: KEYS.a2 });
    assert.equal(a2.headers.get('x-sluice-cache'), 'hit', 'same group');
    await a2.text();
    const b = await ask('chat', { model: 'cached', text, stream: false, key: KEYS.b });
    assert.equal(b.headers.get('x-sluice-cache'), 'miss', 'another group gets its own answer');
    await b.text();
    assert.equal((await upstreamCalls('oa')) - before, 2);
  });

  test('a route with scope: shared serves every tenant from one entry', async () => {
    const text = `public faq (${run})`;
    const a = await ask('chat', { model: 'shared', text, stream: false, key: KEYS.a1 });
    assert.equal(a.headers.get('x-sluice-cache'), 'miss');
    await a.text();
    const b = await ask('chat', { model: 'shared', text, stream: false, key: KEYS.b });
    assert.equal(b.headers.get('x-sluice-cache'), 'hit');
    await b.text();
  });
});

describe("the caller's controls", () => {
  test('no-store neither reads nor writes the cache', async () => {
    const text = `no store (${run})`;
    const before = await upstreamCalls('oa');
    for (let i = 0; i < 2; i += 1) {
      const res = await ask('chat', { model: 'cached', text, stream: false, headers: { 'cache-control': 'no-store' } });
      assert.equal(res.headers.get('x-sluice-cache'), 'bypass');
      await res.text();
    }
    const after = await ask('chat', { model: 'cached', text, stream: false });
    assert.equal(after.headers.get('x-sluice-cache'), 'miss', 'nothing was stored');
    await after.text();
    assert.equal((await upstreamCalls('oa')) - before, 3);
  });

  test('no-cache goes to the origin and stores the fresh answer', async () => {
    const text = `no cache (${run})`;
    const first = await ask('chat', { model: 'cached', text, stream: false });
    await first.text();
    const before = await upstreamCalls('oa');
    const fresh = await ask('chat', { model: 'cached', text, stream: false, headers: { 'cache-control': 'No-Cache' } });
    assert.equal(fresh.headers.get('x-sluice-cache'), 'miss');
    await fresh.text();
    assert.equal((await upstreamCalls('oa')) - before, 1);
    const hit = await ask('chat', { model: 'cached', text, stream: false });
    assert.equal(hit.headers.get('x-sluice-cache'), 'hit');
    await hit.text();
  });

  test('a route without a cache says nothing about one', async () => {
    const res = await ask('chat', { model: 'plain', text: 'hi', stream: false });
    assert.equal(res.headers.get('x-sluice-cache'), null);
    await res.text();
  });
});

describe('what is never kept', () => {
  test('an error answer goes upstream every time', async () => {
    const text = `failing (${run})`;
    const before = await upstreamCalls('failing');
    for (let i = 0; i < 2; i += 1) {
      const res = await ask('chat', { model: 'failing', text, stream: false });
      assert.equal(res.status, 503);
      await res.text();
    }
    assert.ok((await upstreamCalls('failing')) - before >= 2);
  });

  test('a stream the caller left early is not stored', async () => {
    const text = `left early (${run})`;
    const res = await ask('chat', { model: 'slow', text, stream: true });
    assert.equal(res.headers.get('x-sluice-cache'), 'miss');
    const reader = res.body.getReader();
    await reader.read(); // the first events of two seconds of them
    await reader.cancel();
    const before = await upstreamCalls('slow_stream');
    const next = await ask('chat', { model: 'slow', text, stream: false });
    assert.equal(next.headers.get('x-sluice-cache'), 'miss', 'no partial answer was stored');
    await next.text();
    assert.equal((await upstreamCalls('slow_stream')) - before, 1);
  });
});

// Waits (bounded) until the mock has received `n` more requests under `countKey` than `from`.
async function upstreamReached(countKey, from, n = 1) {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    if ((await upstreamCalls(countKey)) - from >= n) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the upstream did not get ${n} request(s) under ${countKey}`);
}

describe('single-flight', () => {
  test('200 identical requests at once make one upstream call; every caller gets the whole answer', async () => {
    const text = `stampede (${run})`;
    const before = await upstreamCalls('stampede');
    const modes = [
      { protocol: 'chat', stream: true },
      { protocol: 'anthropic', stream: true },
      { protocol: 'gemini', stream: true },
      { protocol: 'responses', stream: true },
      { protocol: 'chat', stream: false },
      { protocol: 'anthropic', stream: false },
      { protocol: 'gemini', stream: false },
      { protocol: 'responses', stream: false },
    ];
    const all = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const { protocol, stream } = modes[i % modes.length];
        const res = await ask(protocol, { model: 'stampede', text, stream });
        const raw = await res.text();
        return { protocol, stream, status: res.status, cache: res.headers.get('x-sluice-cache'), raw };
      }),
    );
    assert.equal((await upstreamCalls('stampede')) - before, 1, 'one upstream call');
    const answers = new Set();
    const seen = {};
    for (const r of all) {
      assert.equal(r.status, 200, r.raw);
      seen[r.cache] = (seen[r.cache] ?? 0) + 1;
      answers.add(JSON.stringify(answerOf(r.protocol, r.stream, r.raw)));
    }
    assert.equal(answers.size, 1, `every caller got the same answer: ${[...answers].join('\n')}`);
    assert.match([...answers][0], /Mock reply w1 .* w20/);
    assert.equal(seen.miss, 1, JSON.stringify(seen));
    assert.equal((seen.coalesced ?? 0) + (seen.hit ?? 0), 199, JSON.stringify(seen));
    assert.ok(seen.coalesced > 0, JSON.stringify(seen));
  });

  test('a follower that leaves changes nothing for the others', async () => {
    const text = `follower leaves (${run})`;
    const before = await upstreamCalls('stampede');
    const leader = ask('chat', { model: 'stampede', text, stream: true });
    await upstreamReached('stampede', before);
    const quitter = await ask('chat', { model: 'stampede', text, stream: true });
    const stayers = [0, 1, 2].map(() => ask('anthropic', { model: 'stampede', text, stream: true }));
    const reader = quitter.body.getReader();
    await reader.read();
    await reader.cancel();
    const results = await Promise.all([leader, ...stayers].map(async (p) => (await p).text()));
    const first = answerOf('chat', true, results[0]);
    assert.match(first.text, /w20$/);
    for (const raw of results.slice(1)) assert.deepEqual(answerOf('anthropic', true, raw), first);
    assert.equal((await upstreamCalls('stampede')) - before, 1);
  });

  test('a streaming follower is kept alive while the shared call has nothing to send', async () => {
    const text = `thinking (${run})`;
    const before = await upstreamCalls('thinking');
    const leader = ask('chat', { model: 'thinking', text, stream: true });
    await upstreamReached('thinking', before);
    // The head comes with the first keep-alive (heartbeat_ms 200), long before the model's first
    // event (1.5 s): fetch resolves on it.
    const follower = await ask('anthropic', { model: 'thinking', text, stream: true });
    assert.equal(follower.status, 200);
    assert.equal(follower.headers.get('x-sluice-cache'), 'coalesced');
    const raw = await follower.text();
    const beat = raw.indexOf(': keep-alive');
    assert.ok(beat >= 0 && beat < raw.indexOf('event: message_start'), raw);
    // The leader's head went out early too (its own keep-alive) and still says what the cache did.
    const leaderRes = await leader;
    assert.equal(leaderRes.headers.get('x-sluice-cache'), 'miss');
    const led = answerOf('chat', true, await leaderRes.text());
    assert.deepEqual(answerOf('anthropic', true, raw), led);
    assert.match(led.text, /w5$/);
    assert.equal((await upstreamCalls('thinking')) - before, 1, 'one upstream call');
  });

  test("the leader's caller leaving does not stop the call its followers share", async () => {
    const text = `leader leaves (${run})`;
    const before = await upstreamCalls('stampede');
    const controller = new AbortController();
    const leader = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      signal: controller.signal,
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'stampede', max_tokens: 64, messages: [{ role: 'user', content: text }], stream: true }),
    });
    await upstreamReached('stampede', before);
    const followers = [0, 1, 2].map((i) =>
      ask(i === 0 ? 'gemini' : 'chat', { model: 'stampede', text, stream: i !== 2 }),
    );
    const leaderRes = await leader;
    const reader = leaderRes.body.getReader();
    await reader.read(); // the first events, then the leader's caller hangs up
    controller.abort();
    const [gemini, chat, plain] = await Promise.all(followers.map(async (p) => {
      const res = await p;
      assert.equal(res.status, 200);
      return res.text();
    }));
    const answer = answerOf('chat', true, chat);
    assert.match(answer.text, /Mock reply w1 .* w20$/, 'the whole answer, after the leader left');
    assert.deepEqual(answerOf('gemini', true, gemini), answer);
    assert.deepEqual(answerOf('chat', false, plain), answer);
    assert.equal((await upstreamCalls('stampede')) - before, 1);
    // And it was stored whole: the next request is a hit.
    const hit = await ask('chat', { model: 'stampede', text, stream: false });
    assert.equal(hit.headers.get('x-sluice-cache'), 'hit');
    assert.deepEqual(answerOf('chat', false, await hit.text()), answer);
  });

  test('when the shared call fails, each waiting caller makes its own attempt', async () => {
    const text = `shared failure (${run})`;
    const before = await upstreamCalls('slow_fail');
    const results = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const res = await ask('chat', { model: 'slow-fail', text, stream: false });
        await res.text();
        return res.status;
      }),
    );
    assert.deepEqual(results, [503, 503, 503, 503, 503]);
    // The leader's call, then one of each follower's own (not a second shared one).
    assert.equal((await upstreamCalls('slow_fail')) - before, 5);
  });
});

describe('admin and metering', () => {
  test('a hit is a usage record of its own: outcome cache_hit, the producing target, billed at zero', async () => {
    const text = `metered (${run})`;
    const miss = await ask('chat', { model: 'cached', text, stream: false });
    await miss.text();
    const hit = await ask('anthropic', { model: 'cached', text, stream: true });
    await hit.text();
    const paid = await recordOf(miss.headers.get('x-request-id'));
    const free = await recordOf(hit.headers.get('x-request-id'));
    assert.equal(paid.outcome, 'complete');
    assert.ok(paid.input_tokens > 0);
    assert.equal(free.outcome, 'cache_hit');
    assert.equal(free.provider, 'oa');
    assert.equal(free.model, 'mock-model');
    assert.equal(free.input_tokens, 0);
    assert.equal(free.cost_micros, 0);
    // What it saved: the upstream tokens of the call that produced the answer.
    assert.equal(free.saved_input_tokens, paid.input_tokens);
    assert.equal(free.saved_output_tokens, paid.output_tokens);
    assert.equal(paid.saved_input_tokens, 0);
    // The usage report sums them per outcome, apart from spend.
    const report = await adminCall('GET', '/admin/v1/usage?by=outcome&format=json');
    assert.equal(report.status, 200, JSON.stringify(report.body));
    const hits = report.body.rows.find((r) => r.outcome === 'cache_hit');
    assert.ok(hits.saved_input_tokens >= paid.input_tokens, JSON.stringify(report.body));
    const complete = report.body.rows.find((r) => r.outcome === 'complete');
    assert.equal(complete.saved_input_tokens, 0);
  });

  test("a hit's saved cost is the producing call's cost at the same prices", async () => {
    const text = `priced (${run}) ${'a longer question '.repeat(20)}`;
    const miss = await ask('chat', { model: 'priced', text, stream: false });
    await miss.text();
    const hit = await ask('gemini', { model: 'priced', text, stream: false });
    assert.equal(hit.headers.get('x-sluice-cache'), 'hit');
    await hit.text();
    const paid = await recordOf(miss.headers.get('x-request-id'));
    const free = await recordOf(hit.headers.get('x-request-id'));
    assert.equal(paid.priced, true);
    assert.ok(paid.cost_micros > 0, JSON.stringify(paid));
    assert.equal(free.cost_micros, 0);
    assert.equal(free.saved_cost_micros, paid.cost_micros);
  });

  test('a route with bill_percent bills a hit that share of the paid cost and saves the rest', async () => {
    const text = `billed (${run}) ${'a longer question '.repeat(20)}`;
    const miss = await ask('chat', { model: 'billed', text, stream: false });
    await miss.text();
    const hit = await ask('anthropic', { model: 'billed', text, stream: true });
    assert.equal(hit.headers.get('x-sluice-cache'), 'hit');
    await hit.text();
    const paid = await recordOf(miss.headers.get('x-request-id'));
    const billed = await recordOf(hit.headers.get('x-request-id'));
    assert.equal(billed.outcome, 'cache_hit');
    assert.ok(paid.cost_micros >= 8, JSON.stringify(paid));
    // One rounding, of the exact share: within a micro-unit of a quarter.
    assert.ok(Math.abs(billed.cost_micros - paid.cost_micros / 4) <= 1, JSON.stringify(billed));
    assert.equal(billed.saved_cost_micros, paid.cost_micros - billed.cost_micros);
    assert.equal(billed.priced, true);
  });

  test('followers of a shared call are recorded as coalesced; one record is paid', async () => {
    const text = `coalesced record (${run})`;
    const before = await upstreamCalls('stampede');
    const responses = await Promise.all(
      [0, 1, 2, 3].map(async () => {
        const res = await ask('chat', { model: 'stampede', text, stream: true });
        await res.text();
        return res;
      }),
    );
    assert.equal((await upstreamCalls('stampede')) - before, 1);
    const records = await Promise.all(responses.map((r) => recordOf(r.headers.get('x-request-id'))));
    const outcomes = records.map((r) => r.outcome).sort();
    assert.deepEqual(outcomes, ['coalesced', 'coalesced', 'coalesced', 'complete']);
    assert.equal(records.filter((r) => r.input_tokens > 0).length, 1, 'one paid record');
  });

  test('metrics count hits, misses and coalesced requests per route, and the store', async () => {
    const res = await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    assert.equal(res.status, 200);
    const text = await res.text();
    const value = (re) => Number((text.match(re) ?? [])[1] ?? 'NaN');
    assert.ok(value(/sluice_cache_requests_total\{alias="cached",result="hit"\} (\d+)/) >= 9, text);
    assert.ok(value(/sluice_cache_requests_total\{alias="cached",result="miss"\} (\d+)/) >= 1);
    assert.ok(value(/sluice_cache_requests_total\{alias="stampede",result="coalesced"\} (\d+)/) >= 3);
    assert.ok(value(/sluice_cache_saved_tokens_total\{alias="cached"\} (\d+)/) > 0);
    assert.ok(value(/sluice_cache_entries\{measure="entries"\} (\d+)/) > 0);
    assert.equal(value(/sluice_cache_entries\{measure="capacity_bytes"\} (\d+)/), 16 * 1024 * 1024);
    assert.equal(value(/sluice_cache_entries\{measure="shared_calls_in_flight"\} (\d+)/), 0);
  });

  test('purging a tenant drops its entries only', async () => {
    const text = `purge me (${run})`;
    for (const key of [KEYS.a1, KEYS.b]) {
      const res = await ask('chat', { model: 'cached', text, stream: false, key });
      await res.text();
    }
    const stats = await adminCall('GET', '/admin/v1/cache');
    assert.equal(stats.status, 200);
    assert.ok(stats.body.entries >= 2, JSON.stringify(stats.body));
    const purged = await adminCall('POST', '/admin/v1/cache/purge?route=cached&key_group=team-a');
    assert.equal(purged.status, 200);
    assert.ok(purged.body.purged >= 1);
    const a = await ask('chat', { model: 'cached', text, stream: false, key: KEYS.a1 });
    assert.equal(a.headers.get('x-sluice-cache'), 'miss');
    await a.text();
    const b = await ask('chat', { model: 'cached', text, stream: false, key: KEYS.b });
    assert.equal(b.headers.get('x-sluice-cache'), 'hit');
    await b.text();
    const bad = await adminCall('POST', '/admin/v1/cache/purge?key_group=x&key=y');
    assert.equal(bad.status, 400);
    const anonymous = await fetch(`${admin}/admin/v1/cache/purge`, { method: 'POST' });
    assert.equal(anonymous.status, 401);
  });

  test('sluice cache stats and purge call the admin API with $SLUICE_ADMIN_KEY', async () => {
    const text = `cli purge (${run})`;
    for (const key of [KEYS.a1, KEYS.b]) {
      await (await ask('chat', { model: 'cached', text, stream: false, key })).text();
    }
    const env = { ...process.env, SLUICE_ADMIN_URL: admin, SLUICE_ADMIN_KEY: ADMIN_KEY };
    const stats = await runBinary(sluiceBin, ['cache', 'stats', '--json'], { env });
    assert.equal(stats.code, 0, stats.stderr);
    assert.ok(JSON.parse(stats.stdout).entries >= 2, stats.stdout);
    const readable = await runBinary(sluiceBin, ['cache', 'stats'], { env });
    assert.match(readable.stdout, /^entries\s+\d+/m);
    const purged = await runBinary(sluiceBin, ['cache', 'purge', '--route', 'cached', '--key-group', 'team-b'], { env });
    assert.equal(purged.code, 0, purged.stderr);
    assert.match(purged.stdout, /^purged [1-9]\d* entries here\n$/);
    const b = await ask('chat', { model: 'cached', text, stream: false, key: KEYS.b });
    assert.equal(b.headers.get('x-sluice-cache'), 'miss');
    await b.text();
    const a = await ask('chat', { model: 'cached', text, stream: false, key: KEYS.a1 });
    assert.equal(a.headers.get('x-sluice-cache'), 'hit');
    await a.text();
    // One entry by its key, as the access log names it.
    const line = await waitFor(() => gw.accessLog().find((e) => e.request_id === a.headers.get('x-request-id')), {
      message: 'the access log line of the hit',
    });
    assert.match(line.cache_key, /^[0-9a-f]{64}$/);
    const one = await runBinary(sluiceBin, ['cache', 'purge', '--key-prefix', line.cache_key.slice(0, 16)], { env });
    assert.equal(one.code, 0, one.stderr);
    assert.equal(one.stdout, 'purged 1 entries here\n');
    const again = await ask('chat', { model: 'cached', text, stream: false, key: KEYS.a1 });
    assert.equal(again.headers.get('x-sluice-cache'), 'miss');
    await again.text();
    const notHex = await adminCall('POST', '/admin/v1/cache/purge?key_prefix=ZZ');
    assert.equal(notHex.status, 400);
    // Two tenants at once is the API's 400, told on stderr; no key is a usage error.
    const both = await runBinary(sluiceBin, ['cache', 'purge', '--key-group', 'x', '--key', 'y'], { env });
    assert.notEqual(both.code, 0);
    const nokey = await runBinary(sluiceBin, ['cache', 'stats'], { env: { ...env, SLUICE_ADMIN_KEY: '' } });
    assert.equal(nokey.code, 2);
    assert.match(nokey.stderr, /set SLUICE_ADMIN_KEY/);
  });
});
