// External guardrail checkers (docs/guardrails.md#external-checkers) against a checker server of
// our own on loopback: a generic JSON contract, a Presidio analyzer and an OpenAI-moderation
// endpoint that answer from the text they get, a slow one, a broken one and a closed port.
// Checks what each verdict does to the request, fail closed and fail open, the breaker, that
// the checker gets its own credential and the redacted text, and that a refused request never
// reaches the upstream. Parallel checkers (asked while the upstream answers: a block cancels
// it, and the answer waits for the verdict) and checkers of answers (a complete answer checked
// before it is released, never cached when blocked; a stream's text asked about in windows,
// none of it released before its window was cleared).

import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';

import { GATEWAY_KEY, PROVIDER_KEY, collectSse, jsonEvents, startMock, startSluice, waitFor } from '../support/harness.mjs';

const CHECKER_KEY = 'sk-checker-own-key-000000000001';
let mock;
let gw;
let checker;
let downPort;
const seen = []; // { path, body, authorization }

function startChecker() {
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = JSON.parse(raw || '{}');
      seen.push({ path: req.url, body, authorization: req.headers.authorization });
      const text = body.text ?? body.input ?? '';
      const reply = (status, value) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      if (req.url === '/delayed/check') {
        // A verdict that takes a while: the upstream is asked meanwhile (mode: parallel).
        const verdict = text.includes('forbidden') ? 'block' : 'allow';
        setTimeout(() => reply(200, { verdict }), 300).unref();
      } else if (req.url === '/answers/check' || req.url === '/answers-strict/check') {
        // Judges answers (the mock's replies are "Mock reply w1 w2 ..."): the strict one blocks
        // them, the other flags them.
        const found = body.direction === 'output' && text.includes('Mock reply');
        reply(200, { verdict: !found ? 'allow' : req.url === '/answers/check' ? 'flag' : 'block' });
      } else if (req.url === '/stream-judge/check') {
        // Judges a streamed answer's windows: the word w40 is unacceptable.
        reply(200, { verdict: /\bw40\b/.test(text) ? 'block' : 'allow' });
      } else if (req.url === '/slow/check') {
        setTimeout(() => reply(200, { verdict: 'allow' }), 5000).unref();
      } else if (req.url === '/broken/check') {
        reply(500, { error: 'down for maintenance' });
      } else if (req.url === '/check') {
        const verdict = text.includes('forbidden') ? 'block' : text.includes('suspicious') ? 'flag' : 'allow';
        reply(200, { verdict, reason: 'test' });
      } else if (req.url === '/analyze') {
        const at = text.indexOf('Jane Doe');
        reply(200, at < 0 ? [] : [{ entity_type: 'PERSON', start: at, end: at + 8, score: 0.85 }, { entity_type: 'LOCATION', start: 0, end: 1, score: 0.2 }]);
      } else if (req.url === '/v1/moderations') {
        reply(200, { id: 'modr-1', model: 'omni-moderation-latest', results: [{ flagged: text.includes('violence'), categories: {} }] });
      } else {
        reply(404, { error: 'no such path' });
      }
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function closedPort() {
  const s = net.createServer();
  await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address();
  await new Promise((resolve) => s.close(resolve));
  return port;
}

before(async () => {
  mock = await startMock();
  checker = await startChecker();
  downPort = await closedPort();
  const base = `http://127.0.0.1:${checker.address().port}`;
  const svc = (id, url) => ({ id, adapter: 'openai', base_url: url, api_key: CHECKER_KEY });
  const ext = (name, external, action) => ({ name, external, ...(action ? { action } : {}) });
  gw = await startSluice({
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 1, drain_timeout_ms: 2000 },
    guardrails: {
      policies: [
        { name: 'house', detectors: [ext('house-rules', { provider: 'checker', format: 'generic' })] },
        { name: 'people', detectors: [ext('presidio', { provider: 'checker', format: 'presidio', min_score: 50 }, 'block')] },
        { name: 'safety', detectors: [ext('moderation', { provider: 'checker-v1', format: 'openai_moderation' }, 'flag')] },
        { name: 'slow-closed', detectors: [ext('slow', { provider: 'slow', format: 'generic', timeout_ms: 200 })] },
        { name: 'slow-open', detectors: [ext('slow', { provider: 'slow', format: 'generic', timeout_ms: 200, on_error: 'allow' })] },
        { name: 'broken', detectors: [ext('broken', { provider: 'broken', format: 'generic' })] },
        { name: 'down', detectors: [ext('down', { provider: 'down', format: 'generic', timeout_ms: 500 })] },
        { name: 'pii', detectors: [{ builtin: 'email', action: 'redact' }] },
        { name: 'beside', detectors: [ext('beside', { provider: 'delayed', format: 'generic', mode: 'parallel' })] },
        { name: 'beside-down', detectors: [ext('down', { provider: 'down', format: 'generic', timeout_ms: 300, mode: 'parallel' })] },
        { name: 'beside-open', detectors: [ext('slow', { provider: 'slow', format: 'generic', timeout_ms: 200, on_error: 'allow', mode: 'parallel' })] },
        { name: 'answers', direction: 'output', detectors: [ext('judge', { provider: 'answers', format: 'generic' })] },
        { name: 'answers-strict', direction: 'output', detectors: [ext('judge', { provider: 'answers-strict', format: 'generic' })] },
        {
          name: 'stream-judge',
          direction: 'output',
          hold_back_chars: 16,
          detectors: [ext('judge', { provider: 'stream-judge', format: 'generic', stream_window_chars: 32 })],
        },
        { name: 'stream-slow', direction: 'output', detectors: [ext('slow', { provider: 'slow', format: 'generic', timeout_ms: 200 })] },
        {
          name: 'stream-slow-open',
          direction: 'output',
          detectors: [ext('slow', { provider: 'slow', format: 'generic', timeout_ms: 200, on_error: 'allow', stream_window_chars: 64 })],
        },
      ],
    },
    providers: [
      { id: 'up', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-count-key': 'up' } },
      svc('checker', base),
      svc('checker-v1', `${base}/v1`),
      svc('slow', `${base}/slow`),
      svc('broken', `${base}/broken`),
      svc('down', `http://127.0.0.1:${downPort}`),
      svc('delayed', `${base}/delayed`),
      svc('answers', `${base}/answers`),
      svc('answers-strict', `${base}/answers-strict`),
      svc('stream-judge', `${base}/stream-judge`),
      // One word per event: "Mock reply w1 ... w30" (no w40) and "... w60".
      { id: 'up-30', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-events': '30' } },
      { id: 'up-60', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-events': '60' } },
      // Takes 3 s to answer: long enough that a parallel block must cut it short.
      { id: 'up-slow', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-latency-ms': '3000' } },
      { id: 'up-paced', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY, headers: { 'x-mock-pace-ms': '200', 'x-mock-events': '5' } },
    ],
    cache: { memory_bytes: '16MiB', ttl_ms: 60000 },
    routes: [
      { alias: 'house', provider: 'up', model: 'm', guardrails: ['house'] },
      { alias: 'people', provider: 'up', model: 'm', guardrails: ['people'] },
      { alias: 'safety', provider: 'up', model: 'm', guardrails: ['safety'] },
      { alias: 'slow-closed', provider: 'up', model: 'm', guardrails: ['slow-closed'] },
      { alias: 'slow-open', provider: 'up', model: 'm', guardrails: ['slow-open'] },
      { alias: 'broken', provider: 'up', model: 'm', guardrails: ['broken'] },
      { alias: 'down', provider: 'up', model: 'm', guardrails: ['down'] },
      { alias: 'redacted-then-checked', provider: 'up', model: 'm', guardrails: ['pii', 'house'] },
      { alias: 'beside', provider: 'up', model: 'm', guardrails: ['beside'] },
      { alias: 'beside-slow', provider: 'up-slow', model: 'm', guardrails: ['beside'] },
      { alias: 'beside-paced', provider: 'up-paced', model: 'm', guardrails: ['beside'] },
      { alias: 'beside-cached', provider: 'up', model: 'm', guardrails: ['beside'], cache: true },
      { alias: 'beside-down', provider: 'up-slow', model: 'm', guardrails: ['beside-down'] },
      { alias: 'beside-open', provider: 'up', model: 'm', guardrails: ['beside-open'] },
      { alias: 'answers', provider: 'up', model: 'm', guardrails: ['answers'] },
      { alias: 'answers-blocked', provider: 'up', model: 'm', guardrails: ['answers-strict'], cache: true },
      { alias: 'stream-clean', provider: 'up-30', model: 'm', guardrails: ['stream-judge'] },
      { alias: 'stream-blocked', provider: 'up-60', model: 'm', guardrails: ['stream-judge'], cache: true },
      { alias: 'stream-slow', provider: 'up-30', model: 'm', guardrails: ['stream-slow'] },
      { alias: 'stream-slow-open', provider: 'up-30', model: 'm', guardrails: ['stream-slow-open'] },
    ],
    keys: [{ name: 'a', key: GATEWAY_KEY }],
  });
});
after(async () => {
  await gw?.stop();
  await mock?.stop();
  await new Promise((resolve) => (checker ? checker.close(resolve) : resolve()));
});
beforeEach(async () => {
  await mock.reset();
  seen.length = 0;
});

const chat = (model, content, extra = {}) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content }], ...extra }),
  });
