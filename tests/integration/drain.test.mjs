// Graceful shutdown on SIGTERM: the listener closes, /readyz reports draining, idle keep-alive
// connections close, in-flight streams finish until drain_timeout_ms, then the rest are cut;
// the process exits 0. Each test starts its own gateway (SIGTERM ends it).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  RawConnection,
  chatBody,
  connectRefused,
  gatewayConfig,
  rawRequest,
  sseEvents,
  startMock,
  startSluice,
  waitFor,
  withTimeout,
} from '../support/harness.mjs';

async function setup(t, server = {}) {
  const mock = await startMock();
  t.after(() => mock.stop());
  const gw = await startSluice(gatewayConfig(mock.baseUrl, { server }));
  t.after(() => gw.stop({ timeoutMs: 2000 }));
  return { mock, gw };
}

function startStream(gw, headers) {
  return fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(chatBody({ stream: true })),
  });
}

/** Reads SSE events until the first content event, returning the iterator to continue with. */
async function untilFirstContent(res) {
  const it = sseEvents(res);
  const seen = [];
  for (;;) {
    const { value, done } = await it.next();
    assert.ok(!done, 'stream ended before any content');
    seen.push(value);
    if (value.data && value.data.includes('Mock reply w1')) {
      return { it, seen };
    }
  }
}

async function drainRest(it, seen) {
  for (;;) {
    const { value, done } = await it.next();
    if (done) {
      return seen;
    }
    seen.push(value);
  }
}

