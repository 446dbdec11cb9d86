// Idempotency-Key on model calls through the real binary: a retry after the answer gets the
// same answer without a second upstream call, a retry during the call joins it, the same key
// with another request is refused, a failed call is not replayed, tenants never share keys,
// and the usage ledger holds one paid record. The mock's per-key counts prove the calls.

import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  makeTempDir,
  removeTempDir,
  startMock,
  startSluice,
  usageRecord,
  waitFor,
} from '../support/harness.mjs';

const ADMIN_KEY = 'sk-sluice-idem-admin-key-00000001';
const OTHER_GROUP_KEY = 'sk-sluice-idem-other-group-00001';

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

before(async () => {
  mock = await startMock();
  dir = makeTempDir('sluice-idem-');
  gw = await startSluice(
    {
      version: 1,
      listen: '127.0.0.1:0',
      server: { workers: 2, drain_timeout_ms: 3000 },
      idempotency: { ttl_ms: 60000 },
      admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
      store: { sqlite: path.join(dir, 'usage.db') },
      metering: { flush_interval_ms: 20 },
      providers: [
        provider('up'),
        provider('slow', { 'x-mock-first-byte-ms': '300', 'x-mock-events': '10', 'x-mock-pace-ms': '20' }),
        provider('down', { 'x-mock-status': '503' }),
      ],
      routes: [
        { alias: 'chat', provider: 'up', model: 'mock-model' },
        { alias: 'slow', provider: 'slow', model: 'mock-model' },
        { alias: 'down', provider: 'down', model: 'mock-model', retry: { per_target_attempts: 1 } },
      ],
      keys: [
        { name: 'a', group: 'team-a', key: GATEWAY_KEY },
        { name: 'b', group: 'team-b', key: OTHER_GROUP_KEY },
      ],
    },
    { dir },
  );
  admin = `http://127.0.0.1:${gw.listening.admin_port}`;
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
  if (dir) removeTempDir(dir);
});

let run = 0;
beforeEach(() => {
  run += 1;
});

const calls = async (countKey) => (await mock.stats()).requests_by_header?.[countKey] ?? 0;

function chat(model, idempotencyKey, { text = `hello ${run}`, stream = false, key = GATEWAY_KEY, protocol = 'chat' } = {}) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  if (protocol === 'anthropic') {
    return fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { ...headers, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: text }], stream }),
    });
  }
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: text }], ...(stream ? { stream } : {}) }),
  });
}

const recordOf = (requestId) => usageRecord(admin, ADMIN_KEY, requestId);

describe('Idempotency-Key', () => {
  test('a retry after the answer gets the same answer, and only the first is paid', async () => {
    const key = `retry-after-${run}`;
    const before = await calls('up');
    const first = await chat('chat', key);
    const firstBody = await first.json();
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    const retry = await chat('chat', key);
    const retryBody = await retry.json();
    assert.equal(retry.status, 200);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.equal(retryBody.id, firstBody.id, 'the same answer, id included');
    assert.equal(retryBody.choices[0].message.content, firstBody.choices[0].message.content);
    assert.equal((await calls('up')) - before, 1);
    const paid = await recordOf(first.headers.get('x-request-id'));
    const replayed = await recordOf(retry.headers.get('x-request-id'));
    assert.equal(paid.outcome, 'complete');
    assert.ok(paid.input_tokens > 0);
    assert.equal(replayed.outcome, 'replayed');
    assert.equal(replayed.input_tokens, 0);
    assert.equal(replayed.cost_micros, 0);
  });

  test('a streamed retry is replayed as a stream', async () => {
    const key = `stream-retry-${run}`;
    const first = await chat('chat', key, { stream: true });
    const firstText = await first.text();
    const retry = await chat('chat', key, { stream: true });
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    const content = (t) =>
      t.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '').join('');
    assert.equal(content(await retry.text()), content(firstText));
  });

  test('retries during the call join it: one upstream call', async () => {
    const key = `during-${run}`;
    const before = await calls('slow');
    const results = await Promise.all(
      [0, 1, 2].map(async () => {
        const res = await chat('slow', key, { stream: true });
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
      }),
    );
    assert.deepEqual(results.map((r) => r.status), [200, 200, 200]);
    assert.equal((await calls('slow')) - before, 1);
    // The joiners' streams are told from the first call's events: the same words.
    const words = (t) =>
      t.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)).choices?.[0]?.delta?.content ?? '').join('');
    assert.equal(new Set(results.map((r) => words(r.text))).size, 1);
    assert.match(words(results[0].text), /w10$/);
    assert.equal(results.filter((r) => r.replayed === 'true').length, 2, 'two joined the first');
  });

  test('the same key with another request is refused in the caller protocol', async () => {
    const key = `reused-${run}`;
    await (await chat('chat', key, { text: 'first question' })).text();
    const other = await chat('chat', key, { text: 'another question' });
    assert.equal(other.status, 422);
    const body = await other.json();
    assert.equal(body.error.code, 'idempotency_key_reused');
    assert.equal(body.error.param, 'Idempotency-Key');
    const anthropic = await chat('chat', key, { text: 'first question', protocol: 'anthropic' });
    assert.equal(anthropic.status, 422, 'another protocol is another request');
    const err = await anthropic.json();
    assert.equal(err.type, 'error');
  });

  test('the same key with another request while the first runs is a 409', async () => {
    const key = `conflict-${run}`;
    const first = chat('slow', key, { text: 'one' });
    const deadline = Date.now() + 3000;
    const before = await calls('slow');
    while ((await calls('slow')) === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    const second = await chat('slow', key, { text: 'two' });
    assert.equal(second.status, 409);
    assert.equal((await second.json()).error.code, 'idempotency_key_reused');
    assert.equal((await first).status, 200);
  });

  test('a failed call is not replayed: the retry goes upstream again', async () => {
    const key = `failed-${run}`;
    const before = await calls('down');
    const first = await chat('down', key);
    assert.equal(first.status, 503);
    await first.text();
    const retry = await chat('down', key);
    assert.equal(retry.status, 503);
    assert.equal(retry.headers.get('idempotent-replayed'), null);
    await retry.text();
    assert.equal((await calls('down')) - before, 2);
  });

  test("another tenant's identical key is another call", async () => {
    const key = `tenant-${run}`;
    const before = await calls('up');
    await (await chat('chat', key)).text();
    const other = await chat('chat', key, { key: OTHER_GROUP_KEY });
    assert.equal(other.headers.get('idempotent-replayed'), null);
    await other.text();
    assert.equal((await calls('up')) - before, 2);
  });

  test('an invalid key is a 400 naming the header', async () => {
    const res = await chat('chat', 'x'.repeat(300));
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.param, 'Idempotency-Key');
  });

  test('requests without the header are untouched', async () => {
    const before = await calls('up');
    for (let i = 0; i < 2; i += 1) {
      const res = await chat('chat', undefined);
      assert.equal(res.headers.get('idempotent-replayed'), null);
      await res.text();
    }
    assert.equal((await calls('up')) - before, 2);
  });
});
