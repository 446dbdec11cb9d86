// Streaming: SSE framing and headers, incremental forwarding, usage handling, recorded fixtures
// replayed byte for byte, broken upstream streams, client disconnects.

import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  RawConnection,
  chatBody,
  collectSse,
  fixturesDir,
  jsonEvents,
  makeTempDir,
  rawRequest,
  readFixture,
  removeTempDir,
  splitSse,
  sseEvents,
  startStack,
  useStack,
  waitFor,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(undefined, (s) => ({ gw, mock } = s));

function stream(body, headers = {}, signal, url = gw.url) {
  return fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(chatBody({ stream: true, ...body })),
    signal,
  });
}

const isUsageOnly = (c) => Array.isArray(c.choices) && c.choices.length === 0;
const contentOf = (chunks) => chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('');

describe('SSE response', () => {
  test('headers, chunked framing, content and [DONE]', async () => {
    const res = await stream({}, { 'x-mock-events': '5' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('x-accel-buffering'), 'no');
    assert.equal(res.headers.get('transfer-encoding'), 'chunked');
    assert.equal(res.headers.get('content-length'), null);
    assert.equal(res.headers.get('x-sluice-provider'), 'up');
    assert.equal(res.headers.get('x-sluice-model'), 'mock-model');
    const { events, text } = await collectSse(res);
    assert.equal(events.at(-1).data, '[DONE]');
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    const chunks = jsonEvents(events);
    assert.equal(contentOf(chunks), 'Mock reply w1 w2 w3 w4 w5');
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
    for (const c of chunks) {
      assert.equal(c.object, 'chat.completion.chunk');
    }
  });

  test('the response ends with a terminating zero-size chunk (raw socket)', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    await c.write(
      rawRequest('POST', '/v1/chat/completions', {
        headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', 'x-mock-events': '3' },
        body: JSON.stringify(chatBody({ stream: true })),
      }),
    );
    const r = await c.readResponse();
    assert.equal(r.status, 200);
    assert.equal(r.headers['transfer-encoding'], 'chunked');
    assert.ok(r.chunkedComplete);
    assert.match(r.text, /data: \[DONE\]\n\n$/);
    // The connection stays usable for the next request.
    await c.write(rawRequest('GET', '/healthz'));
    assert.equal((await c.readResponse()).status, 200);
  });

  test('an HTTP/1.0 client gets the stream close-delimited, without chunked framing', async (t) => {
    // RFC 9112 section 6.1: a server MUST NOT send Transfer-Encoding in a response to an
    // HTTP/1.0 request; the body is delimited by closing the connection instead.
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    await c.write(
      rawRequest('POST', '/v1/chat/completions', {
        http10: true,
        headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', 'x-mock-events': '2' },
        body: JSON.stringify(chatBody({ stream: true })),
      }),
    );
    const r = await c.readResponse({ timeoutMs: 3000 });
    assert.equal(r.status, 200);
    assert.equal(r.headers['transfer-encoding'], undefined, `chunked framing sent to an HTTP/1.0 client: ${r.rawHead}`);
    assert.match(r.text, /data: \[DONE\]\n\n$/);
  });

  test('events are forwarded as they arrive, not buffered', async () => {
    const pace = 200;
    const n = 5;
    const sent = performance.now();
    const res = await stream({}, { 'x-mock-events': String(n), 'x-mock-pace-ms': String(pace) });
    const { events } = await collectSse(res);
    const contentIdx = events.findIndex((e) => e.data && e.data.includes('"content":"Mock reply w1"'));
    assert.ok(contentIdx >= 0, 'first content event missing');
    const first = events[contentIdx];
    const last = events.at(-1);
    assert.equal(last.data, '[DONE]');
    // The mock produces one event every `pace` ms; everything after the first content event
    // takes (events after it) * pace to be produced. A buffering gateway would deliver them
    // together.
    const eventsAfter = events.length - 1 - contentIdx;
    const spread = last.t - first.t;
    assert.ok(
      spread >= 0.75 * eventsAfter * pace,
      `first content event arrived only ${spread.toFixed(0)} ms before [DONE]; expected about ${eventsAfter * pace} ms`,
    );
    // And the first content event arrived about one pace after the request, not at the end.
    assert.ok(first.t - sent < (events.length - 1) * pace * 0.5, `first content after ${(first.t - sent).toFixed(0)} ms`);
    // Content arrives in order.
    assert.equal(contentOf(jsonEvents(events)), 'Mock reply w1 w2 w3 w4 w5');
  });

  test('first-byte delay on a stream: the head arrives at once, events later', async () => {
    const res = await stream({}, { 'x-mock-first-byte-ms': '300', 'x-mock-events': '2' });
    assert.equal(res.status, 200);
    const { events } = await collectSse(res);
    assert.equal(events.at(-1).data, '[DONE]');
    assert.equal(contentOf(jsonEvents(events)), 'Mock reply w1 w2');
  });
});