const upstreamCalls = async () => (await mock.stats()).requests_total ?? 0;

describe('external checkers', () => {
  test('a generic checker allows, flags or blocks; it gets its own key, never the caller\'s', async () => {
    const ok = await chat('house', 'hello there');
    assert.equal(ok.status, 200, await ok.text());
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0].body, { text: 'Be brief.\nhello there', direction: 'input' });
    assert.equal(seen[0].authorization, `Bearer ${CHECKER_KEY}`);

    const flagged = await chat('house', 'something suspicious');
    assert.equal(flagged.status, 200);
    await flagged.text();
    assert.equal(flagged.headers.get('x-sluice-guardrails'), 'house/house-rules:flag=1');

    const blocked = await chat('house', 'a forbidden topic');
    const text = await blocked.text();
    assert.equal(blocked.status, 400, text);
    const error = JSON.parse(text).error;
    assert.equal(error.code, 'guardrail_blocked');
    assert.match(error.message, /guardrail policy "house": its checker "house-rules"/);
    assert.equal(await upstreamCalls(), 2, 'the blocked request never went upstream');
    assert.ok(!JSON.stringify(seen).includes(GATEWAY_KEY));
  });

  test('a Presidio analyzer blocks on an entity at or over min_score', async () => {
    const res = await chat('people', 'write to Jane Doe');
    assert.equal(res.status, 400, await res.text());
    assert.deepEqual(seen[0].body, { text: 'Be brief.\nwrite to Jane Doe', language: 'en' });
    const clean = await chat('people', 'write to the team');
    assert.equal(clean.status, 200, await clean.text());
  });

  test('an OpenAI moderation endpoint flags', async () => {
    const res = await chat('safety', 'a story about violence');
    assert.equal(res.status, 200, await res.text());
    assert.equal(res.headers.get('x-sluice-guardrails'), 'safety/moderation:flag=1');
    assert.equal(seen[0].path, '/v1/moderations');
    assert.deepEqual(seen[0].body, { input: 'Be brief.\na story about violence' });
  });

  test('a slow checker fails closed within its timeout, or lets the request go when open', async () => {
    const started = Date.now();
    const closed = await chat('slow-closed', 'hello');
    const text = await closed.text();
    assert.equal(closed.status, 503, text);
    assert.equal(JSON.parse(text).error.code, 'guardrail_unavailable');
    assert.ok(Date.now() - started < 4000, 'answered at the checker timeout, not at the checker');
    assert.equal(await upstreamCalls(), 0);

    const open = await chat('slow-open', 'hello');
    assert.equal(open.status, 200, await open.text());
    assert.equal(open.headers.get('x-sluice-guardrails'), 'slow-open/slow:unchecked=1');
  });

  test('a checker that is down fails closed; three failures open its breaker', async () => {
    const down = await chat('down', 'hello');
    assert.equal(down.status, 503, await down.text());
    for (let i = 0; i < 5; i++) {
      const res = await chat('broken', 'hello');
      assert.equal(res.status, 503, await res.text());
    }
    assert.equal(seen.filter((s) => s.path === '/broken/check').length, 3, 'after three failures it is skipped');
    assert.equal(await upstreamCalls(), 0);
  });

  test('the checker sees the redacted text only', async () => {
    const res = await chat('redacted-then-checked', 'mail jane.roe@example.org today');
    assert.equal(res.status, 200, await res.text());
    assert.equal(seen[0].body.text, 'Be brief.\nmail [EMAIL_1] today');
  });
});