describe('drain on SIGTERM', () => {
  test('an in-flight stream completes with [DONE]; new connections are refused; exit 0', async (t) => {
    const { gw } = await setup(t, { drain_timeout_ms: 10000 });
    const pace = 150;
    const res = await startStream(gw, { 'x-mock-events': '8', 'x-mock-pace-ms': String(pace) });
    const id = res.headers.get('x-request-id');
    const { it, seen } = await untilFirstContent(res);
    const signalled = performance.now();
    const exited = gw.stop({ timeoutMs: 12000 });
    await waitFor(() => connectRefused(gw.port, 500), { timeoutMs: 2000, message: 'listener to close after SIGTERM' });
    const events = await withTimeout(drainRest(it, seen), 8000, 'the in-flight stream');
    const streamDone = performance.now();
    assert.equal(events.at(-1).data, '[DONE]', 'the in-flight stream was cut during the drain');
    const text = events.map((e) => e.data ?? '').join('\n');
    assert.ok(text.includes(' w8'), 'stream content incomplete');
    const code = await exited;
    const exitedAt = performance.now();
    assert.equal(code, 0, `exit code ${code}, signal ${gw.state.exitSignal}; stderr:\n${gw.stderr}`);
    assert.ok(exitedAt - signalled < 10000, 'exit took longer than drain_timeout_ms');
    assert.ok(exitedAt >= streamDone - 5, 'process exited before the stream finished');
    // The access log line of the drained request is written before exit.
    const entry = gw.accessLog().find((e) => e.request_id === id);
    assert.ok(entry, 'access log line for the drained stream missing');
    assert.equal(entry.outcome, 'complete');
  });

  test('/readyz answers 503 {"status":"draining"} to a request arriving during the drain', async (t) => {
    const { gw } = await setup(t, { drain_timeout_ms: 5000 });
    const c = await RawConnection.open(gw.port);
    t.after(() => c.destroy());
    // The request must be under way (not an idle connection) when SIGTERM arrives. A one-byte
    // body announced with 100-continue makes that observable: the interim 100 proves the gateway
    // has read the head and now waits for the body.
    await c.write('GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nExpect: 100-continue\r\n\r\n');
    assert.equal((await c.readResponse({ timeoutMs: 2000 })).status, 100);
    const exited = gw.stop({ timeoutMs: 7000 });
    await waitFor(() => connectRefused(gw.port, 500), { timeoutMs: 2000, message: 'listener to close after SIGTERM' });
    await c.write('x');
    const r = await c.readResponse({ timeoutMs: 3000 });
    assert.equal(r.status, 503, r.text);
    assert.deepEqual(r.json, { status: 'draining' });
    assert.equal(r.headers.connection?.toLowerCase(), 'close');
    assert.ok(await c.waitClosed(2000));
    assert.equal(await exited, 0, gw.stderr);
  });

  test('idle keep-alive connections are closed at once while a stream is still draining', async (t) => {
    const { gw } = await setup(t, { drain_timeout_ms: 10000 });
    const idle = await RawConnection.open(gw.port);
    t.after(() => idle.destroy());
    await idle.write(rawRequest('GET', '/healthz'));
    assert.equal((await idle.readResponse()).status, 200);

    const res = await startStream(gw, { 'x-mock-events': '10', 'x-mock-pace-ms': '200' });
    const { it, seen } = await untilFirstContent(res);
    const exited = gw.stop({ timeoutMs: 12000 });
    const signalled = performance.now();
    assert.ok(await idle.waitClosed(1500), 'idle keep-alive connection not closed on SIGTERM');
    const closedAfter = idle.closedAt - signalled;
    const events = await drainRest(it, seen);
    assert.ok(closedAfter < events.at(-1).t - signalled, 'idle connection closed only after the stream ended');
    assert.equal(events.at(-1).data, '[DONE]');
    assert.equal(await exited, 0, gw.stderr);
  });

  test('a stalled stream is cut at drain_timeout_ms; exit 0; the upstream is closed', async (t) => {
    const drainMs = 600;
    const { gw, mock } = await setup(t, { drain_timeout_ms: drainMs });
    const res = await startStream(gw, { 'x-mock-events': '10', 'x-mock-stall-after': '2' });
    const id = res.headers.get('x-request-id');
    const { it, seen } = await untilFirstContent(res);
    assert.equal((await mock.stats()).active_streams, 1);
    const signalled = performance.now();
    const exited = gw.stop({ timeoutMs: drainMs + 4000 });
    // The client may see a clean end or a reset; either is acceptable for a cut stream.
    const rest = drainRest(it, seen).catch(() => seen);
    const code = await exited;
    const elapsed = performance.now() - signalled;
    assert.equal(code, 0, `exit code ${code}, signal ${gw.state.exitSignal}; stderr:\n${gw.stderr}`);
    assert.ok(elapsed >= drainMs - 50, `exited after ${elapsed} ms, before drain_timeout_ms`);
    assert.ok(elapsed < drainMs + 2500, `exited after ${elapsed} ms, long after drain_timeout_ms`);
    const events = await withTimeout(rest, 2000, 'client stream end after the cut');
    assert.ok(!events.some((e) => e.data === '[DONE]'), 'a cut stream must not end with [DONE]');
    await waitFor(
      async () => {
        const s = await mock.stats();
        return s.streams_aborted >= 1 && s.active_streams === 0;
      },
      { timeoutMs: 2000, message: 'mock to see the upstream stream closed' },
    );
    const entry = gw.accessLog().find((e) => e.request_id === id);
    assert.ok(entry, 'access log line for the cut stream missing');
    assert.notEqual(entry.outcome, 'complete');
  });

  test('SIGTERM with no open connection exits 0 promptly', async (t) => {
    const { gw } = await setup(t, { drain_timeout_ms: 1000 });
    // Prove the server is up and its signal handling installed, then leave no connection open.
    const c = await RawConnection.open(gw.port);
    await c.write(rawRequest('GET', '/readyz', { headers: { connection: 'close' } }));
    assert.equal((await c.readResponse()).status, 200);
    assert.ok(await c.waitClosed(2000));
    const signalled = performance.now();
    const code = await gw.stop({ timeoutMs: 4000 });
    const elapsed = performance.now() - signalled;
    assert.equal(
      code,
      0,
      `exit code ${code}, signal ${gw.state.exitSignal} after ${elapsed.toFixed(0)} ms (killed by the test after 4 s: ${!!gw.state.killedAfterTimeout}); stderr:\n${gw.stderr}`,
    );
    assert.ok(elapsed < 2000, `exit took ${elapsed} ms with nothing to drain`);
  });

  test('SIGTERM right after the listening line still drains and exits 0', async (t) => {
    const mock = await startMock();
    t.after(() => mock.stop());
    // The listening line is the readiness signal: a supervisor may stop the process at once.
    const gw = await startSluice(gatewayConfig(mock.baseUrl, { server: { drain_timeout_ms: 1000 } }), {
      onListening: (proc) => proc.kill('SIGTERM'),
    });
    t.after(() => gw.stop({ timeoutMs: 1000 }));
    const code = await gw.stop({ timeoutMs: 3000 });
    assert.equal(
      code,
      0,
      `exit code ${code}, signal ${gw.state.exitSignal} (killed by the test: ${!!gw.state.killedAfterTimeout}); stderr:\n${gw.stderr}`,
    );
  });

  test('a stream through the built-in mock provider also drains to [DONE]', async (t) => {
    const mock = await startMock();
    t.after(() => mock.stop());
    const cfg = gatewayConfig(mock.baseUrl, { server: { drain_timeout_ms: 10000 } });
    cfg.providers[1].mock = { chunk_interval_ms: 100 };
    const gw = await startSluice(cfg);
    t.after(() => gw.stop({ timeoutMs: 1000 }));
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody({ model: 'mock-chat', stream: true })),
    });
    const it = sseEvents(res);
    const first = await it.next();
    assert.ok(!first.done);
    const exited = gw.stop({ timeoutMs: 12000 });
    const events = await drainRest(it, [first.value]);
    assert.equal(events.at(-1).data, '[DONE]');
    assert.equal(await exited, 0, gw.stderr);
  });
});
