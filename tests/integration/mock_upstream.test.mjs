// sluice-mock-upstream on its own: the x-mock-* headers that let the gateway's regression
// tests reproduce interim responses, pooled-connection cross-talk (a response nobody asked
// for), header relaying, 2xx statuses, streams without [DONE], and silent re-sends
// (requests_by_header); then the other provider protocols it speaks (Anthropic Messages,
// Gemini, OpenAI Responses), whose replies are compared with the recorded fixtures and
// which take the same fault headers.

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';

import path from 'node:path';

import {
  RawConnection,
  collectSse,
  fixturesDir,
  jsonEvents,
  rawRequest,
  readFixture,
  splitSse,
  startMock,
} from '../support/harness.mjs';

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

// ---------------------------------------------------------------------------------------------
// Other provider protocols: reply shapes against the recorded fixtures, and the shared faults.

/** Every key path of a JSON value: "a", "a.b", "a[].c" (the union over an array's items). */
function keyPaths(value, prefix = '', out = new Set()) {
  if (Array.isArray(value)) {
    for (const item of value) {
      keyPaths(item, `${prefix}[]`, out);
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = prefix ? `${prefix}.${k}` : k;
      out.add(p);
      keyPaths(v, p, out);
    }
  }
  return out;
}

/**
 * Asserts that `actual` has the key structure of `recorded` (a fixture), except for the
 * listed key paths that only the mock has (`extra`) or only the recording has (`missing`).
 */
function assertShape(actual, recorded, { extra = [], missing = [] } = {}, what = 'body') {
  const a = keyPaths(actual);
  const r = keyPaths(recorded);
  assert.deepEqual([...a].filter((k) => !r.has(k)).sort(), [...extra].sort(), `${what}: keys only the mock has`);
  assert.deepEqual([...r].filter((k) => !a.has(k)).sort(), [...missing].sort(), `${what}: keys only the recording has`);
}

/** The events of SSE text: [{ raw, event, data }], `data` parsed when it is JSON. */
function parseSse(text) {
  return splitSse(text).map((raw) => {
    const lines = raw.split(/\r\n|\n|\r/);
    const field = (name) => {
      const values = lines.filter((l) => l.startsWith(`${name}:`)).map((l) => l.slice(name.length + 1).replace(/^ /, ''));
      return values.length ? values.join('\n') : null;
    };
    const text = field('data');
    let data = text;
    try {
      data = JSON.parse(text);
    } catch {
      // [DONE] or another non-JSON payload
    }
    return { raw, event: field('event'), data };
  });
}

/** The kinds of events in stream order, with consecutive repeats folded into one. */
function eventOrder(names) {
  return names.filter((n, i) => n !== names[i - 1]);
}

/** The recorded payload of the first event named `name` in a parsed fixture. */
function recordedEvent(events, name) {
  const e = events.find((x) => x.event === name);
  assert.ok(e, `the fixture has a ${name} event`);
  return e.data;
}

/** Starts, around the enclosing describe, a second mock replaying tests/fixtures/<dir>. */
function fixtureMock(dir) {
  let m;
  before(async () => {
    m = await startMock({ fixtures: path.join(fixturesDir, dir) });
  });
  after(async () => {
    await m?.stop();
  });
  return () => m;
}