describe('parallel checkers (mode: parallel)', () => {
  test('the upstream is asked at once; the answer waits for the verdict, then goes out', async () => {
    const started = Date.now();
    const res = await chat('beside', 'hello there');
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.ok(Date.now() - started >= 290, 'the answer waited for the 300 ms verdict');
    assert.equal(await upstreamCalls(), 1);
    assert.deepEqual(seen[0].body, { text: 'Be brief.\nhello there', direction: 'input' });
  });

  test('a block cancels the upstream call still under way and is answered in the caller\'s protocol', async () => {
    const started = Date.now();
    const res = await chat('beside-slow', 'a forbidden topic');
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.equal(JSON.parse(text).error.code, 'guardrail_blocked');
    assert.ok(Date.now() - started < 2500, 'answered at the verdict, not after the 3 s upstream');
    assert.equal(await upstreamCalls(), 1, 'the upstream was asked beside the checker');
    await waitFor(async () => (await mock.stats()).requests_aborted >= 1, { timeoutMs: 3000, message: 'upstream call cancelled' });
    const line = await gw.waitForLog((l) => l.alias === 'beside-slow' && l.status === 400);
    assert.equal(line.guardrails, 'beside/beside:block=1');
  });

  test('a stream is not begun before the verdict: a block is a plain error, the upstream stream cut', async () => {
    const res = await chat('beside-paced', 'a forbidden topic', { stream: true });
    const text = await res.text();
    assert.equal(res.status, 400, text);
    assert.equal(JSON.parse(text).error.code, 'guardrail_blocked');
    assert.ok(!text.includes('Mock reply'), 'no byte of the answer');
    await waitFor(async () => (await mock.stats()).streams_aborted >= 1, { timeoutMs: 3000, message: 'upstream stream cut' });

    const ok = await chat('beside-paced', 'hello', { stream: true });
    const events = await ok.text();
    assert.equal(ok.status, 200);
    assert.match(events, /\[DONE\]/);
  });

  test('a cached answer waits for the verdict too: a blocked prompt is never answered from the cache', async () => {
    // Stored by an allowed request, then asked with the same bytes but a verdict of block
    // is impossible (the verdict is on the text); so: stored, then the checker must still be
    // asked and waited for on the hit.
    const first = await chat('beside-cached', 'cache me');
    assert.equal(first.status, 200, await first.text());
    seen.length = 0;
    const started = Date.now();
    const hit = await chat('beside-cached', 'cache me');
    assert.equal(hit.status, 200, await hit.text());
    assert.equal(hit.headers.get('x-sluice-cache'), 'hit');
    assert.equal(seen.length, 1, 'the hit was checked');
    assert.ok(Date.now() - started >= 290, 'the hit waited for the verdict');
    const blocked = await chat('beside-cached', 'cache me, forbidden');
    assert.equal(blocked.status, 400, await blocked.text());
  });

  test('a checker that is down fails closed (503, upstream cancelled), or open with a flag', async () => {
    const closed = await chat('beside-down', 'hello');
    const text = await closed.text();
    assert.equal(closed.status, 503, text);
    assert.equal(JSON.parse(text).error.code, 'guardrail_unavailable');
    assert.match(JSON.parse(text).error.message, /so its answer was withheld/);
    await waitFor(async () => (await mock.stats()).requests_aborted >= 1, { timeoutMs: 3000, message: 'upstream call cancelled' });

    const open = await chat('beside-open', 'hello');
    assert.equal(open.status, 200, await open.text());
    assert.equal(open.headers.get('x-sluice-guardrails'), 'beside-open/slow:unchecked=1');
  });
});

