// Server limits seen from a client: body and header sizes, Content-Length announced too large,
// 100-continue refusal, slow clients (408), idle keep-alive timeout.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  RawConnection,
  chatBody,
  gatewayConfig,
  openaiError,
  postJson,
  rawRequest,
  sleep,
  startSluice,
  startStack,
  waitFor,
} from '../support/harness.mjs';

const MAX_BODY = 2048;
const MAX_HEADER = 1024;
const REQUEST_TIMEOUT = 500;
const IDLE_TIMEOUT = 400;

let stack;
let gw;
let mock;

before(async () => {
  stack = await startStack({
    config: {
      server: {
        max_body_bytes: MAX_BODY,
        max_header_bytes: MAX_HEADER,
        request_timeout_ms: REQUEST_TIMEOUT,
        idle_timeout_ms: IDLE_TIMEOUT,
      },
    },
  });
  ({ gw, mock } = stack);
});

after(async () => {
  await stack?.stop();
});

const authJson = { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' };

/** A valid chat body of exactly `size` bytes. */
function chatBodyOfSize(size) {
  const base = JSON.stringify(chatBody({ messages: [{ role: 'user', content: '' }] }));
  const pad = size - Buffer.byteLength(base);
  assert.ok(pad >= 0);
  return JSON.stringify(chatBody({ messages: [{ role: 'user', content: 'x'.repeat(pad) }] }));
}

async function open(t) {
  const c = await RawConnection.open(gw.port);
  t.after(() => c.destroy());
  return c;
}

describe('request body size', () => {
  test('a body of exactly max_body_bytes is accepted', async () => {
    const body = chatBodyOfSize(MAX_BODY);
    assert.equal(Buffer.byteLength(body), MAX_BODY);
    const r = await postJson(gw, '/v1/chat/completions', body);
    assert.equal(r.status, 200, r.text);
  });

  test('a body one byte over max_body_bytes is 413', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBodyOfSize(MAX_BODY + 1));
    assert.equal(r.status, 413, r.text);
    assert.ok(openaiError(r.json), r.text);
  });

  test('an over-limit chunked body (no Content-Length) is 413', async (t) => {
    const c = await open(t);
    await c.write(
      rawRequest('POST', '/v1/chat/completions', {
        headers: { ...authJson, 'transfer-encoding': 'chunked' },
      }),
    );
    const piece = 'x'.repeat(1000);
    let status;
    for (let i = 0; i < 4 && !c.ended; i++) {
      try {
        await c.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
      } catch {
        break; // the gateway may close after answering
      }
    }
    const r = await c.readResponse({ timeoutMs: 2000 });
    status = r.status;
    assert.equal(status, 413, r.text);
    assert.ok(openaiError(r.json), r.text);
  });

  test('a Content-Length over the limit is refused before the body is sent', async (t) => {
    const before = (await mock.stats()).requests_total;
    const c = await open(t);
    const started = performance.now();
    await c.write(
      rawRequest('POST', '/v1/chat/completions', {
        headers: { ...authJson, 'content-length': String(MAX_BODY * 100) },
      }),
    );
    const r = await c.readResponse({ timeoutMs: 2000 });
    const elapsed = performance.now() - started;
    assert.equal(r.status, 413, r.text);
    assert.ok(openaiError(r.json), r.text);
    assert.ok(elapsed < REQUEST_TIMEOUT, `413 took ${elapsed} ms (must not wait for the body)`);
    assert.equal((await mock.stats()).requests_total, before);
  });

  test('Expect: 100-continue with an over-limit Content-Length gets 413 and no 100 Continue', async (t) => {
    const c = await open(t);
    await c.write(
      rawRequest('POST', '/v1/chat/completions', {
        headers: { ...authJson, 'content-length': String(MAX_BODY * 100), expect: '100-continue' },
      }),
    );
    const r = await c.readResponse({ timeoutMs: 2000 });
    assert.equal(r.status, 413, `first response must be the 413, got ${r.rawHead}`);
    assert.ok(!r.rawHead.includes('100 Continue'));
    // Nothing else (in particular no late 100 Continue) follows on the connection.
    await c.waitClosed(1000);
    assert.ok(!c.buf.toString('latin1').includes('100 Continue'), c.buf.toString('latin1'));
  });
});