async function post(m, p, body, headers = {}) {
  return fetch(`${m.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}

/** Counts the SSE data lines in the raw bytes received so far (works on cut streams too). */
function dataLines(c) {
  return (c.buf.toString('utf8').match(/^data: /gm) ?? []).length;
}

const MESSAGES = '/v1/messages';

function anthropicJson(extra = {}) {
  return JSON.stringify({
    model: 'claude-mock',
    max_tokens: 256,
    system: 'Be brief.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'Say hello, please' }] }],
    ...extra,
  });
}

const GEMINI_MODEL = '/v1beta/models/gemini-mock';

function geminiJson(extra = {}) {
  return JSON.stringify({
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    contents: [{ role: 'user', parts: [{ text: 'Say hello, please' }] }],
    ...extra,
  });
}

const RESPONSES = '/v1/responses';

function responsesJson(extra = {}) {
  return JSON.stringify({
    model: 'gpt-mock',
    instructions: 'Be brief.',
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'Say hello, please' }] }],
    ...extra,
  });
}

/** The error object of an OpenAI error body, after checking its keys. */
function openaiErrorOf(json) {
  assert.deepEqual(Object.keys(json.error).sort(), ['code', 'message', 'param', 'type']);
  return json.error;
}

/**
 * The protocols the mock speaks, for the tests that every one of them must pass. `path` and
 * `body` build a request (stream or not); `prelude` is how many events a generated stream
 * sends before its first content event (what stall-after and disconnect-after count from);
 * `error(json)` returns the error object of the protocol's error shape, checking the shape;
 * `isReply(json)` tells a normal non-stream reply; `terminator` names the event that
 * x-mock-omit-done leaves out (null: the protocol has none).
 */
const PROTOCOLS = [
  {
    name: 'OpenAI chat',
    path: () => CHAT,
    body: (stream) => chatJson(stream ? { stream: true } : {}),
    prelude: 1,
    error: openaiErrorOf,
    isReply: (json) => json.object === 'chat.completion',
    terminator: (e) => e.data === '[DONE]',
  },
  {
    name: 'Anthropic Messages',
    path: () => MESSAGES,
    body: (stream) => anthropicJson(stream ? { stream: true } : {}),
    prelude: 3,
    error: (json) => {
      assert.equal(json.type, 'error');
      assert.deepEqual(Object.keys(json.error).sort(), ['message', 'type']);
      return json.error;
    },
    isReply: (json) => json.type === 'message',
    terminator: (e) => e.event === 'message_stop',
  },
  {
    name: 'Gemini',
    path: (stream) => (stream ? `${GEMINI_MODEL}:streamGenerateContent?alt=sse` : `${GEMINI_MODEL}:generateContent`),
    body: () => geminiJson(),
    prelude: 0,
    error: (json) => {
      assert.deepEqual(Object.keys(json), ['error']);
      assert.deepEqual(Object.keys(json.error), ['code', 'message', 'status']);
      return json.error;
    },
    isReply: (json) => Array.isArray(json.candidates),
    terminator: null,
  },
  {
    name: 'OpenAI Responses',
    path: () => RESPONSES,
    body: (stream) => responsesJson(stream ? { stream: true } : {}),
    prelude: 4,
    error: openaiErrorOf,
    isReply: (json) => json.object === 'response',
    terminator: (e) => e.event === 'response.completed',
  },
];

for (const proto of PROTOCOLS) {
  describe(`${proto.name}: the shared fault headers`, () => {
    const postProto = (stream, headers = {}) => post(mock, proto.path(stream), proto.body(stream), headers);
    const sendProto = (c, stream, headers = {}) =>
      c.write(
        rawRequest('POST', proto.path(stream), {
          headers: { 'content-type': 'application/json', ...headers },
          body: proto.body(stream),
        }),
      );

    test('a malformed fault header is a 400 in the protocol error shape, naming the header', async () => {
      const res = await postProto(false, { 'x-mock-pace-ms': 'soon', 'x-mock-count-key': 'bad-header' });
      assert.equal(res.status, 400);
      assert.match(proto.error(await res.json()).message, /x-mock-pace-ms/);
      assert.deepEqual((await mock.stats()).requests_by_header, { 'bad-header': 1 });
    });

    test('x-mock-status: errors in the protocol shape, sequences, and 2xx', async () => {
      for (const status of [429, 503]) {
        const res = await postProto(true, { 'x-mock-status': String(status) });
        assert.equal(res.status, status);
        assert.equal(proto.error(await res.json()).message, `mock injected status ${status}`);
      }
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const res = await postProto(false, { 'x-mock-status': '500,201', 'x-mock-sequence-key': `seq-${proto.name}` });
        statuses.push(res.status);
        const json = await res.json();
        assert.ok(res.status === 500 ? proto.error(json) : proto.isReply(json), JSON.stringify(json));
      }
      assert.deepEqual(statuses, [500, 201, 201]);
    });

    test('disconnect-after N cuts a stream after its prelude and N content events', async (t) => {
      const c = await open(t);
      await sendProto(c, true, { 'x-mock-disconnect-after': '2', 'x-mock-events': '5' });
      assert.equal(await c.waitClosed(2000), true);
      assert.equal(dataLines(c), proto.prelude + 2);
      assert.doesNotMatch(c.buf.toString('latin1'), /\r\n0\r\n\r\n$/, 'no terminating chunk');
      assert.equal((await mock.stats()).streams_disconnected, 1);
    });

    test('stall-after N holds a stream after its prelude and N content events', async (t) => {
      const c = await open(t);
      await sendProto(c, true, { 'x-mock-stall-after': '1', 'x-mock-events': '5' });
      await c.until(() => (dataLines(c) >= proto.prelude + 1 ? true : undefined), 2000, 'the first content event');
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(dataLines(c), proto.prelude + 1);
      assert.equal(c.ended, false);
      c.destroy();
      const deadline = Date.now() + 2000;
      while ((await mock.stats()).streams_aborted !== 1) {
        assert.ok(Date.now() < deadline, 'the stalled stream is counted as aborted');
        await new Promise((r) => setTimeout(r, 10));
      }
    });

    test('latency delays the reply; first-byte and pace delay stream events', async () => {
      let start = performance.now();
      const res = await postProto(false, { 'x-mock-latency-ms': '120' });
      assert.ok(proto.isReply(await res.json()));
      assert.ok(performance.now() - start >= 115, 'latency');

      start = performance.now();
      const stream = await postProto(true, { 'x-mock-first-byte-ms': '100', 'x-mock-pace-ms': '30', 'x-mock-events': '3' });
      const { events } = await collectSse(stream);
      assert.ok(events[0].t - start >= 95, `first byte after ${events[0].t - start} ms`);
      const span = events.at(-1).t - events[0].t;
      assert.ok(span >= 30 * (events.length - 1) - 10, `${events.length} events paced over ${span} ms`);
    });

    test('interim heads, x-mock-set-*, Retry-After, count-key and a trailing response', async (t) => {
      const c = await open(t);
      await sendProto(c, false, {
        'x-mock-informational': '103',
        'x-mock-set-x-provider-note': 'mocked',
        'x-mock-retry-after': '7',
        'x-mock-trailing-response': '1',
        'x-mock-count-key': `all-${proto.name}`,
      });
      const { interim, final } = await readWithInterim(c);
      assert.deepEqual(interim.map((r) => r.status), [103]);
      assert.equal(final.headers['x-provider-note'], 'mocked');
      assert.equal(final.headers['retry-after'], '7');
      assert.ok(proto.isReply(final.json));
      const smuggled = await c.readResponse({ timeoutMs: 500 });
      assert.equal(smuggled.json.choices[0].message.content, 'SMUGGLED-RESPONSE');
      const stats = await mock.stats();
      assert.deepEqual(stats.requests_by_header, { [`all-${proto.name}`]: 1 });
      assert.equal(stats.trailing_responses_sent, 1);
    });

    test('a raw body or a fixture replaces the reply', async () => {
      const raw = await postProto(true, { 'x-mock-raw-body': '{"broken":', 'x-mock-status': '502' });
      assert.equal(raw.status, 502);
      assert.equal(await raw.text(), '{"broken":');
      const replay = await postProto(false, { 'x-mock-fixture': 'chat-stream-text' });
      assert.equal(replay.headers.get('content-type'), 'text/event-stream');
      assert.equal(await replay.text(), readFixture('openai-chat/chat-stream-text.sse'));
    });

    test('omit-done leaves out the stream terminator, if the protocol has one', async () => {
      const full = parseSse(await (await postProto(true, { 'x-mock-events': '2' })).text());
      const cut = parseSse(await (await postProto(true, { 'x-mock-events': '2', 'x-mock-omit-done': '1' })).text());
      if (proto.terminator) {
        assert.ok(proto.terminator(full.at(-1)), 'a full stream ends with its terminator');
        assert.deepEqual(cut.map((e) => e.event), full.slice(0, -1).map((e) => e.event));
        assert.ok(!cut.some(proto.terminator));
      } else {
        assert.equal(cut.length, full.length);
      }
    });
  });
}

describe('Anthropic Messages', () => {
  const fx = fixtureMock('anthropic');

  const recordedText = JSON.parse(readFixture('anthropic/message-text.json'));
  const recordedTool = JSON.parse(readFixture('anthropic/message-tool-use.json'));
  const tools = [
    { name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } },
    { name: 'get_time', description: 'Time', input_schema: { type: 'object' } },
  ];
  // The prompt of anthropicJson(): "Be brief." (9) + "Say hello, please" (17) characters.
  const inputTokens = Math.floor((9 + 17) / 4) + 1;

  test('a text message has the recorded shape; the request headers are recorded', async () => {
    const res = await post(mock, MESSAGES, anthropicJson(), {
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'prompt-caching-2024-07-31',
      'x-mock-events': '3',
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const msg = await res.json();
    assertShape(msg, recordedText, { extra: ['stop_details'] });
    assert.deepEqual(Object.keys(msg), [...Object.keys(recordedText).slice(0, 7), 'stop_details', 'usage']);
    assert.equal(msg.id, 'msg_mock_1');
    assert.equal(msg.model, 'claude-mock');
    assert.deepEqual(msg.content, [{ type: 'text', text: 'Mock reply w1 w2 w3' }]);
    assert.equal(msg.stop_reason, 'end_turn');
    assert.equal(msg.usage.input_tokens, inputTokens);
    assert.equal(msg.usage.output_tokens, 5);
    assert.equal(msg.usage.cache_creation_input_tokens, 0);
    assert.equal(msg.usage.cache_read_input_tokens, 0);

    const stats = await mock.stats();
    assert.equal(stats.anthropic_requests, 1);
    assert.equal(stats.chat_requests, 0);
    const { headers } = stats.last_request;
    assert.equal(headers['x-api-key'], 'sk-ant-test');
    assert.equal(headers['anthropic-version'], '2023-06-01');
    assert.equal(headers['anthropic-beta'], 'prompt-caching-2024-07-31');
  });

  test('tools: a tool_use block for the first tool, or the one tool_choice names; none turns it off', async () => {
    let msg = await (await post(mock, MESSAGES, anthropicJson({ tools }))).json();
    // `input` is the tool's own object: {"mock":true} here, {"city":..} in the recording.
    assertShape(msg, recordedTool, {
      extra: ['content[].input.mock'],
      missing: ['content[].caller', 'content[].caller.type', 'content[].input.city'],
    });
    assert.deepEqual(msg.content, [{ type: 'tool_use', id: 'toolu_mock_1', name: 'get_weather', input: { mock: true } }]);
    assert.equal(msg.stop_reason, 'tool_use');
    assert.equal(msg.usage.output_tokens, 3);

    msg = await (await post(mock, MESSAGES, anthropicJson({ tools, tool_choice: { type: 'tool', name: 'get_time' } }))).json();
    assert.equal(msg.content[0].name, 'get_time');
    msg = await (await post(mock, MESSAGES, anthropicJson({ tools, tool_choice: { type: 'any' } }))).json();
    assert.equal(msg.content[0].name, 'get_weather');
    msg = await (await post(mock, MESSAGES, anthropicJson({ tools, tool_choice: { type: 'none' } }))).json();
    assert.equal(msg.content[0].type, 'text');
    assert.equal(msg.stop_reason, 'end_turn');
  });

  test('a stream sends the recorded events in the recorded order, framed as the live API', async () => {
    const recorded = parseSse(readFixture('anthropic/stream-text.sse'));
    const res = await post(mock, MESSAGES, anthropicJson({ stream: true }), { 'x-mock-events': '4' });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const text = await res.text();
    const events = parseSse(text);
    assert.deepEqual(eventOrder(events.map((e) => e.event)), eventOrder(recorded.map((e) => e.event)));
    assert.equal(events.filter((e) => e.event === 'content_block_delta').length, 4);
    for (const e of events) {
      assert.match(e.raw, /^event: [a-z_]+\ndata: .*\n\n$/);
      assert.equal(e.data.type, e.event);
      assertShape(e.data, recordedEvent(recorded, e.event), {}, e.event);
    }
    assert.equal(events.find((e) => e.event === 'ping').raw, 'event: ping\ndata: {"type": "ping"}\n\n');

    const start = events[0].data.message;
    assert.equal(start.id, 'msg_mock_1');
    assert.deepEqual(start.content, []);
    assert.equal(start.stop_reason, null);
    assert.equal(start.usage.input_tokens, inputTokens);
    assert.equal(start.usage.output_tokens, 1);
    const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta);
    assert.ok(deltas.every((d) => d.type === 'text_delta'));
    assert.equal(deltas.map((d) => d.text).join(''), 'Mock reply w1 w2 w3 w4');
    const messageDelta = events.find((e) => e.event === 'message_delta').data;
    assert.equal(messageDelta.delta.stop_reason, 'end_turn');
    assert.equal(messageDelta.usage.output_tokens, 6);
    assert.equal(messageDelta.usage.input_tokens, inputTokens);
  });

  test('a tool stream sends input_json_delta fragments of the input', async () => {
    const recorded = parseSse(readFixture('anthropic/stream-tool-use.sse'));
    const res = await post(mock, MESSAGES, anthropicJson({ stream: true, tools, tool_choice: { type: 'tool', name: 'get_time' } }));
    const events = parseSse(await res.text());
    assert.deepEqual(eventOrder(events.map((e) => e.event)), eventOrder(recorded.map((e) => e.event)));
    for (const e of events) {
      const missing = e.event === 'content_block_start' ? ['content_block.caller', 'content_block.caller.type'] : [];
      assertShape(e.data, recordedEvent(recorded, e.event), { missing }, e.event);
    }
    const block = events.find((e) => e.event === 'content_block_start').data.content_block;
    assert.deepEqual(block, { type: 'tool_use', id: 'toolu_mock_1', name: 'get_time', input: {} });
    const fragments = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta);
    assert.equal(fragments.length, 3);
    assert.ok(fragments.every((d) => d.type === 'input_json_delta'));
    assert.deepEqual(JSON.parse(fragments.map((d) => d.partial_json).join('')), { mock: true });
    assert.equal(events.find((e) => e.event === 'message_delta').data.delta.stop_reason, 'tool_use');
  });

  test('invalid requests get 400 invalid_request_error with the API messages', async () => {
    const base = { model: 'claude-mock', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
    const cases = [
      [{ ...base, model: undefined }, 'model: Field required'],
      [{ ...base, model: 7 }, 'model: Input should be a valid string'],
      [{ ...base, max_tokens: undefined }, 'max_tokens: Field required'],
      [{ ...base, max_tokens: 'many' }, 'max_tokens: Input should be a valid integer'],
      [{ ...base, max_tokens: 0 }, 'max_tokens: Input should be greater than or equal to 1'],
      [{ ...base, messages: undefined }, 'messages: Field required'],
      [{ ...base, messages: 'hi' }, 'messages: Input should be a valid list'],
      [{ ...base, messages: [] }, 'messages: at least one message is required'],
      [{ ...base, stream: 'yes' }, 'stream: Input should be a valid boolean'],
    ];
    for (const [body, message] of cases) {
      const res = await post(mock, MESSAGES, JSON.stringify(body));
      assert.equal(res.status, 400, message);
      assert.deepEqual(await res.json(), { type: 'error', error: { type: 'invalid_request_error', message } });
    }
    for (const body of ['{"model":', '[1,2]']) {
      const res = await post(mock, MESSAGES, body);
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.type, 'invalid_request_error');
    }
    const get = await fetch(`${mock.url}${MESSAGES}`);
    assert.equal(get.status, 405);
    assert.equal((await get.json()).type, 'error');
  });

  test('x-mock-status takes the Anthropic error type of its status', async () => {
    const types = {
      400: 'invalid_request_error',
      401: 'authentication_error',
      403: 'permission_error',
      404: 'not_found_error',
      413: 'request_too_large',
      418: 'invalid_request_error',
      429: 'rate_limit_error',
      500: 'api_error',
      503: 'api_error',
      529: 'overloaded_error',
    };
    for (const [status, type] of Object.entries(types)) {
      const res = await post(mock, MESSAGES, anthropicJson(), { 'x-mock-status': status });
      assert.equal(res.status, Number(status));
      assert.deepEqual(await res.json(), { type: 'error', error: { type, message: `mock injected status ${status}` } });
    }
    const res = await post(mock, MESSAGES, anthropicJson(), { 'x-mock-status': '529' });
    assert.equal(res.statusText, 'Site Overloaded');
    await res.text();
  });

  test('x-mock-stream-error ends a stream with an error event after N deltas', async (t) => {
    const recordedError = parseSse(readFixture('anthropic/stream-error-overloaded.sse'))[0];
    // TYPE alone: half of the content events.
    let events = parseSse(
      await (await post(mock, MESSAGES, anthropicJson({ stream: true }), { 'x-mock-stream-error': 'overloaded_error', 'x-mock-events': '6' })).text(),
    );
    assert.deepEqual(events.map((e) => e.event), [
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'error',
    ]);
    const error = events.at(-1);
    assert.equal(error.raw, 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n');
    assertShape(error.data, recordedError.data, { missing: ['error.details'] }, 'error');

    // N:TYPE, on a tool stream; the body still ends cleanly and the connection is reusable.
    const c = await open(t);
    await c.write(
      rawRequest('POST', MESSAGES, {
        headers: { 'content-type': 'application/json', 'x-mock-stream-error': '1:api_error' },
        body: anthropicJson({ stream: true, tools }),
      }),
    );
    const r = await c.readResponse();
    assert.ok(r.chunkedComplete);
    events = parseSse(r.text);
    assert.equal(events.filter((e) => e.event === 'content_block_delta').length, 1);
    assert.deepEqual(events.at(-1).data, { type: 'error', error: { type: 'api_error', message: 'mock stream error' } });
    // N beyond the content: after the last delta, before content_block_stop.
    events = parseSse(await (await post(mock, MESSAGES, anthropicJson({ stream: true }), { 'x-mock-stream-error': '99:overloaded_error', 'x-mock-events': '2' })).text());
    assert.deepEqual(events.slice(-2).map((e) => e.event), ['content_block_delta', 'error']);

    for (const bad of ['Overloaded', '3:', 'x:overloaded_error', '']) {
      const res = await post(mock, MESSAGES, anthropicJson({ stream: true }), { 'x-mock-stream-error': bad });
      assert.equal(res.status, 400, bad);
      assert.match((await res.json()).error.message, /x-mock-stream-error/);
    }
  });

  test('count_tokens answers the input tokens of the same request', async () => {
    const body = { model: 'claude-mock', system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: 'Say hello, please' }] };
    const res = await post(mock, `${MESSAGES}/count_tokens`, JSON.stringify(body), { 'anthropic-beta': 'token-counting-2024-11-01' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { input_tokens: inputTokens });
    const msg = await (await post(mock, MESSAGES, JSON.stringify({ ...body, max_tokens: 5 }))).json();
    assert.equal(msg.usage.input_tokens, inputTokens);

    const bad = await post(mock, `${MESSAGES}/count_tokens`, JSON.stringify({ model: 'claude-mock', messages: [] }));
    assert.equal(bad.status, 400);
    assert.equal((await bad.json()).error.message, 'messages: at least one message is required');
    const failed = await post(mock, `/anthropic${MESSAGES}/count_tokens/`, JSON.stringify(body), { 'x-mock-status': '529' });
    assert.equal(failed.status, 529);
    assert.equal((await failed.json()).error.type, 'overloaded_error');
    assert.equal((await mock.stats()).anthropic_requests, 4);
  });

  test('recorded streams replay byte for byte; disconnect-after counts every event', async (t) => {
    const recorded = readFixture('anthropic/stream-text.sse');
    const res = await post(fx(), MESSAGES, anthropicJson({ stream: true }), { 'x-mock-fixture': 'stream-text' });
    assert.equal(await res.text(), recorded);
    const c = await RawConnection.open(fx().port);
    t.after(() => c.destroy());
    await c.write(
      rawRequest('POST', MESSAGES, {
        headers: { 'content-type': 'application/json', 'x-mock-fixture': 'stream-text', 'x-mock-disconnect-after': '3' },
        body: anthropicJson({ stream: true }),
      }),
    );
    assert.equal(await c.waitClosed(2000), true);
    assert.equal(dataLines(c), 3);
    const received = c.buf.toString('utf8');
    for (const event of splitSse(recorded).slice(0, 3)) {
      assert.ok(received.includes(`\r\n${event}\r\n`), 'each recorded event in a chunk of its own');
    }
  });
});

describe('Gemini', () => {
  const fx = fixtureMock('gemini');

  const GENERATE = `${GEMINI_MODEL}:generateContent`;
  const STREAM = `${GEMINI_MODEL}:streamGenerateContent`;
  // "Be brief." (9) + "Say hello, please" (17) characters.
  const promptTokens = Math.floor((9 + 17) / 4) + 1;
  const functionTools = [{ googleSearch: {} }, { functionDeclarations: [{ name: 'get_capital' }, { name: 'get_time' }] }];

  test('generateContent: the recorded response shape, pretty-printed; the key header is counted', async () => {
    const recorded = JSON.parse(readFixture('gemini/generate-content-text.json'));
    const res = await post(mock, GENERATE, geminiJson(), { 'x-goog-api-key': 'AIza-test', 'x-mock-events': '3' });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /^\{\n {2}"candidates": \[\n {4}\{\n/);
    const body = JSON.parse(text);
    assertShape(body, recorded, { missing: ['usageMetadata.thoughtsTokenCount'] });
    assert.deepEqual(body.candidates, [
      { content: { parts: [{ text: 'Mock reply w1 w2 w3' }], role: 'model' }, finishReason: 'STOP', index: 0 },
    ]);
    assert.deepEqual(body.usageMetadata, {
      promptTokenCount: promptTokens,
      candidatesTokenCount: 5,
      totalTokenCount: promptTokens + 5,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }],
    });
    assert.equal(body.modelVersion, 'gemini-mock');
    assert.equal(body.responseId, 'gemini-mock-1');

    const stats = await mock.stats();
    assert.equal(stats.gemini_requests, 1);
    assert.equal(stats.gemini_keys_in_header, 1);
    assert.equal(stats.gemini_keys_in_query, 0);
    assert.equal(stats.last_request.headers['x-goog-api-key'], 'AIza-test');
  });

  test('functionCall parts: the first declared function, or the one mode ANY allows; NONE turns it off', async () => {
    const recordedChunk = parseSse(readFixture('gemini/stream-function-call.sse'))[0].data;
    let body = await (await post(mock, GENERATE, geminiJson({ tools: functionTools }))).json();
    assertShape(body, recordedChunk, {
      extra: ['candidates[].index', 'candidates[].content.parts[].functionCall.args.mock'],
      missing: [
        'candidates[].content.parts[].functionCall.args.country',
        'usageMetadata.candidatesTokensDetails',
        'usageMetadata.candidatesTokensDetails[].modality',
        'usageMetadata.candidatesTokensDetails[].tokenCount',
      ],
    });
    assert.deepEqual(body.candidates[0].content.parts, [{ functionCall: { name: 'get_capital', args: { mock: true } } }]);
    assert.equal(body.candidates[0].finishReason, 'STOP');
    assert.equal(body.usageMetadata.candidatesTokenCount, 3);

    const config = (mode, allowedFunctionNames) => ({ tools: functionTools, toolConfig: { functionCallingConfig: { mode, allowedFunctionNames } } });
    body = await (await post(mock, GENERATE, geminiJson(config('ANY', ['get_time'])))).json();
    assert.equal(body.candidates[0].content.parts[0].functionCall.name, 'get_time');
    body = await (await post(mock, GENERATE, geminiJson(config('NONE')))).json();
    assert.equal(body.candidates[0].content.parts[0].text, 'Mock reply w1 w2 w3 w4 w5 w6 w7 w8');
    body = await (await post(mock, GENERATE, geminiJson({ tools: [{ googleSearch: {} }] }))).json();
    assert.ok('text' in body.candidates[0].content.parts[0], 'no declared function, no call');
  });

  test('?alt=sse: CRLF-framed data events with cumulative usage, no terminator; ?key= is counted', async () => {
    const recorded = parseSse(readFixture('gemini/stream-text.sse'));
    const recordedUsage = parseSse(readFixture('gemini/stream-text-thoughts-usage.sse'));
    const res = await post(mock, `${STREAM}?alt=sse&key=AIza-query`, geminiJson(), { 'x-mock-events': '4' });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const text = await res.text();
    const events = parseSse(text);
    assert.equal(events.length, 4);
    for (const e of events) {
      assert.match(e.raw, /^data: \{"candidates": \[.*\}\r\n\r\n$/, 'one data line, CRLF blank line');
      assert.doesNotMatch(e.raw, /, "/, 'no space after a comma, as Google writes it');
      assert.equal(e.event, null);
    }
    assert.ok(!text.includes('[DONE]'));
    // The last chunk is the finished one; the others are like a recorded mid-stream chunk.
    assertShape(events.at(-1).data, recorded.at(-1).data, {
      extra: ['candidates[].index'],
      missing: ['usageMetadata.candidatesTokensDetails', 'usageMetadata.candidatesTokensDetails[].modality', 'usageMetadata.candidatesTokensDetails[].tokenCount'],
    });
    assertShape(events[0].data, recordedUsage[0].data, { missing: ['usageMetadata.thoughtsTokenCount', 'usageMetadata.serviceTier'] });

    const chunks = events.map((e) => e.data);
    assert.equal(chunks.map((c) => c.candidates[0].content.parts[0].text).join(''), 'Mock reply w1 w2 w3 w4');
    assert.deepEqual(chunks.map((c) => c.candidates[0].finishReason ?? null), [null, null, null, 'STOP']);
    assert.deepEqual(chunks.map((c) => c.usageMetadata.candidatesTokenCount), [3, 4, 5, 6]);
    assert.ok(chunks.every((c) => c.usageMetadata.promptTokenCount === promptTokens));
    assert.ok(chunks.every((c) => c.usageMetadata.totalTokenCount === promptTokens + c.usageMetadata.candidatesTokenCount));
    assert.ok(chunks.every((c) => c.responseId === 'gemini-mock-1' && c.modelVersion === 'gemini-mock'));

    const stats = await mock.stats();
    assert.equal(stats.gemini_keys_in_query, 1);
    assert.equal(stats.gemini_keys_in_header, 0);
    assert.deepEqual(stats.last_request.query, { alt: 'sse', key: 'AIza-query' });
  });

  test('without alt=sse the stream is one JSON array, an element per chunk', async (t) => {
    const sse = parseSse(await (await post(mock, `${STREAM}?alt=sse`, geminiJson(), { 'x-mock-events': '3' })).text()).map((e) => e.data);
    const c = await open(t);
    await c.write(
      rawRequest('POST', STREAM, { headers: { 'content-type': 'application/json', 'x-mock-events': '3' }, body: geminiJson() }),
    );
    const r = await c.readResponse();
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(r.headers['transfer-encoding'], 'chunked');
    assert.equal(r.chunks.length, 4);
    assert.match(r.chunks[0], /^\[\{\n {2}"candidates": \[/);
    assert.match(r.chunks[1], /^\n,\r\n\{\n/);
    assert.match(r.chunks[2], /^\n,\r\n\{\n/);
    assert.equal(r.chunks[3], '\n]');
    const array = JSON.parse(r.text);
    assert.equal(array.length, 3);
    assert.deepEqual(array.map((x) => ({ ...x, responseId: null })), sse.map((x) => ({ ...x, responseId: null })));

    // omit-done leaves the array open; disconnect-after cuts after whole elements.
    await c.write(rawRequest('POST', `${STREAM}?alt=json`, { headers: { 'x-mock-events': '2', 'x-mock-omit-done': '1' }, body: geminiJson() }));
    const open_ = await c.readResponse();
    assert.equal(open_.chunks.length, 2);
    assert.match(open_.text, /\}$/);
    assert.throws(() => JSON.parse(open_.text));
    await c.write(rawRequest('POST', STREAM, { headers: { 'x-mock-events': '5', 'x-mock-disconnect-after': '1' }, body: geminiJson() }));
    assert.equal(await c.waitClosed(2000), true);
    assert.match(c.buf.toString('utf8'), /\r\n\[\{\n[^]*\n\}\r\n$/);
  });

  test('a function call streams as one chunk; Vertex AI paths work too', async () => {
    const vertex = '/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-vertex:streamGenerateContent?alt=sse';
    const events = parseSse(await (await post(mock, vertex, geminiJson({ tools: functionTools }))).text());
    assert.equal(events.length, 1);
    const chunk = events[0].data;
    assert.deepEqual(chunk.candidates[0].content.parts, [{ functionCall: { name: 'get_capital', args: { mock: true } } }]);
    assert.equal(chunk.candidates[0].finishReason, 'STOP');
    assert.equal(chunk.modelVersion, 'gemini-vertex');
  });

  test("invalid requests and injected statuses get Google's error shape and status names", async () => {
    const recorded = JSON.parse(readFixture('gemini/error-400-invalid-argument.json'));
    const cases = [
      ['{"contents":[]}', '* GenerateContentRequest.contents: contents is not specified\n'],
      ['{"generationConfig":{}}', '* GenerateContentRequest.contents: contents is not specified\n'],
      ['{"contents":"hello"}', "Invalid value at 'contents': expected a list of Content."],
    ];
    for (const [body, message] of cases) {
      const res = await post(mock, GENERATE, body);
      assert.equal(res.status, 400);
      const text = await res.text();
      assert.match(text, /^\{\n {2}"error": \{\n {4}"code": 400,\n/);
      const json = JSON.parse(text);
      assertShape(json, recorded);
      assert.deepEqual(json, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
    }
    const bad = await post(mock, `${STREAM}?alt=sse`, '{"contents":');
    assert.equal(bad.status, 400);
    assert.match((await bad.json()).error.message, /^Invalid JSON payload received\./);

    const names = {
      400: 'INVALID_ARGUMENT',
      401: 'UNAUTHENTICATED',
      403: 'PERMISSION_DENIED',
      404: 'NOT_FOUND',
      418: 'FAILED_PRECONDITION',
      429: 'RESOURCE_EXHAUSTED',
      500: 'INTERNAL',
      502: 'INTERNAL',
      503: 'UNAVAILABLE',
      504: 'DEADLINE_EXCEEDED',
    };
    for (const [status, name] of Object.entries(names)) {
      const res = await post(mock, `${STREAM}?alt=sse`, geminiJson(), { 'x-mock-status': status });
      assert.equal(res.status, Number(status));
      assert.equal(res.headers.get('content-type'), 'application/json');
      assert.deepEqual(await res.json(), { error: { code: Number(status), message: `mock injected status ${status}`, status: name } });
    }
    const get = await fetch(`${mock.url}${GENERATE}`);
    assert.equal(get.status, 405);
    assert.equal((await get.json()).error.status, 'FAILED_PRECONDITION');
  });

  test('recorded streams replay byte for byte, CRLF included', async (t) => {
    const recorded = readFixture('gemini/stream-text.sse');
    const res = await post(fx(), `${STREAM}?alt=sse`, geminiJson(), { 'x-mock-fixture': 'stream-text' });
    assert.equal(await res.text(), recorded);
    const c = await RawConnection.open(fx().port);
    t.after(() => c.destroy());
    await c.write(rawRequest('POST', `${STREAM}?alt=sse`, { headers: { 'x-mock-fixture': 'stream-text' }, body: geminiJson() }));
    const r = await c.readResponse();
    assert.deepEqual(r.chunks, splitSse(recorded));
    assert.ok(r.chunks.every((ch) => ch.endsWith('}\r\n\r\n')));
  });
});

describe('OpenAI Responses', () => {
  const fx = fixtureMock('openai-responses');

  const recordedText = JSON.parse(readFixture('openai-responses/response-text.json'));
  const recordedCall = JSON.parse(readFixture('openai-responses/response-function-call.json'));
  // The March-2025-era recordings lack the newer response fields and carry "billing".
  const newerFields = ['completed_at', 'frequency_penalty', 'presence_penalty', 'prompt_cache_retention'];
  const olderFields = ['billing', 'billing.payer'];
  // "Be brief." (9) + "Say hello, please" (17) characters.
  const inputTokens = Math.floor((9 + 17) / 4) + 1;

  test('a text response has the recorded shape and echoes the request fields', async () => {
    const res = await post(mock, RESPONSES, responsesJson({ tools: recordedText.tools, tool_choice: 'none', metadata: { run: 'x' } }), {
      authorization: 'Bearer sk-test',
      'x-mock-events': '3',
    });
    assert.equal(res.status, 200);
    const body = await res.json();
    assertShape(body, recordedText, { extra: [...newerFields, 'metadata.run'], missing: olderFields });
    assert.equal(body.id, 'resp_mock_1');
    assert.equal(body.object, 'response');
    assert.equal(body.status, 'completed');
    assert.equal(body.model, 'gpt-mock');
    assert.equal(body.instructions, 'Be brief.');
    assert.deepEqual(body.metadata, { run: 'x' });
    assert.deepEqual(body.tools, recordedText.tools);
    assert.equal(body.tool_choice, 'none');
    assert.deepEqual(body.output, [
      {
        id: 'msg_mock_1',
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Mock reply w1 w2 w3' }],
        role: 'assistant',
      },
    ]);
    assert.deepEqual(body.usage, {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + 5,
    });
    const stats = await mock.stats();
    assert.equal(stats.responses_requests, 1);
    assert.equal(stats.chat_requests, 0);
    assert.equal(stats.last_request.headers.authorization, 'Bearer sk-test');
  });

  test('function tools: a function_call item for the first one, or the one tool_choice names', async () => {
    let body = await (await post(mock, RESPONSES, responsesJson({ tools: recordedCall.tools }))).json();
    assertShape(body, recordedCall, { extra: newerFields, missing: olderFields });
    assert.deepEqual(body.output, [
      { id: 'fc_mock_1', type: 'function_call', status: 'completed', arguments: '{"mock":true}', call_id: 'call_mock_1', name: 'get_capital' },
    ]);
    assert.equal(body.usage.output_tokens, 3);

    const tools = [{ type: 'web_search' }, { type: 'function', name: 'f1', parameters: {} }, { type: 'function', name: 'f2', parameters: {} }];
    body = await (await post(mock, RESPONSES, responsesJson({ tools }))).json();
    assert.equal(body.output[0].name, 'f1', 'the first function tool, not the first tool');
    body = await (await post(mock, RESPONSES, responsesJson({ tools, tool_choice: { type: 'function', name: 'f2' } }))).json();
    assert.equal(body.output[0].name, 'f2');
    body = await (await post(mock, RESPONSES, responsesJson({ tools, tool_choice: 'none' }))).json();
    assert.equal(body.output[0].type, 'message');
    body = await (await post(mock, RESPONSES, responsesJson({ tools: [{ type: 'web_search' }] }))).json();
    assert.equal(body.output[0].type, 'message');
  });

  test('a stream sends the recorded events in order, each with its sequence_number, without [DONE]', async () => {
    const recorded = parseSse(readFixture('openai-responses/stream-text.sse'));
    const res = await post(mock, RESPONSES, responsesJson({ stream: true }), { 'x-mock-events': '4' });
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const text = await res.text();
    assert.ok(!text.includes('[DONE]'));
    const events = parseSse(text);
    assert.deepEqual(eventOrder(events.map((e) => e.event)), eventOrder(recorded.map((e) => e.event)));
    assert.deepEqual(events.map((e) => e.data.sequence_number), events.map((_, i) => i));
    for (const e of events) {
      assert.match(e.raw, /^event: [a-z_.]+\ndata: .*\n\n$/);
      assert.equal(e.data.type, e.event);
      const missing = e.event === 'response.output_text.delta' ? ['obfuscation'] : [];
      assertShape(e.data, recordedEvent(recorded, e.event), { missing }, e.event);
    }
    const deltas = events.filter((e) => e.event === 'response.output_text.delta').map((e) => e.data.delta);
    assert.deepEqual(deltas, ['Mock reply w1', ' w2', ' w3', ' w4']);
    assert.equal(events.find((e) => e.event === 'response.output_text.done').data.text, 'Mock reply w1 w2 w3 w4');
    assert.equal(events[0].data.response.status, 'in_progress');
    assert.equal(events[0].data.response.usage, null);
    const completed = events.at(-1).data.response;
    assert.equal(completed.status, 'completed');
    assert.equal(completed.usage.output_tokens, 6);
    // The completed response is the one stored for GET.
    const stored = await fetch(`${mock.url}${RESPONSES}/resp_mock_1`);
    assert.deepEqual(await stored.json(), completed);
  });

  test('a function call streams function_call_arguments deltas as recorded', async () => {
    const recorded = parseSse(readFixture('openai-responses/stream-reasoning-function-call.sse'));
    // The recording reasons first; the mock only calls the function.
    const calls = recorded.filter((e) => e.data.item?.type !== 'reasoning');
    const res = await post(mock, RESPONSES, responsesJson({ stream: true, tools: [{ type: 'function', name: 'final_result', parameters: {} }] }));
    const events = parseSse(await res.text());
    assert.deepEqual(eventOrder(events.map((e) => e.event)), eventOrder(calls.map((e) => e.event)));
    for (const e of events.filter((x) => !x.event.startsWith('response.') || x.data.item || x.data.item_id)) {
      const missing = e.event.endsWith('.delta') ? ['obfuscation'] : [];
      assertShape(e.data, recordedEvent(calls, e.event), { missing }, e.event);
    }
    const added = events.find((e) => e.event === 'response.output_item.added').data.item;
    assert.deepEqual(added, { id: 'fc_mock_1', type: 'function_call', status: 'in_progress', arguments: '', call_id: 'call_mock_1', name: 'final_result' });
    const fragments = events.filter((e) => e.event === 'response.function_call_arguments.delta').map((e) => e.data.delta);
    assert.deepEqual(JSON.parse(fragments.join('')), { mock: true });
    assert.equal(events.find((e) => e.event === 'response.function_call_arguments.done').data.arguments, '{"mock":true}');
    assert.equal(events.at(-1).data.response.output[0].status, 'completed');
  });

  test('GET …/responses/{id} returns stored responses; previous_response_id must name one', async () => {
    const first = await (await post(mock, RESPONSES, responsesJson())).json();
    const got = await fetch(`${mock.url}/openai${RESPONSES}/${first.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(await got.json(), first);

    const unknown = await fetch(`${mock.url}${RESPONSES}/resp_unknown`);
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), {
      error: { message: "Response with id 'resp_unknown' not found.", type: 'invalid_request_error', param: null, code: null },
    });

    const next = await post(mock, RESPONSES, responsesJson({ previous_response_id: first.id, input: 'And again' }));
    assert.equal(next.status, 200);
    assert.equal((await next.json()).previous_response_id, first.id);
    const dangling = await post(mock, RESPONSES, responsesJson({ previous_response_id: 'resp_gone', stream: true }));
    assert.equal(dangling.status, 400);
    assert.deepEqual(await dangling.json(), {
      error: {
        message: "Previous response with id 'resp_gone' not found.",
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    });

    // "store": false keeps nothing; faults apply to GET too; reset forgets everything.
    const unstored = await (await post(mock, RESPONSES, responsesJson({ store: false }))).json();
    assert.equal(unstored.store, false);
    assert.equal((await fetch(`${mock.url}${RESPONSES}/${unstored.id}`)).status, 404);
    const failing = await fetch(`${mock.url}${RESPONSES}/${first.id}`, { headers: { 'x-mock-status': '503' } });
    assert.equal(failing.status, 503);
    assert.equal((await failing.json()).error.type, 'server_error');
    assert.equal((await mock.stats()).responses_requests, 8);
    await mock.reset();
    assert.equal((await fetch(`${mock.url}${RESPONSES}/${first.id}`)).status, 404);
  });

  test('the store keeps the last 1000 responses', async () => {
    const total = 1001;
    for (let i = 0; i < total; i += 50) {
      const batch = [];
      for (let j = i; j < Math.min(i + 50, total); j++) {
        batch.push(post(mock, RESPONSES, responsesJson(), { 'x-mock-events': '0' }).then((r) => r.text()));
      }
      await Promise.all(batch);
    }
    const statuses = await Promise.all(
      ['resp_mock_1', 'resp_mock_2', `resp_mock_${total}`].map(async (id) => (await fetch(`${mock.url}${RESPONSES}/${id}`)).status),
    );
    assert.deepEqual(statuses, [404, 200, 200]);
  });

  test('invalid requests and wrong methods get OpenAI errors', async () => {
    let res = await post(mock, RESPONSES, JSON.stringify({ input: 'hi' }));
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.param, 'model');
    res = await post(mock, RESPONSES, JSON.stringify({ model: 'gpt-mock', input: 42 }));
    assert.equal(res.status, 400);
    assert.deepEqual((await res.json()).error, {
      message: "Invalid type for 'input': expected a string or an array of input items.",
      type: 'invalid_request_error',
      param: 'input',
      code: null,
    });
    res = await fetch(`${mock.url}${RESPONSES}`);
    assert.equal(res.status, 405);
    await res.text();
    res = await post(mock, `${RESPONSES}/resp_mock_1`, responsesJson());
    assert.equal(res.status, 405);
    await res.text();
  });

  test('recorded streams replay byte for byte', async () => {
    const recorded = readFixture('openai-responses/stream-text.sse');
    const res = await post(fx(), RESPONSES, responsesJson({ stream: true }), { 'x-mock-fixture': 'stream-text' });
    assert.equal(await res.text(), recorded);
  });
});