describe('usage handling', () => {
  test('without include_usage: the gateway asks upstream, hides the usage chunk, logs usage', async () => {
    const n = 4;
    const res = await stream({}, { 'x-mock-events': String(n) });
    const id = res.headers.get('x-request-id');
    const { events } = await collectSse(res);
    const chunks = jsonEvents(events);
    assert.ok(!chunks.some(isUsageOnly), 'usage-only chunk reached a client that did not ask for it');
    assert.equal(events.at(-1).data, '[DONE]');
    const { last_request: lr } = await mock.stats();
    const upstreamBody = JSON.parse(lr.body);
    assert.equal(upstreamBody.stream, true);
    assert.equal(upstreamBody.stream_options?.include_usage, true);
    const entry = await gw.waitForLog((e) => e.request_id === id);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.stream, true);
    assert.equal(entry.finish_reason, 'stop');
    assert.ok(entry.usage, JSON.stringify(entry));
    assert.equal(entry.usage.output_tokens, n + 2);
    assert.ok(entry.usage.input_tokens > 0);
  });

  test('with include_usage: the client sees the usage chunk last before [DONE]', async () => {
    const n = 3;
    const res = await stream({ stream_options: { include_usage: true } }, { 'x-mock-events': String(n) });
    const { events } = await collectSse(res);
    assert.equal(events.at(-1).data, '[DONE]');
    const chunks = jsonEvents(events);
    const last = chunks.at(-1);
    assert.ok(isUsageOnly(last), `last chunk is not the usage chunk: ${JSON.stringify(last)}`);
    assert.equal(last.usage.completion_tokens, n + 2);
    assert.equal(chunks.filter(isUsageOnly).length, 1);
    const { last_request: lr } = await mock.stats();
    assert.deepEqual(JSON.parse(lr.body).stream_options, { include_usage: true });
  });

  test('include_usage: false is treated as not asked', async () => {
    const res = await stream({ stream_options: { include_usage: false } }, { 'x-mock-events': '2' });
    const { events } = await collectSse(res);
    assert.ok(!jsonEvents(events).some(isUsageOnly));
    const { last_request: lr } = await mock.stats();
    assert.equal(JSON.parse(lr.body).stream_options?.include_usage, true);
  });
});

describe('recorded fixtures reach the client unchanged', () => {
  const files = readdirSync(path.join(fixturesDir, 'openai-chat')).filter((f) => f.endsWith('.sse'));
  assert.ok(files.length >= 4);
  for (const file of files) {
    const upstreamEvents = splitSse(readFixture(`openai-chat/${file}`));

    test(`${file} with include_usage: byte-identical`, async () => {
      const res = await stream({ stream_options: { include_usage: true } }, { 'x-mock-fixture': file });
      assert.equal(res.status, 200);
      const { text } = await collectSse(res);
      assert.equal(text, upstreamEvents.join(''));
    });

    test(`${file} without include_usage: identical except the usage-only chunk`, async () => {
      const res = await stream({}, { 'x-mock-fixture': file });
      assert.equal(res.status, 200);
      const id = res.headers.get('x-request-id');
      const { events } = await collectSse(res);
      const expected = upstreamEvents.filter((raw) => {
        const data = raw.replace(/^data: /, '').trim();
        try {
          return !isUsageOnly(JSON.parse(data));
        } catch {
          return true;
        }
      });
      assert.deepEqual(
        events.map((e) => e.raw),
        expected,
      );
      const hadUsage = expected.length !== upstreamEvents.length;
      const entry = await gw.waitForLog((e) => e.request_id === id);
      assert.equal(entry.outcome === 'complete' || entry.outcome === 'truncated', true, JSON.stringify(entry));
      if (hadUsage) {
        assert.ok(entry.usage && entry.usage.output_tokens > 0, `usage missing from the access log: ${JSON.stringify(entry)}`);
      }
    });
  }

  test('finish_reason length is logged as outcome truncated with reasoning tokens', async () => {
    const res = await stream({}, { 'x-mock-fixture': 'chat-stream-finish-length-usage.sse' });
    const id = res.headers.get('x-request-id');
    await collectSse(res);
    const entry = await gw.waitForLog((e) => e.request_id === id);
    assert.equal(entry.finish_reason, 'length');
    assert.equal(entry.outcome, 'truncated');
    assert.equal(entry.usage.reasoning_tokens, 100);
    assert.equal(entry.usage.output_tokens, 100);
  });

  test('paced fixture replay arrives event by event', async () => {
    const res = await stream({}, { 'x-mock-fixture': 'chat-stream-tool-call.sse', 'x-mock-pace-ms': '100' });
    const { events } = await collectSse(res);
    assert.ok(events.length >= 5);
    assert.ok(events.at(-1).t - events[0].t >= 0.75 * (events.length - 1) * 100);
  });
});