describe('request head size', () => {
  test('headers over max_header_bytes are 431', async (t) => {
    const c = await open(t);
    await c.write(
      rawRequest('GET', '/v1/models', {
        headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'x-padding': 'p'.repeat(MAX_HEADER * 2) },
      }),
    );
    const r = await c.readResponse({ timeoutMs: 2000 });
    assert.equal(r.status, 431, r.text);
    assert.ok(openaiError(r.json), r.text);
  });

  test('headers just under max_header_bytes are accepted', async (t) => {
    const c = await open(t);
    const req = rawRequest('GET', '/v1/models', {
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'x-padding': 'p'.repeat(MAX_HEADER - 200) },
    });
    assert.ok(req.length < MAX_HEADER);
    await c.write(req);
    const r = await c.readResponse({ timeoutMs: 2000 });
    assert.equal(r.status, 200, r.text);
  });
});

describe('slow clients', () => {
  test('headers trickling in slower than request_timeout_ms get 408, then the connection closes', async (t) => {
    const before = (await mock.stats()).requests_total;
    const c = await open(t);
    const started = performance.now();
    await c.write('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // A slow client: one header byte at a time, never finishing the head in time.
    const trickle = (async () => {
      for (const ch of `authorization: Bearer ${GATEWAY_KEY}\r\nx-slow: ${'s'.repeat(40)}`) {
        if (c.ended || c.buf.length > 0) {
          return;
        }
        try {
          await c.write(ch);
        } catch {
          return;
        }
        await sleep(50);
      }
    })();
    const r = await c.readResponse({ timeoutMs: REQUEST_TIMEOUT + 3000 });
    const elapsed = performance.now() - started;
    assert.equal(r.status, 408, r.text);
    assert.ok(openaiError(r.json), r.text);
    assert.ok(elapsed >= REQUEST_TIMEOUT - 50, `408 after ${elapsed} ms, before the ${REQUEST_TIMEOUT} ms deadline`);
    assert.ok(await c.waitClosed(2000), 'connection left open after 408');
    await trickle;
  });

  test('a body slower than request_timeout_ms gets 408, then the connection closes', async (t) => {
    const before = (await mock.stats()).chat_requests;
    const c = await open(t);
    await c.write(
      rawRequest('POST', '/v1/chat/completions', {
        headers: { ...authJson, 'content-length': '200' },
      }),
    );
    await c.write('{"model":"gpt-test",');
    const r = await c.readResponse({ timeoutMs: REQUEST_TIMEOUT + 3000 });
    assert.equal(r.status, 408, r.text);
    assert.ok(openaiError(r.json), r.text);
    assert.ok(await c.waitClosed(2000), 'connection left open after 408');
    assert.equal((await mock.stats()).chat_requests, before, 'an incomplete request reached the upstream');
  });

  test('a malformed request line is 400 and the connection closes', async (t) => {
    const c = await open(t);
    await c.write('THIS IS NOT HTTP\r\n\r\n');
    const r = await c.readResponse({ timeoutMs: 2000 });
    assert.equal(r.status, 400, r.text);
    assert.ok(await c.waitClosed(2000));
  });
});

describe('keep-alive idle timeout', () => {
  test('an idle keep-alive connection is closed after idle_timeout_ms', async (t) => {
    const c = await open(t);
    await c.write(rawRequest('GET', '/healthz'));
    const r = await c.readResponse();
    assert.equal(r.status, 200);
    const idleSince = performance.now();
    assert.ok(await c.waitClosed(IDLE_TIMEOUT + 2000), 'idle connection never closed');
    const idle = c.closedAt - idleSince;
    assert.ok(idle >= IDLE_TIMEOUT - 50, `closed after ${idle} ms, before idle_timeout_ms`);
  });
});

describe('server.max_connections', () => {
  test('a connection over the limit gets 503 with Retry-After and is closed; a freed slot is reused', async (t) => {
    const g = await startSluice(gatewayConfig(mock.baseUrl, { server: { max_connections: 1 } }));
    t.after(() => g.stop());
    const first = await RawConnection.open(g.port);
    t.after(() => first.destroy());
    await first.write(rawRequest('GET', '/healthz'));
    assert.equal((await first.readResponse()).status, 200);

    const second = await RawConnection.open(g.port);
    t.after(() => second.destroy());
    await second.write(rawRequest('GET', '/healthz'));
    const r = await second.readResponse({ timeoutMs: 2000 });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.headers['retry-after'], '1');
    assert.equal(openaiError(r.json)?.code, 'connection_limit', r.text);
    assert.ok(await second.waitClosed(2000));

    first.destroy();
    await waitFor(
      async () => {
        const c = await RawConnection.open(g.port);
        try {
          await c.write(rawRequest('GET', '/healthz', { headers: { connection: 'close' } }));
          return (await c.readResponse({ timeoutMs: 1000 })).status === 200;
        } finally {
          c.destroy();
        }
      },
      { timeoutMs: 3000, message: 'a new connection to be served once the first closed' },
    );
  });
});
