// sluice-mock-upstream on its own: the x-mock-* headers that let the gateway's regression
// tests reproduce interim responses, pooled-connection cross-talk (a response nobody asked
// for), header relaying, 2xx statuses, streams without [DONE], and silent re-sends
// (requests_by_header).

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';

import { RawConnection, collectSse, jsonEvents, rawRequest, startMock } from '../support/harness.mjs';

let mock;

before(async () => {
  mock = await startMock();
});

after(async () => {
  await mock?.stop();
});

beforeEach(async () => {
  await mock.reset();
});

const CHAT = '/v1/chat/completions';

function chatJson(extra = {}) {
  return JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'Say hello' }], ...extra });
}

async function open(t) {
  const c = await RawConnection.open(mock.port);
  t.after(() => c.destroy());
  return c;
}

/** Writes one chat request on `c`. `stream` asks for a stream; `headers` are added as given. */
function sendChat(c, headers = {}, { stream = false, extra = {} } = {}) {
  const body = chatJson(stream ? { stream: true, ...extra } : extra);
  return c.write(rawRequest('POST', CHAT, { headers: { 'content-type': 'application/json', ...headers }, body }));
}

/** POSTs a chat request to the mock with fetch. */
function postChat(headers = {}, extra = {}) {
  return fetch(`${mock.url}${CHAT}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: chatJson(extra),
  });
}

/** Reads interim heads until the final response; returns { interim, final }. */
async function readWithInterim(c) {
  const interim = [];
  for (;;) {
    const r = await c.readResponse();
    if (r.status >= 200) {
      return { interim, final: r };
    }
    interim.push(r);
  }
}

/** The data payloads of a chunked SSE body read by RawConnection (one event per chunk). */
function chunkData(resp) {
  return resp.chunks.map((ch) => ch.replace(/^data: /, '').replace(/\n\n$/, ''));
}

/** Expects a 400 whose OpenAI error message names `header`. */
async function assertRejected(res, header) {
  const text = await res.text();
  assert.equal(res.status, 400, text);
  const body = JSON.parse(text);
  assert.match(body.error.message, new RegExp(header), text);
}

describe('x-mock-informational', () => {
  test('interim heads precede a non-stream reply, each on its own, 103 with a Link', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'x-mock-informational': '100,102,103', 'x-mock-events': '2' });
    const { interim, final } = await readWithInterim(c);
    assert.deepEqual(
      interim.map((r) => r.rawHead),
      ['HTTP/1.1 100 Continue', 'HTTP/1.1 102 Processing', 'HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload'],
    );
    assert.equal(final.status, 200);
    assert.equal(final.json.choices[0].message.content, 'Mock reply w1 w2');
  });

  test('a stream gets its interim heads before the chunked head, and they precede latency', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'x-mock-informational': '103', 'x-mock-latency-ms': '5000', 'x-mock-events': '1' }, { stream: true });
    // The 103 arrives at once, long before the 5 s latency runs out.
    const early = await c.readResponse({ timeoutMs: 2000 });
    assert.equal(early.status, 103);
    assert.equal(early.headers.link, '</x>; rel=preload');
    assert.equal(c.buf.length, 0, 'nothing but the interim head yet');
    c.destroy();

    const c2 = await open(t);
    await sendChat(c2, { 'x-mock-informational': '100,199', 'x-mock-events': '1' }, { stream: true });
    const { interim, final } = await readWithInterim(c2);
    assert.deepEqual(interim.map((r) => `${r.status} ${r.reason}`), ['100 Continue', '199 Unknown']);
    assert.equal(final.headers['transfer-encoding'], 'chunked');
    assert.ok(final.chunkedComplete);
    assert.equal(chunkData(final).at(-1), '[DONE]');
  });

  test('fixtures and raw bodies get them too', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'x-mock-informational': '102', 'x-mock-fixture': 'chat-stream-text' });
    let { interim, final } = await readWithInterim(c);
    assert.deepEqual(interim.map((r) => r.status), [102]);
    assert.equal(final.headers['content-type'], 'text/event-stream');
    assert.ok(final.chunkedComplete);

    await sendChat(c, { 'x-mock-informational': '100,100', 'x-mock-raw-body': 'not json', 'x-mock-status': '502' });
    ({ interim, final } = await readWithInterim(c));
    assert.deepEqual(interim.map((r) => r.status), [100, 100]);
    assert.equal(final.status, 502);
    assert.equal(final.text, 'not json');
  });

  test('a malformed value is a 400 naming the header, without interim heads', async (t) => {
    for (const value of ['101', '200', '99', '100,', 'abc', '']) {
      const c = await open(t);
      await sendChat(c, { 'x-mock-informational': value });
      const r = await c.readResponse();
      assert.equal(r.status, 400, `value '${value}': ${r.rawHead}`);
      assert.match(r.json.error.message, /x-mock-informational/);
      c.destroy();
    }
    assert.equal((await mock.stats()).requests_total, 6);
  });
});

describe('x-mock-trailing-response', () => {
  test('a complete response nobody asked for follows a non-stream reply in the same write', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'x-mock-trailing-response': '1', 'x-mock-events': '1' });
    const real = await c.readResponse();
    assert.equal(real.status, 200);
    assert.equal(real.json.id, 'chatcmpl-mock-1');
    // One write: by the time the real reply is complete, the smuggled one is already here.
    assert.match(c.buf.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[^]*"SMUGGLED-RESPONSE"[^]*\}$/);

    const smuggled = await c.readResponse({ timeoutMs: 500 });
    assert.equal(smuggled.status, 200);
    assert.equal(smuggled.headers['content-type'], 'application/json');
    assert.equal(Number(smuggled.headers['content-length']), smuggled.body.length);
    assert.equal(smuggled.headers['transfer-encoding'], undefined);
    assert.equal(smuggled.headers.connection, undefined);
    assert.equal(smuggled.headers['x-mock-request-number'], '0');
    assert.equal(smuggled.json.id, 'chatcmpl-smuggled');
    assert.equal(smuggled.json.object, 'chat.completion');
    assert.equal(smuggled.json.choices[0].message.role, 'assistant');
    assert.equal(smuggled.json.choices[0].message.content, 'SMUGGLED-RESPONSE');
    assert.equal(smuggled.json.choices[0].finish_reason, 'stop');
    assert.equal(c.buf.length, 0);

    // Keep-alive: the connection still serves the next request.
    await sendChat(c, { 'x-mock-events': '1' });
    const next = await c.readResponse();
    assert.equal(next.json.id, 'chatcmpl-mock-2');
    assert.equal(c.buf.length, 0);
    assert.equal((await mock.stats()).trailing_responses_sent, 1);
  });

  test('after a stream it follows the terminating zero-size chunk, in the same write', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'x-mock-trailing-response': '1', 'x-mock-events': '2' }, { stream: true });
    const real = await c.readResponse();
    assert.ok(real.chunkedComplete);
    assert.equal(chunkData(real).at(-1), '[DONE]');
    assert.match(c.buf.toString('latin1'), /^HTTP\/1\.1 200 OK\r\n[^]*"SMUGGLED-RESPONSE"[^]*\}$/);
    const smuggled = await c.readResponse({ timeoutMs: 500 });
    assert.equal(smuggled.json.choices[0].message.content, 'SMUGGLED-RESPONSE');
    assert.equal(await c.waitClosed(100), false, 'the connection stays open');
    const stats = await mock.stats();
    assert.equal(stats.trailing_responses_sent, 1);
    assert.equal(stats.streams_completed, 1);
  });

  test('it is not sent when the reply is cut, nor when switched off', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'x-mock-trailing-response': '1', 'x-mock-disconnect-after': '1' }, { stream: true });
    assert.equal(await c.waitClosed(2000), true);
    assert.doesNotMatch(c.buf.toString('latin1'), /SMUGGLED/);

    const off = await postChat({ 'x-mock-trailing-response': '0' });
    assert.equal(off.status, 200);
    await off.text();
    assert.equal((await mock.stats()).trailing_responses_sent, 0);
    await assertRejected(await postChat({ 'x-mock-trailing-response': 'yes' }), 'x-mock-trailing-response');
  });
});

describe('x-mock-set-<name>', () => {
  test('adds response headers, name lower-cased, value as sent', async () => {
    const res = await postChat({
      'x-mock-set-x-ratelimit-remaining-requests': '99',
      'x-mock-set-retry-after-ms': '1500',
      'x-mock-set-x-note': 'Mixed Case, with; punctuation',
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-ratelimit-remaining-requests'), '99');
    assert.equal(res.headers.get('retry-after-ms'), '1500');
    assert.equal(res.headers.get('x-note'), 'Mixed Case, with; punctuation');
    assert.equal((await res.json()).object, 'chat.completion');
  });

  test('only on the final head, with names lower-cased on the wire', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'X-Mock-Set-X-Upstream-Region': 'EU-West', 'x-mock-informational': '100' }, { stream: true });
    const { interim, final } = await readWithInterim(c);
    assert.equal(interim[0].rawHead, 'HTTP/1.1 100 Continue');
    assert.match(final.rawHead, /\r\nx-upstream-region: EU-West(\r\n|$)/);
    assert.ok(final.chunkedComplete);
  });

  test('framing headers and empty names are refused with a 400 naming the header', async () => {
    for (const name of ['content-length', 'Transfer-Encoding', 'connection']) {
      await assertRejected(await postChat({ [`x-mock-set-${name}`]: '5' }), `x-mock-set-${name}`);
    }
    const c = await RawConnection.open(mock.port);
    try {
      await sendChat(c, { 'x-mock-set-': 'v' });
      const r = await c.readResponse();
      assert.equal(r.status, 400);
      assert.match(r.json.error.message, /x-mock-set-/);
    } finally {
      c.destroy();
    }
  });
});

describe('x-mock-status 2xx', () => {
  test('a non-200 2xx answers normally with that status and its reason phrase', async (t) => {
    const res = await postChat({ 'x-mock-status': '201', 'x-mock-events': '3' });
    assert.equal(res.status, 201);
    assert.equal(res.statusText, 'Created');
    assert.equal((await res.json()).choices[0].message.content, 'Mock reply w1 w2 w3');

    const emb = await fetch(`${mock.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mock-status': '203' },
      body: JSON.stringify({ model: 'e', input: 'x', dimensions: 4 }),
    });
    assert.equal(emb.status, 203);
    assert.equal(emb.statusText, 'Non-Authoritative Information');
    assert.equal((await emb.json()).data[0].embedding.length, 4);

    const c = await open(t);
    await sendChat(c, { 'x-mock-status': '202', 'x-mock-events': '2' }, { stream: true });
    const stream = await c.readResponse();
    assert.equal(stream.status, 202);
    assert.equal(stream.reason, 'Accepted');
    assert.equal(stream.headers['content-type'], 'text/event-stream');
    assert.equal(chunkData(stream).at(-1), '[DONE]');
  });

  test('1xx and 3xx still answer normally with 200', async () => {
    for (const s of ['100', '302']) {
      const res = await postChat({ 'x-mock-status': s });
      assert.equal(res.status, 200, s);
      assert.equal((await res.json()).object, 'chat.completion');
    }
  });

  test('a sequence 500,201 fails once, then answers normally with 201', async () => {
    const headers = { 'x-mock-status': '500,201', 'x-mock-sequence-key': 'two-oh-one' };
    const statuses = [];
    for (let i = 0; i < 3; i++) {
      const res = await postChat(headers);
      statuses.push(res.status);
      const body = await res.json();
      if (res.status === 500) {
        assert.equal(body.error.type, 'server_error');
      } else {
        assert.equal(body.object, 'chat.completion');
      }
    }
    assert.deepEqual(statuses, [500, 201, 201]);
  });

  test('204 goes out without a body or Content-Length, and the connection stays usable', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'x-mock-status': '204' }, { stream: true });
    const r = await c.readResponse();
    assert.equal(r.status, 204);
    assert.equal(r.reason, 'No Content');
    assert.equal(r.headers['content-length'], undefined);
    assert.equal(r.headers['transfer-encoding'], undefined);
    await sendChat(c, { 'x-mock-events': '1' });
    const next = await c.readResponse();
    assert.equal(next.status, 200);
    assert.equal(next.json.id, 'chatcmpl-mock-2');
  });
});