describe('broken upstream streams', () => {
  for (const mode of ['fin', 'rst']) {
    test(`upstream disconnect (${mode}) after 3 events: error event, no [DONE], clean end`, async () => {
      const res = await stream({}, {
        'x-mock-events': '10',
        'x-mock-disconnect-after': '3',
        'x-mock-disconnect-mode': mode,
        'x-mock-pace-ms': '20',
      });
      assert.equal(res.status, 200);
      const id = res.headers.get('x-request-id');
      // collectSse throws if the HTTP body itself breaks (no terminating chunk).
      const { events } = await collectSse(res);
      assert.ok(!events.some((e) => e.data === '[DONE]'), '[DONE] after a broken stream');
      const chunks = jsonEvents(events);
      const last = chunks.at(-1);
      assert.ok(last.error, `last event is not an error: ${JSON.stringify(last)}`);
      assert.ok(
        ['upstream_stream_broken', 'upstream_stream_truncated'].includes(last.error.code),
        JSON.stringify(last),
      );
      assert.equal(typeof last.error.message, 'string');
      if (mode === 'fin') {
        assert.equal(contentOf(chunks), 'Mock reply w1 w2 w3', 'events before the break must be delivered');
      }
      const entry = await gw.waitForLog((e) => e.request_id === id);
      assert.equal(entry.outcome, 'midstream_error');
    });
  }

  test('the broken stream still ends with a terminating chunk (raw socket)', async (t) => {
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    await c.write(
      rawRequest('POST', '/v1/chat/completions', {
        headers: {
          authorization: `Bearer ${GATEWAY_KEY}`,
          'content-type': 'application/json',
          'x-mock-events': '10',
          'x-mock-disconnect-after': '3',
        },
        body: JSON.stringify(chatBody({ stream: true })),
      }),
    );
    const r = await c.readResponse();
    assert.equal(r.status, 200);
    assert.ok(r.chunkedComplete, 'no terminating chunk');
    assert.ok(!r.text.includes('[DONE]'));
    assert.match(r.text, /"code":"upstream_stream_(broken|truncated)"/);
  });

  // Replays `events` from a private fixture directory through a fresh stack; returns the
  // relayed events and the access-log entry.
  async function replayStream(t, events) {
    const dir = makeTempDir('sluice-fixtures-');
    writeFileSync(path.join(dir, 'replay.sse'), events.join(''));
    const s = await startStack({ mockOpts: { fixtures: dir } });
    t.after(async () => {
      await s.stop();
      removeTempDir(dir);
    });
    const res = await fetch(`${s.gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', 'x-mock-fixture': 'replay.sse' },
      body: JSON.stringify(chatBody({ stream: true })),
    });
    const id = res.headers.get('x-request-id');
    const got = await collectSse(res);
    return { got, entry: await s.gw.waitForLog((e) => e.request_id === id) };
  }

  // Some OpenAI-compatible servers never send [DONE]: after the finish chunk a clean end of the
  // body is a complete answer, relayed as the upstream sent it.
  test('an upstream stream that ends cleanly after its finish chunk without [DONE] is complete', async (t) => {
    const events = splitSse(readFixture('openai-chat/chat-stream-text.sse'));
    assert.equal(events.at(-1), 'data: [DONE]\n\n');
    const { got, entry } = await replayStream(t, events.slice(0, -1));
    assert.deepEqual(got.events.map((e) => e.raw), events.slice(0, -1), 'relayed unchanged, nothing added');
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.finish_reason, 'stop');
  });

  test('an upstream stream that ends cleanly before any finish reason is reported as truncated', async (t) => {
    const events = splitSse(readFixture('openai-chat/chat-stream-text.sse')).slice(0, 3);
    const { got, entry } = await replayStream(t, events);
    assert.deepEqual(got.events.slice(0, -1).map((e) => e.raw), events);
    const last = JSON.parse(got.events.at(-1).data);
    assert.equal(last.error?.code, 'upstream_stream_truncated', JSON.stringify(last));
    assert.ok(!got.events.some((e) => e.data === '[DONE]'));
    assert.equal(entry.outcome, 'midstream_error');
  });


  test('an unterminated last upstream event does not corrupt the error event', async () => {
    // x-mock-raw-body cannot end with a blank line (header values are trimmed), so the body
    // ends inside an event. Whatever the gateway does with that partial event, the client must
    // still receive a separate, parseable error event (and no [DONE]).
    const chunk = { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] };
    const res = await stream({}, {
      'x-mock-raw-body': `data: ${JSON.stringify(chunk)}`,
      'x-mock-content-type': 'text/event-stream',
    });
    assert.equal(res.status, 200);
    const { events, text } = await collectSse(res);
    assert.ok(!events.some((e) => e.data === '[DONE]'));
    const last = events.at(-1);
    let parsed;
    try {
      parsed = JSON.parse(last.data);
    } catch {
      assert.fail(`the final event is not valid JSON; client received: ${JSON.stringify(text)}`);
    }
    assert.equal(parsed.error?.code, 'upstream_stream_truncated', JSON.stringify(parsed));
  });
});

describe('upstream total timeout', () => {
  test('a stream that outlives timeout.total_ms ends with an error event, not [DONE]', async (t) => {
    const s = await startStack({
      config: { provider: { timeout: { first_byte_ms: 500, total_ms: 700 } } },
    });
    t.after(() => s.stop());
    const res = await stream({}, { 'x-mock-events': '20', 'x-mock-pace-ms': '100' }, undefined, s.gw.url);
    assert.equal(res.status, 200);
    const id = res.headers.get('x-request-id');
    const started = performance.now();
    const { events } = await collectSse(res);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 2000, `stream lasted ${elapsed} ms with total_ms 700`);
    assert.ok(!events.some((e) => e.data === '[DONE]'));
    const last = jsonEvents(events).at(-1);
    assert.equal(last.error?.code, 'upstream_total_timeout', JSON.stringify(last));
    const entry = await s.gw.waitForLog((e) => e.request_id === id);
    assert.equal(entry.outcome, 'midstream_error');
    await waitFor(async () => (await s.mock.stats()).active_streams === 0, {
      timeoutMs: 2000,
      message: 'mock to see the timed-out upstream stream closed',
    });
  });
});

/** Reads SSE events until `stop(event)` is true, then aborts the request; true if it stopped. */
async function abortWhen(res, controller, stop) {
  try {
    for await (const ev of sseEvents(res)) {
      if (stop(ev)) {
        controller.abort();
        return true;
      }
    }
  } catch {
    // the abort surfaces as an error from the reader
  }
  return false;
}

/** Waits (bounded) until the mock has seen a stream aborted and has none left running. */
function upstreamStreamClosed(message) {
  return waitFor(
    async () => {
      const s = await mock.stats();
      return s.streams_aborted >= 1 && s.active_streams === 0 ? s : null;
    },
    { timeoutMs: 2000, message },
  );
}

describe('after the final answer', () => {
  // The OpenAI SDK stops reading and aborts the connection at [DONE], before the body's end:
  // the caller had everything, so the request is complete, not client_gone.
  test('a client that hangs up right after [DONE] got a complete answer', async () => {
    const controller = new AbortController();
    const res = await stream({}, { 'x-mock-events': '3', 'x-mock-end-delay-ms': '10000' }, controller.signal);
    const id = res.headers.get('x-request-id');
    assert.ok(await abortWhen(res, controller, (ev) => ev.data === '[DONE]'), 'the stream reached [DONE]');
    await upstreamStreamClosed('mock to see the held upstream stream closed');
    const entry = await gw.waitForLog((e) => e.request_id === id);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.status, 200);
    assert.equal(entry.usage?.output_tokens, 5);
  });

  test('an upstream that stalls after its final answer: the stream ends complete, no error event', async (t) => {
    const s = await startStack({ config: { provider: { timeout: { idle_ms: 300 } } } });
    t.after(() => s.stop());
    const res = await stream({}, { 'x-mock-events': '3', 'x-mock-end-delay-ms': '10000' }, undefined, s.gw.url);
    assert.equal(res.status, 200);
    const id = res.headers.get('x-request-id');
    const { events, text } = await collectSse(res);
    assert.equal(events.at(-1).data, '[DONE]', text);
    assert.ok(!text.includes('"error"'), text);
    const entry = await s.gw.waitForLog((e) => e.request_id === id);
    assert.equal(entry.outcome, 'complete');
    assert.equal(entry.error, undefined, 'the caller was not failed');
    // The attempt says what the upstream did: its body never ended.
    assert.ok(entry.upstream.at(-1).error, JSON.stringify(entry.upstream));
  });
});

describe('client disconnects', () => {
  async function abortAfter(res, controller, contentEvents) {
    let seen = 0;
    await abortWhen(res, controller, (ev) => {
      if (ev.data && ev.data.includes('"content":') && !ev.data.includes('"content":""')) {
        seen++;
      }
      return seen >= contentEvents;
    });
    return seen;
  }

  test('abort during a stalled stream closes the upstream promptly (client_gone)', async () => {
    const controller = new AbortController();
    const res = await stream({}, { 'x-mock-events': '10', 'x-mock-stall-after': '2' }, controller.signal);
    const id = res.headers.get('x-request-id');
    assert.equal(await abortAfter(res, controller, 2), 2);
    const stats = await upstreamStreamClosed('mock to see the upstream stream closed');
    assert.equal(stats.streams_completed, 0);
    const entry = await gw.waitForLog((e) => e.request_id === id);
    assert.equal(entry.outcome, 'client_gone');
  });

  test('abort during a slowly paced stream closes the upstream promptly', async () => {
    const controller = new AbortController();
    const res = await stream({}, { 'x-mock-events': '50', 'x-mock-pace-ms': '300' }, controller.signal);
    const id = res.headers.get('x-request-id');
    await abortAfter(res, controller, 1);
    await upstreamStreamClosed('mock to see the upstream stream closed');
    const entry = await gw.waitForLog((e) => e.request_id === id);
    assert.equal(entry.outcome, 'client_gone');
  });

  test('abort while a stream waits for the upstream head closes the upstream', async () => {
    const controller = new AbortController();
    const pending = stream({}, { 'x-mock-latency-ms': '10000' }, controller.signal).catch((e) => e);
    await waitFor(async () => (await mock.stats()).active_streams === 1, { timeoutMs: 2000, message: 'stream to start upstream' });
    controller.abort();
    await pending;
    await upstreamStreamClosed('mock to see the upstream closed');
  });

  test('abort of a non-stream request waiting on upstream latency closes the upstream', async () => {
    const controller = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${GATEWAY_KEY}`,
        'content-type': 'application/json',
        'x-mock-latency-ms': '10000',
        'x-request-id': 'nonstream-abort-1',
      },
      body: JSON.stringify(chatBody()),
      signal: controller.signal,
    }).catch((e) => e);
    await waitFor(async () => (await mock.stats()).chat_requests === 1, { timeoutMs: 2000, message: 'request to reach the mock' });
    controller.abort();
    await pending;
    await waitFor(async () => (await mock.stats()).requests_aborted >= 1, {
      timeoutMs: 2000,
      message: 'mock to see the upstream connection closed',
    });
    const entry = await gw.waitForLog((e) => e.request_id === 'nonstream-abort-1');
    assert.equal(entry.outcome, 'client_gone');
  });

  test('the gateway keeps serving after client disconnects', async () => {
    const res = await stream({}, { 'x-mock-events': '2' });
    const { events } = await collectSse(res);
    assert.equal(events.at(-1).data, '[DONE]');
  });
});
