// The answer cache and Idempotency-Key over a real redis-server shared by two instances
// (SLUICE_TEST_REDIS_URL, scripts/test-services.sh): an answer paid for on one instance is a
// hit on the other, in another protocol; a miss while the other instance makes the same call
// follows that call live instead of paying again (and makes its own once it failed); a retry that reaches the other instance while the
// first call runs is told to retry (409), never sent upstream again, and after it gets the
// same answer replayed; a purge drops the shared copies; and Redis killed under load costs no
// request anything but a trip to the origin. The only fake is the upstream.

import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  makeTempDir,
  removeTempDir,
  sseEvents,
  startMock,
  startSluice,
  usageRecord,
  waitFor,
} from '../support/harness.mjs';

const REDIS_URL = process.env.SLUICE_TEST_REDIS_URL;
const ADMIN_KEY = 'sk-sluice-shared-cache-admin-0001';
const OTHER_KEY = 'sk-sluice-shared-cache-team-b-001';

let mock;
let dir;
const gws = [];
const dirs = [];
const prefix = `it${process.pid}${Date.now()}:`;

const provider = (id, headers = {}) => ({
  id,
  adapter: 'openai',
  base_url: mock.baseUrl,
  api_key: PROVIDER_KEY,
  headers: { 'x-mock-count-key': `${prefix}${id}`, ...headers },
});

function config(name) {
  const redis = { url: REDIS_URL, timeout_ms: 50, key_prefix: prefix };
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 2, drain_timeout_ms: 3000 },
    cache: { memory_bytes: '16MiB', ttl_ms: 60000, redis, compress_above_bytes: 256 },
    idempotency: { ttl_ms: 60000, redis },
    admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
    store: { sqlite: path.join(dir, `${name}.db`) },
    metering: { flush_interval_ms: 20 },
    providers: [
      provider('cached'),
      provider('slow', { 'x-mock-first-byte-ms': '600', 'x-mock-events': '10', 'x-mock-pace-ms': '20' }),
      // Three words, then nothing: an answer that never completes (cut by the idle timeout).
      { ...provider('stalled', { 'x-mock-stall-after': '3', 'x-mock-events': '10' }), timeout: { idle_ms: 1500 } },
      provider('paced', { 'x-mock-events': '12', 'x-mock-pace-ms': '100' }),
      provider('plain'),
      provider('faq'),
      provider('emb', { 'x-mock-embeddings': 'bag-of-words' }),
    ],
    routes: [
      { alias: 'cached', provider: 'cached', model: 'mock-model', cache: true },
      { alias: 'slow', provider: 'slow', model: 'mock-model' },
      { alias: 'slow-cached', provider: 'slow', model: 'mock-model', cache: { shared_flight_wait_ms: 60000 } },
      { alias: 'stalled-cached', provider: 'stalled', model: 'mock-model', cache: { shared_flight_wait_ms: 60000 } },
      { alias: 'paced-cached', provider: 'paced', model: 'mock-model', cache: { shared_flight_wait_ms: 60000 } },
      { alias: 'plain', provider: 'plain', model: 'mock-model' },
      { alias: 'faq', provider: 'faq', model: 'mock-model', cache: { semantic: { embeddings: 'embed', dimensions: 1024 } } },
      { alias: 'embed', kind: 'embeddings', provider: 'emb', model: 'mock-embed' },
    ],
    keys: [
      { name: 'a', group: 'team-a', key: GATEWAY_KEY },
      { name: 'b', group: 'team-b', key: OTHER_KEY },
    ],
  };
}

const skip = !REDIS_URL && 'SLUICE_TEST_REDIS_URL is not set';

before(async () => {
  if (skip) return;
  mock = await startMock();
  dir = makeTempDir('sluice-shared-cache-');
  for (const name of ['one', 'two']) {
    const own = makeTempDir(`sluice-shared-cache-${name}-`);
    dirs.push(own);
    gws.push(await startSluice(config(name), { dir: own }));
  }
});

after(async () => {
  for (const gw of gws) await gw.stop();
  await mock?.stop();
  for (const d of [dir, ...dirs]) if (d) removeTempDir(d);
});