describe('x-mock-omit-done', () => {
  test('a stream ends without [DONE] but with the zero-size chunk, and stays open', async (t) => {
    const c = await open(t);
    await sendChat(c, { 'x-mock-omit-done': '1', 'x-mock-events': '2' }, { stream: true, extra: { stream_options: { include_usage: true } } });
    const r = await c.readResponse();
    assert.ok(r.chunkedComplete);
    const data = chunkData(r);
    assert.ok(!data.includes('[DONE]'), data.join('\n'));
    const events = data.map((d) => JSON.parse(d));
    assert.deepEqual(events[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
    assert.equal(events.map((e) => e.choices[0]?.delta.content ?? '').join(''), 'Mock reply w1 w2');
    assert.equal(events.at(-2).choices[0].finish_reason, 'stop');
    assert.deepEqual(events.at(-1).choices, []);
    assert.equal(events.at(-1).usage.completion_tokens, 4);

    await sendChat(c, { 'x-mock-events': '1' }, { stream: true });
    const next = await c.readResponse();
    assert.equal(chunkData(next).at(-1), '[DONE]');
    assert.equal((await mock.stats()).streams_completed, 2);
  });

  test('fetch sees a complete body without [DONE]; a non-stream reply is unaffected', async () => {
    const res = await postChat({ 'x-mock-omit-done': 'true', 'x-mock-events': '1' }, { stream: true });
    const { events } = await collectSse(res);
    assert.ok(events.every((e) => e.data !== '[DONE]' && !e.incomplete));
    assert.equal(jsonEvents(events).at(-1).choices[0].finish_reason, 'stop');

    const plain = await postChat({ 'x-mock-omit-done': '1' });
    assert.equal((await plain.json()).object, 'chat.completion');
    await assertRejected(await postChat({ 'x-mock-omit-done': '2' }), 'x-mock-omit-done');
  });
});

describe('requests_by_header', () => {
  test('counts requests per x-mock-count-key, malformed ones too; reset empties it', async () => {
    assert.deepEqual((await mock.stats()).requests_by_header, {});
    for (const key of ['probe-a', 'probe-a', 'probe-b']) {
      const res = await postChat({ 'x-mock-count-key': key });
      assert.equal(res.status, 200);
      await res.text();
    }
    const bad = await postChat({ 'x-mock-count-key': 'probe-b', 'x-mock-events': 'many' });
    assert.equal(bad.status, 400);
    await bad.text();
    const stats = await mock.stats();
    assert.deepEqual(stats.requests_by_header, { 'probe-a': 2, 'probe-b': 2 });
    assert.equal(stats.requests_total, 4);

    await mock.reset();
    assert.deepEqual((await mock.stats()).requests_by_header, {});
  });

  test('disconnect-after on a non-stream request reads and counts the whole request first', async (t) => {
    const c = await open(t);
    const body = chatJson();
    const head = rawRequest('POST', CHAT, {
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'x-mock-disconnect-after': '0',
        'x-mock-count-key': 'cut-once',
      },
    });
    await c.write(head);
    // Without its body the request is incomplete: the mock waits for it instead of closing.
    assert.equal(await c.waitClosed(300), false, 'closed before the body arrived');
    let stats = await mock.stats();
    assert.equal(stats.requests_total, 0);
    assert.deepEqual(stats.requests_by_header, {});

    await c.write(body);
    assert.equal(await c.waitClosed(2000), true, 'not closed after the body');
    assert.equal(c.buf.length, 0, 'no answer expected');
    stats = await mock.stats();
    assert.equal(stats.requests_total, 1);
    assert.deepEqual(stats.requests_by_header, { 'cut-once': 1 });
    assert.equal(stats.last_request.body, body);
  });
});