describe('tool results and scripted tool calls (every protocol)', () => {
  // For each protocol: a request with a tool, the same conversation ending with the tool's
  // result, how to read the reply (stream or not) as { call: {name, args} | null, text }, and a
  // tool choice that demands a call.
  const chatTools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
  const anthropicTools = [{ name: 'lookup', input_schema: { type: 'object' } }];
  const geminiTools = [{ functionDeclarations: [{ name: 'lookup' }] }];
  const responsesTools = [{ type: 'function', name: 'lookup', parameters: { type: 'object' } }];
  const sseData = (text) => parseSse(text).map((e) => e.data).filter((d) => d && typeof d === 'object');
  const cases = [
    {
      name: 'chat',
      path: CHAT,
      ask: (extra) => chatJson({ tools: chatTools, ...extra }),
      answered: (extra) =>
        chatJson({
          tools: chatTools,
          messages: [
            { role: 'user', content: 'look it up' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
            { role: 'tool', tool_call_id: 'c1', content: 'found' },
          ],
          ...extra,
        }),
      required: { tool_choice: 'required' },
      read: (json) => {
        const m = json.choices[0].message;
        const c = m.tool_calls?.[0];
        return { call: c ? { name: c.function.name, args: c.function.arguments } : null, text: m.content };
      },
      readStream: (text) => {
        let args = '';
        let name = null;
        let content = '';
        for (const ch of sseData(text)) {
          const d = ch.choices[0]?.delta ?? {};
          content += d.content ?? '';
          for (const tc of d.tool_calls ?? []) {
            name = tc.function?.name ?? name;
            args += tc.function?.arguments ?? '';
          }
        }
        return { call: name ? { name, args } : null, text: content || null };
      },
    },
    {
      name: 'Anthropic',
      path: MESSAGES,
      ask: (extra) => anthropicJson({ tools: anthropicTools, ...extra }),
      answered: (extra) =>
        anthropicJson({
          tools: anthropicTools,
          messages: [
            { role: 'user', content: 'look it up' },
            { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'found' }, { type: 'text', text: 'go on' }] },
          ],
          ...extra,
        }),
      required: { tool_choice: { type: 'any' } },
      read: (json) => {
        const b = json.content[0];
        return b.type === 'tool_use' ? { call: { name: b.name, args: JSON.stringify(b.input) }, text: null } : { call: null, text: b.text };
      },
      readStream: (text) => {
        let name = null;
        let args = '';
        let content = '';
        for (const e of sseData(text)) {
          if (e.type === 'content_block_start' && e.content_block.type === 'tool_use') {
            name = e.content_block.name;
          }
          args += e.delta?.partial_json ?? '';
          content += e.delta?.text ?? '';
        }
        return { call: name ? { name, args } : null, text: content || null };
      },
    },
    {
      name: 'Gemini',
      path: `${GEMINI_MODEL}:generateContent`,
      streamPath: `${GEMINI_MODEL}:streamGenerateContent?alt=sse`,
      ask: (extra) => geminiJson({ tools: geminiTools, ...extra }),
      answered: (extra) =>
        geminiJson({
          tools: geminiTools,
          contents: [
            { role: 'user', parts: [{ text: 'look it up' }] },
            { role: 'model', parts: [{ functionCall: { name: 'lookup', args: {} } }] },
            { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { result: 'found' } } }] },
          ],
          ...extra,
        }),
      required: { toolConfig: { functionCallingConfig: { mode: 'ANY' } } },
      read: (json) => {
        const p = json.candidates[0].content.parts[0];
        return p.functionCall ? { call: { name: p.functionCall.name, args: JSON.stringify(p.functionCall.args) }, text: null } : { call: null, text: p.text };
      },
      readStream: (text) => {
        let call = null;
        let content = '';
        for (const e of sseData(text)) {
          const p = e.candidates[0].content.parts[0];
          if (p.functionCall) {
            call = { name: p.functionCall.name, args: JSON.stringify(p.functionCall.args) };
          }
          content += p.text ?? '';
        }
        return { call, text: content || null };
      },
    },
    {
      name: 'Responses',
      path: RESPONSES,
      ask: (extra) => responsesJson({ tools: responsesTools, ...extra }),
      answered: (extra) =>
        responsesJson({
          tools: responsesTools,
          input: [
            { role: 'user', content: 'look it up' },
            { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{}' },
            { type: 'function_call_output', call_id: 'c1', output: 'found' },
          ],
          ...extra,
        }),
      required: { tool_choice: 'required' },
      read: (json) => {
        const item = json.output[0];
        return item.type === 'function_call' ? { call: { name: item.name, args: item.arguments }, text: null } : { call: null, text: item.content[0].text };
      },
      readStream: (text) => {
        const done = sseData(text).find((e) => e.type === 'response.output_item.done').item;
        const deltas = sseData(text).filter((e) => e.type === 'response.function_call_arguments.delta').map((e) => e.delta).join('');
        return done.type === 'function_call' ? { call: { name: done.name, args: deltas }, text: null } : { call: null, text: done.content[0].text };
      },
    },
  ];

  const streamBody = (c, body) => {
    if (c.streamPath) {
      return { path: c.streamPath, body };
    }
    return { path: c.path, body: JSON.stringify({ ...JSON.parse(body), stream: true }) };
  };

  for (const c of cases) {
    test(`${c.name}: a conversation ending with a tool result is answered in words, unless a call is demanded`, async () => {
      const headers = { 'x-mock-events': '2' };
      let reply = c.read(await (await post(mock, c.path, c.ask(), headers)).json());
      assert.equal(reply.call?.name, 'lookup', 'a question with tools gets a call');
      reply = c.read(await (await post(mock, c.path, c.answered(), headers)).json());
      assert.deepEqual(reply, { call: null, text: 'Mock reply w1 w2' }, 'the tool result is answered in words');
      const s = streamBody(c, c.answered());
      reply = c.readStream(await (await post(mock, s.path, s.body, headers)).text());
      assert.deepEqual(reply, { call: null, text: 'Mock reply w1 w2' }, 'streams too');
      reply = c.read(await (await post(mock, c.path, c.answered(c.required), headers)).json());
      assert.equal(reply.call?.name, 'lookup', 'a demanded call is still made after a tool result');
    });

    test(`${c.name}: x-mock-tool-name and x-mock-tool-arguments script the call, stream and not`, async () => {
      const args = { file_path: '/tmp/caf\u00e9 notes.txt', lines: [1, 2] };
      const headers = { 'x-mock-tool-name': 'Read', 'x-mock-tool-arguments': JSON.stringify(args, null, 1).replace(/\n/g, '') };
      // Header values are ISO-8859-1 on the wire for fetch; send the UTF-8 bytes as latin1.
      headers['x-mock-tool-arguments'] = Buffer.from(headers['x-mock-tool-arguments'], 'utf8').toString('latin1');
      let reply = c.read(await (await post(mock, c.path, c.ask(), headers)).json());
      assert.equal(reply.call.name, 'Read');
      assert.deepEqual(JSON.parse(reply.call.args), args);
      const s = streamBody(c, c.ask());
      reply = c.readStream(await (await post(mock, s.path, s.body, headers)).text());
      assert.equal(reply.call.name, 'Read');
      assert.deepEqual(JSON.parse(reply.call.args), args, 'the fragments add up to the arguments');
      // Text replies ignore them; a value that is not a JSON object is a 400.
      reply = c.read(await (await post(mock, c.path, c.answered(), headers)).json());
      assert.equal(reply.call, null);
      const bad = await post(mock, c.path, c.ask(), { 'x-mock-tool-arguments': '[1]' });
      assert.equal(bad.status, 400);
      assert.match(await bad.text(), /x-mock-tool-arguments/);
    });
  }
});