describe('checkers of answers (direction: output)', () => {
  test('a complete answer is asked about before it goes out; a flag says so', async () => {
    const res = await chat('answers', 'hello');
    const body = await res.json();
    assert.equal(res.status, 200);
    assert.match(body.choices[0].message.content, /^Mock reply/);
    const asked = seen.filter((s) => s.body.direction === 'output');
    assert.equal(asked.length, 1);
    assert.match(asked[0].body.text, /^Mock reply w1/);
    assert.equal(res.headers.get('x-sluice-guardrails'), 'out:answers/judge:flag=1');
  });

  test('a blocked answer is refused, never cached; its generation is metered', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await chat('answers-blocked', 'hello');
      const text = await res.text();
      assert.equal(res.status, 400, text);
      assert.equal(JSON.parse(text).error.code, 'guardrail_blocked');
      assert.match(JSON.parse(text).error.message, /The answer was blocked by guardrail policy "answers-strict"/);
      assert.ok(!text.includes('Mock reply'));
    }
    assert.equal(await upstreamCalls(), 2, 'the blocked answer was not stored: each request went upstream');
    const line = await gw.waitForLog((l) => l.alias === 'answers-blocked' && l.status === 400);
    assert.equal(line.usage?.output_tokens, 10, 'the blocked generation was paid: metered');
    assert.equal(line.guardrails, 'out:answers-strict/judge:block=1');
  });
});