const calls = async (id) => (await mock.stats()).requests_by_header?.[`${prefix}${id}`] ?? 0;

function chat(gw, model, text, { key = GATEWAY_KEY, headers = {}, stream = false, signal } = {}) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    signal,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: text }], ...(stream ? { stream } : {}) }),
  });
}

function anthropic(gw, model, text, { stream = false } = {}) {
  return fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 64, messages: [{ role: 'user', content: text }], stream }),
  });
}

const adminOf = (gw) => `http://127.0.0.1:${gw.listening.admin_port}`;
async function adminCall(gw, method, p) {
  const res = await fetch(`${adminOf(gw)}${p}`, { method, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  return { status: res.status, body: await res.json() };
}

const recordOf = (gw, requestId) => usageRecord(adminOf(gw), ADMIN_KEY, requestId);

async function metric(gw, name, labels = {}) {
  const res = await fetch(`${adminOf(gw)}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  const text = await res.text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.split(' ').pop());
  }
  return sum;
}

// The entry is written to Redis after the first caller's answer: bounded wait until the other
// instance finds it.
async function hitOn(gw, ask) {
  return waitFor(
    async () => {
      const res = await ask();
      const text = await res.text();
      return res.headers.get('x-sluice-cache') === 'hit' ? { res, text } : undefined;
    },
    { timeoutMs: 3000, intervalMs: 20, message: 'the other instance to find the shared entry' },
  );
}

describe('a cache shared through Redis', { skip }, () => {
  test("an answer paid for on one instance is the other's hit, in another protocol", async () => {
    const [one, two] = gws;
    const text = `shared question ${Date.now()} ${'long context '.repeat(40)}`; // deflated
    const before = await calls('cached');
    const miss = await chat(one, 'cached', text);
    assert.equal(miss.headers.get('x-sluice-cache'), 'miss');
    const answer = (await miss.json()).choices[0].message.content;
    const { res, text: body } = await hitOn(two, () => anthropic(two, 'cached', text));
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(body).content[0].text, answer);
    assert.equal((await calls('cached')) - before, 1, 'one upstream call for both instances');
    const record = await recordOf(two, res.headers.get('x-request-id'));
    assert.equal(record.outcome, 'cache_hit');
    assert.equal(record.provider, 'cached');
    // Kept on the second instance now: a hit there without Redis in the way.
    const again = await chat(two, 'cached', text, { stream: true });
    assert.equal(again.headers.get('x-sluice-cache'), 'hit');
    await again.text();
    // Another tenant on either instance never gets it.
    const other = await chat(two, 'cached', text, { key: OTHER_KEY });
    assert.equal(other.headers.get('x-sluice-cache'), 'miss');
    await other.text();
  });

  test('a purge on one instance drops the shared copies too', async () => {
    const [one, two] = gws;
    const text = `purge shared ${Date.now()}`;
    await (await chat(one, 'cached', text)).text();
    await hitOn(one, () => chat(one, 'cached', text)); // stored (locally, and sent to Redis)
    const purged = await adminCall(one, 'POST', '/admin/v1/cache/purge?route=cached&key_group=team-a');
    assert.equal(purged.status, 200, JSON.stringify(purged.body));
    assert.ok(purged.body.shared_purged >= 1, JSON.stringify(purged.body));
    const res = await chat(two, 'cached', text);
    assert.equal(res.headers.get('x-sluice-cache'), 'miss', 'the other instance had only the shared copy');
    await res.text();
  });
});

describe('the semantic cache across instances', { skip }, () => {
  // Forty words, then the same with one of them changed: cosine ~0.975 under the mock's
  // bag-of-words embeddings. Two variants (two words apart) are below the 0.97 threshold, so
  // a variant that missed answers no later one.
  const words = Array.from({ length: 40 }, (_, i) => `sem${Date.now()}w${i}`);
  const variant = (n) => words.map((w, i) => (i === n ? `${w}x` : w)).join(' ');

  test("a paraphrase on one instance is answered by the other's answer, never another tenant's", async () => {
    const [one, two] = gws;
    const before = await calls('faq');
    const miss = await chat(one, 'faq', words.join(' '));
    assert.equal(miss.headers.get('x-sluice-cache'), 'miss');
    const answer = (await miss.json()).choices[0].message.content;
    // The second instance has neither the answer nor its vector of its own: both come from
    // Redis (written after the first caller's answer, hence the bounded wait, a new wording
    // each time).
    let n = 0;
    const { res, body } = await waitFor(
      async () => {
        const r = await chat(two, 'faq', variant(n++));
        const b = await r.text();
        return r.headers.get('x-sluice-cache') === 'semantic' ? { res: r, body: b } : undefined;
      },
      { timeoutMs: 3000, intervalMs: 20, message: 'the other instance to find the shared vector' },
    );
    assert.equal(JSON.parse(body).choices[0].message.content, answer);
    assert.ok(Number(res.headers.get('x-sluice-cache-similarity')) >= 0.97);
    assert.equal((await calls('faq')) - before, n, 'every wording but the one answered by meaning paid once');
    const record = await recordOf(two, res.headers.get('x-request-id'));
    assert.equal(record.outcome, 'cache_hit');

    // The same question from another tenant, on either instance: its own bucket, so a miss
    // (in other wordings each time, or the second would find the first's exact answer).
    for (const [gw, wording] of [[two, variant(39)], [one, variant(38)]]) {
      const other = await chat(gw, 'faq', wording, { key: OTHER_KEY });
      assert.equal(other.headers.get('x-sluice-cache'), 'miss');
      await other.text();
    }
  });
});

describe('single-flight across instances', { skip }, () => {
  test("a miss while the other instance makes the same call waits for that call's answer", async () => {
    const [one, two] = gws;
    const text = `one flight for two instances ${Date.now()}`;
    const before = await calls('slow');
    const first = chat(one, 'slow-cached', text);
    await waitFor(async () => (await calls('slow')) > before, { timeoutMs: 3000, intervalMs: 5, message: 'the first call upstream' });
    // The other instance, in another protocol and mode: told from the first call's answer.
    const second = await anthropic(two, 'slow-cached', text, { stream: true });
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('x-sluice-cache'), 'coalesced');
    const events = await second.text();
    const firstRes = await first;
    assert.equal(firstRes.headers.get('x-sluice-cache'), 'miss');
    const answer = (await firstRes.json()).choices[0].message.content;
    const told = events
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)))
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text)
      .join('');
    assert.equal(told, answer);
    assert.equal((await calls('slow')) - before, 1, 'one upstream call for both instances');
    const paid = await recordOf(one, firstRes.headers.get('x-request-id'));
    const shared = await recordOf(two, second.headers.get('x-request-id'));
    assert.equal(paid.outcome, 'complete');
    assert.equal(shared.outcome, 'coalesced');
    assert.equal(shared.provider, 'slow');
    assert.equal(shared.input_tokens, 0);
    assert.equal(shared.saved_input_tokens, paid.input_tokens);
  });

  test("a waiter on the other instance gets the first call's events live, before it is complete", async () => {
    const [one, two] = gws;
    const text = `one live flight for two instances ${Date.now()}`;
    const before = await calls('stalled');
    const leaving = new AbortController();
    const first = await chat(one, 'stalled-cached', text, { stream: true, signal: leaving.signal });
    assert.equal(first.headers.get('x-sluice-cache'), 'miss');
    // The first caller reads its three words; the call then stalls, never complete.
    const firstEvents = sseEvents(first);
    let firstText = '';
    while (firstText.split(' ').length < 4) {
      const { value } = await firstEvents.next();
      const delta = JSON.parse(value.data).choices?.[0]?.delta?.content;
      if (delta) firstText += delta;
    }
    // The other instance, in another protocol: the same words, while the call is still open.
    const second = await anthropic(two, 'stalled-cached', text, { stream: true });
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('x-sluice-cache'), 'coalesced');
    const secondEvents = sseEvents(second);
    let told = '';
    const raw = [];
    while (told !== firstText) {
      const { value, done } = await secondEvents.next();
      assert.ok(!done, `the stream ended with ${JSON.stringify(told)} of ${JSON.stringify(firstText)}`);
      raw.push(value.raw);
      const e = value.data && JSON.parse(value.data);
      if (e?.type === 'content_block_delta') told += e.delta.text;
      assert.ok(firstText.startsWith(told), `${JSON.stringify(told)} is not what the first caller got`);
    }
    assert.equal((await calls('stalled')) - before, 1, 'one upstream call for both instances');
    // The first caller leaves; the call goes on for the follower until the stalled upstream's
    // idle timeout ends it without an answer, and the follower's stream with its protocol's
    // error event, not a success.
    leaving.abort();
    for (;;) {
      const { value, done } = await secondEvents.next();
      if (done) break;
      raw.push(value.raw);
    }
    const rest = raw.join('');
    assert.match(rest, /event: error\ndata: \{"type":"error"/, rest);
    assert.ok(!rest.includes('message_stop'));
    const shared = await recordOf(two, second.headers.get('x-request-id'));
    assert.equal(shared.outcome, 'midstream_error');
    assert.equal((await calls('stalled')) - before, 1);
  });

  test('the first caller leaving does not stop the call while a waiter on the other instance follows it', async () => {
    const [one, two] = gws;
    const text = `a flight that goes on ${Date.now()}`;
    const before = await calls('paced');
    const leaving = new AbortController();
    const first = await chat(one, 'paced-cached', text, { stream: true, signal: leaving.signal });
    const firstEvents = sseEvents(first);
    const second = await anthropic(two, 'paced-cached', text, { stream: true });
    assert.equal(second.headers.get('x-sluice-cache'), 'coalesced');
    const secondEvents = sseEvents(second);
    const raw = [];
    let told = '';
    let deltas = 0;
    while (deltas < 3) {
      const { value, done } = await secondEvents.next();
      assert.ok(!done);
      raw.push(value.raw);
      const e = value.data && JSON.parse(value.data);
      if (e?.type === 'content_block_delta') {
        told += e.delta.text;
        deltas += 1;
      }
    }
    // Two more words for the first caller: the first call's appends since have been answered
    // with the follower's watch.
    let firstDeltas = 0;
    while (firstDeltas < deltas + 2) {
      const { value } = await firstEvents.next();
      if (JSON.parse(value.data).choices?.[0]?.delta?.content) firstDeltas += 1;
    }
    leaving.abort();
    for (;;) {
      const { value, done } = await secondEvents.next();
      if (done) break;
      raw.push(value.raw);
      const e = value.data && JSON.parse(value.data);
      if (e?.type === 'content_block_delta') told += e.delta.text;
    }
    const all = raw.join('');
    assert.ok(all.includes('event: message_stop'), all);
    assert.ok(!all.includes('event: error'), all);
    assert.equal(told, ['Mock reply', ...Array.from({ length: 12 }, (_, i) => `w${i + 1}`)].join(' '));
    assert.equal((await calls('paced')) - before, 1, 'one upstream call, run to its end');
    const shared = await recordOf(two, second.headers.get('x-request-id'));
    assert.equal(shared.outcome, 'coalesced');
    const paid = await recordOf(one, first.headers.get('x-request-id'));
    assert.ok(paid.output_tokens > 0, JSON.stringify(paid));
  });

  test('a first call that ends without an answer leaves the key to the waiter at once', async () => {
    const [one, two] = gws;
    const text = `a flight that fails ${Date.now()}`;
    const before = await calls('slow');
    const leaving = new AbortController();
    const first = chat(one, 'slow-cached', text, { signal: leaving.signal }).catch(() => undefined);
    await waitFor(async () => (await calls('slow')) > before, { timeoutMs: 3000, intervalMs: 5, message: 'the first call upstream' });
    // Waits up to 60 s for the first call; the test gives it 20: only the released claim
    // (the first caller left, its upstream call was cancelled) can answer it in time.
    const second = chat(two, 'slow-cached', text, { signal: AbortSignal.timeout(20000) });
    leaving.abort();
    await first;
    const res = await second;
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-sluice-cache'), 'miss', 'a call of its own');
    await res.json();
    assert.equal((await calls('slow')) - before, 2);
  });
});

describe('Idempotency-Key across instances', { skip }, () => {
  test('a retry elsewhere during the call is a 409, after it the same answer; one paid record', async () => {
    const [one, two] = gws;
    const key = `across-${Date.now()}`;
    const text = `pay once ${key}`;
    const before = await calls('slow');
    const first = chat(one, 'slow', text, { headers: { 'idempotency-key': key } });
    await waitFor(async () => (await calls('slow')) > before, { timeoutMs: 3000, intervalMs: 5, message: 'the first call upstream' });
    const during = await chat(two, 'slow', text, { headers: { 'idempotency-key': key } });
    assert.equal(during.status, 409);
    assert.ok(Number(during.headers.get('retry-after')) >= 1);
    assert.equal((await during.json()).error.code, 'idempotency_key_in_use');
    const otherBody = await chat(two, 'slow', 'another question', { headers: { 'idempotency-key': key } });
    assert.equal(otherBody.status, 409, 'another request under the key while it runs');
    assert.equal((await otherBody.json()).error.code, 'idempotency_key_reused');

    const firstRes = await first;
    const firstBody = await firstRes.json();
    assert.equal(firstRes.status, 200);
    const replay = await waitFor(
      async () => {
        const r = await chat(two, 'slow', text, { headers: { 'idempotency-key': key } });
        if (r.status === 409) {
          await r.text();
          return undefined; // the first call's record is on its way to Redis
        }
        return r;
      },
      { timeoutMs: 3000, intervalMs: 20, message: 'the replay on the other instance' },
    );
    assert.equal(replay.status, 200);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    const replayBody = await replay.json();
    assert.equal(replayBody.id, firstBody.id, 'the same answer, id included');
    assert.equal((await calls('slow')) - before, 1, 'one upstream call');

    const reused = await chat(two, 'slow', 'a different question', { headers: { 'idempotency-key': key } });
    assert.equal(reused.status, 422);
    await reused.text();

    const paid = await recordOf(one, firstRes.headers.get('x-request-id'));
    const free = await recordOf(two, replay.headers.get('x-request-id'));
    assert.equal(paid.outcome, 'complete');
    assert.ok(paid.input_tokens > 0);
    assert.equal(free.outcome, 'replayed');
    assert.equal(free.input_tokens, 0);
    assert.equal(free.cost_micros, 0);
  });
});

describe('Redis killed under load', { skip: skip || (!process.env.SLUICE_TEST_REDIS_STOP && 'SLUICE_TEST_REDIS_STOP is not set') }, () => {
  test('every request is answered by the origin, the outage is counted and logged once', async () => {
    const [one] = gws;
    let down = false;
    try {
      const load = (tag) =>
        Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const res = await chat(one, 'cached', `load ${tag} ${i} ${Date.now()}`);
            await res.text();
            return res.status;
          }),
        );
      const warm = load('before');
      execSync(process.env.SLUICE_TEST_REDIS_STOP);
      down = true;
      const during = await load('during');
      assert.deepEqual(new Set([...(await warm), ...during]), new Set([200]));
      assert.equal(await metric(one, 'sluice_cache_backend_up', { store: 'answers' }), 0);
      assert.ok((await metric(one, 'sluice_cache_backend_errors_total', { store: 'answers' })) > 0);
      const lines = one.stderr.split('\n').filter((l) => l.includes('cache: redis at') && l.includes('is not answering'));
      assert.equal(lines.length, 1, one.stderr);
      execSync(process.env.SLUICE_TEST_REDIS_START);
      down = false;
      await waitFor(
        async () => {
          await (await chat(one, 'cached', `after ${Date.now()}`)).text();
          return (await metric(one, 'sluice_cache_backend_up', { store: 'answers' })) === 1;
        },
        { timeoutMs: 5000, intervalMs: 50, message: 'the cache to use Redis again' },
      );
      await waitFor(() => one.stderr.includes('cache: redis at') && one.stderr.includes('answers again'), {
        message: 'the recovery log line',
      });
    } finally {
      if (down) execSync(process.env.SLUICE_TEST_REDIS_START);
    }
  });
});