describe('x-mock-embeddings', () => {
  const embed = async (input, headers = {}) => {
    const res = await fetch(`${mock.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'e', input, dimensions: 1024 }),
    });
    return { status: res.status, body: await res.json() };
  };
  const cosine = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0);
  const vectors = async (inputs, mode) => {
    const { status, body } = await embed(inputs, mode ? { 'x-mock-embeddings': mode } : {});
    assert.equal(status, 200, JSON.stringify(body));
    return body.data.map((d) => d.embedding);
  };
  // Forty distinct words, then the same with one and with four of them replaced: bags of words
  // whose cosine is about 39/40 and 36/40.
  const words = Array.from({ length: 40 }, (_, i) => `word${i}`);
  const text = words.join(' ');
  const oneChanged = [...words.slice(0, 39), 'other'].join(' ');
  const fourChanged = [...words.slice(0, 36), 'a1', 'a2', 'a3', 'a4'].join(' ');

  test('bag-of-words vectors put texts that share most words close, and hash vectors do not', async () => {
    const [same, near, nearish, reordered, unrelated, upper] = await vectors(
      [text, oneChanged, fourChanged, [...words].reverse().join(', '), 'nothing in common here', text.toUpperCase()],
      'bag-of-words',
    );
    assert.ok(Math.abs(cosine(same, same) - 1) < 1e-5, 'unit length');
    const c1 = cosine(same, near);
    const c4 = cosine(same, nearish);
    assert.ok(c1 > 0.95 && c1 < 0.995, `one word of forty changed: ${c1}`);
    assert.ok(c4 > 0.85 && c4 < 0.95, `four words of forty changed: ${c4}`);
    assert.ok(cosine(same, reordered) > 0.9999, 'order and punctuation do not count');
    assert.ok(cosine(same, upper) > 0.9999, 'case does not count');
    assert.ok(Math.abs(cosine(same, unrelated)) < 0.2, `unrelated: ${cosine(same, unrelated)}`);

    const [hashSame, hashNear] = await vectors([text, oneChanged], 'hash');
    assert.ok(Math.abs(cosine(hashSame, hashNear)) < 0.2, 'hash vectors: any change is far');
    const [defaultSame] = await vectors([text]);
    assert.deepEqual(defaultSame, hashSame, 'hash is the default');
  });

  test('token arrays are bags of token ids, and a bad mode is a 400 naming the header', async () => {
    const [a, b] = await vectors([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]], 'bag-of-words');
    assert.ok(cosine(a, b) > 0.9999);
    const bad = await embed('x', { 'x-mock-embeddings': 'semantic' });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /x-mock-embeddings/);
  });
});