// "Mock reply w1 w2 ... wN", as the mock streams it one word per event.
const mockReply = (words) => ['Mock reply', ...Array.from({ length: words }, (_, i) => `w${i + 1}`)].join(' ');
const streamedText = (events) => jsonEvents(events).map((e) => e.choices?.[0]?.delta?.content ?? '').join('');

describe('checkers of streamed answers', () => {
  const asks = () => seen.filter((s) => s.path === '/stream-judge/check');

  test('a clean stream goes out whole; the checker saw every character, in windows', async () => {
    const res = await chat('stream-clean', 'hello', { stream: true });
    assert.equal(res.status, 200);
    const { events, text } = await collectSse(res);
    const full = mockReply(30);
    assert.equal(streamedText(events), full);
    assert.ok(text.trim().endsWith('data: [DONE]'), text);
    const windows = asks().map((a) => a.body.text);
    assert.ok(windows.length >= 3, `asked ${windows.length} times: ${JSON.stringify(windows)}`);
    assert.ok(asks().every((a) => a.body.direction === 'output'));
    // In order, each a piece of the answer that starts at or before the end of the one before
    // (16 characters of context), the first at its start, the last at its end.
    let end = 0;
    for (const w of windows) {
      const at = full.indexOf(w, Math.max(0, end - 16));
      assert.equal(at, Math.max(0, end - 16), `window ${JSON.stringify(w)} does not follow on at ${end} with 16 characters of context`);
      assert.ok(at + w.length > end, 'each window brings new text');
      end = at + w.length;
    }
    assert.equal(end, full.length, 'the end of the answer was asked about');
    const line = await gw.waitForLog((l) => l.request_id === res.headers.get('x-request-id'));
    assert.equal(line.outcome, 'complete');
  });

  test('a blocked window ends the stream before any of its text went out, never cached', async () => {
    const full = mockReply(60);
    for (let i = 0; i < 2; i++) {
      seen.length = 0;
      const res = await chat('stream-blocked', 'hello', { stream: true });
      assert.equal(res.status, 200);
      const { events, text } = await collectSse(res);
      const got = streamedText(events);
      assert.ok(full.startsWith(got), got);
      assert.ok(!/\bw40\b/.test(text), 'nothing of the unacceptable word went out');
      assert.ok(!text.includes('[DONE]'), 'the stream did not end as a success');
      assert.match(events.at(-1).raw, /"code":"guardrail_blocked"/);
      const windows = asks().map((a) => a.body.text);
      assert.match(windows.at(-1), /\bw40\b/);
      assert.ok(windows.length >= 2, JSON.stringify(windows));
      // The blocked window's new text starts where the window before it ended.
      const before = windows.at(-2);
      const cleared = full.indexOf(before) + before.length;
      assert.ok(got.length <= cleared, `the caller got ${JSON.stringify(got)}, past the cleared ${cleared} characters`);
      const line = await gw.waitForLog((l) => l.request_id === res.headers.get('x-request-id'));
      assert.equal(line.outcome, 'midstream_error');
      assert.equal(line.guardrails, 'out:stream-judge/judge:block=1');
    }
    assert.equal(await upstreamCalls(), 2, 'the blocked answer was not stored: each request went upstream');

    const anthropic = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': GATEWAY_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'stream-blocked', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const told = await anthropic.text();
    assert.ok(!/\bw40\b/.test(told), told);
    assert.match(told, /event: error\ndata: \{"type":"error"/);
    assert.ok(!told.includes('message_stop'));
  });

  test('a checker that does not answer ends the stream (closed) or lets it through unchecked (open)', async () => {
    const closed = await chat('stream-slow', 'hello', { stream: true });
    const { text } = await collectSse(closed);
    assert.ok(!text.includes('Mock reply'), 'nothing unchecked went out');
    assert.match(text, /"code":"guardrail_unavailable"/);

    const open = await chat('stream-slow-open', 'hello', { stream: true });
    const got = await collectSse(open);
    assert.equal(streamedText(got.events), mockReply(30));
    assert.ok(got.text.trim().endsWith('data: [DONE]'));
    const line = await gw.waitForLog((l) => l.request_id === open.headers.get('x-request-id'));
    assert.equal(line.outcome, 'complete');
    assert.match(line.guardrails, /^out:stream-slow-open\/slow:unchecked=\d+$/, 'one find, counted per window');
  });
});
