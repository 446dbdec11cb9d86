// OpenTelemetry traces: a small OTLP/HTTP JSON receiver (a node http server on port 0) stands
// in for the collector. One SERVER span per request and one CLIENT span per upstream attempt
// (a fallback route whose first target fails gives two), parent/child ids, the caller's trace
// id kept, each upstream seeing a traceparent with that trace id and its attempt's span id,
// GenAI attributes and token counts equal to the mock's usage, no prompt, answer or credential
// in the export, spans flushed on SIGTERM, the caller's traceparent carried on when tracing is
// off, and a collector that is down or never answers costing the gateway nothing.

import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  chatBody,
  postJson,
  startMock,
  startSluice,
  waitFor,
  withTimeout,
} from '../support/harness.mjs';

const PROMPT = 'PROMPT-TEXT-never-exported-5c1f';
const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CALLER_SPAN = 'b7ad6b7169203331';
const TRACEPARENT_RE = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

// An OTLP/HTTP receiver. mode: 'ok' (200 {}), 'down' (503), 'hang' (never answers).
async function startCollector(mode = 'ok') {
  const bodies = [];
  const contentTypes = [];
  const hung = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      contentTypes.push(req.headers['content-type']);
      if (mode === 'hang') {
        hung.push(res);
        return;
      }
      if (mode === 'down') {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      bodies.push(data);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address();
  return {
    endpoint: `http://127.0.0.1:${port}/v1/traces`,
    bodies,
    contentTypes,
    posts: () => contentTypes.length,
    spans: () =>
      bodies.flatMap((b) =>
        JSON.parse(b).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
      ),
    resources: () => bodies.flatMap((b) => JSON.parse(b).resourceSpans.map((rs) => rs.resource)),
    close: () => {
      for (const res of hung) {
        res.destroy();
      }
      server.closeAllConnections?.();
      return new Promise((r) => server.close(r));
    },
  };
}

const attrs = (span) =>
  Object.fromEntries(
    span.attributes.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
        value.boolValue ??
        value.doubleValue ??
        value.arrayValue?.values.map((v) => v.stringValue),
    ]),
  );

function gatewayConfig({ failing, good, traces, forward = ['x-mock-*'] }) {
  const cfg = {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 2, drain_timeout_ms: 2000 },
    providers: [
      {
        id: 'primary',
        adapter: 'openai',
        base_url: failing.baseUrl,
        api_key: PROVIDER_KEY,
        headers: { 'x-mock-status': '500' },
        forward_headers: forward,
      },
      { id: 'backup', adapter: 'openai', base_url: good.baseUrl, api_key: PROVIDER_KEY, forward_headers: forward },
    ],
    routes: [
      {
        alias: 'gpt-test',
        targets: [
          { provider: 'primary', model: 'primary-model' },
          { provider: 'backup', model: 'backup-model' },
        ],
      },
      { alias: 'direct', provider: 'backup', model: 'backup-model' },
    ],
    keys: [{ name: 'team-a', key: GATEWAY_KEY }],
  };
  if (traces) {
    cfg.traces = traces;
  }
  return cfg;
}

let failing;
let good;

before(async () => {
  failing = await startMock();
  good = await startMock();
});

after(async () => {
  await failing?.stop();
  await good?.stop();
});

describe('traces exported to an OTLP/HTTP receiver', () => {
  let collector;
  let gw;

  before(async () => {
    collector = await startCollector('ok');
    gw = await startSluice(
      gatewayConfig({
        failing,
        good,
        traces: { endpoint: collector.endpoint, service_name: 'sluice-test', export_interval_ms: 50 },
      }),
    );
  });

  after(async () => {
    await gw?.stop();
    await collector?.close();
  });

  test('a fallback request: one server span, one client span per attempt, ids propagated', async () => {
    const body = chatBody({ messages: [{ role: 'user', content: PROMPT }] });
    const r = await postJson(gw, '/v1/chat/completions', body, {
      headers: {
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
        tracestate: 'congo=t61rcWkgMzE',
      },
    });
    assert.equal(r.status, 200, r.text);
    const usage = r.json.usage;
    assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);

    const spans = await waitFor(
      () => {
        const mine = collector.spans().filter((s) => s.traceId === CALLER_TRACE);
        return mine.length >= 3 ? mine : undefined;
      },
      { timeoutMs: 5000, message: 'three spans for the caller trace' },
    );
    assert.equal(spans.length, 3);
    assert.ok(collector.contentTypes.every((t) => t === 'application/json'));
    const server = spans.find((s) => s.kind === 2);
    const clients = spans
      .filter((s) => s.kind === 3)
      .sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano)));
    assert.ok(server, 'a SERVER span');
    assert.equal(clients.length, 2, 'a CLIENT span per attempt');
    assert.equal(server.parentSpanId, CALLER_SPAN);
    assert.equal(server.name, 'chat gpt-test');
    for (const c of clients) {
      assert.equal(c.parentSpanId, server.spanId);
      assert.match(c.spanId, /^[0-9a-f]{16}$/);
      assert.ok(BigInt(c.startTimeUnixNano) >= BigInt(server.startTimeUnixNano));
      assert.ok(BigInt(c.endTimeUnixNano) <= BigInt(server.endTimeUnixNano));
      assert.ok(BigInt(c.endTimeUnixNano) >= BigInt(c.startTimeUnixNano));
    }
    assert.notEqual(clients[0].spanId, clients[1].spanId);
    assert.ok(BigInt(clients[1].startTimeUnixNano) >= BigInt(clients[0].endTimeUnixNano));

    // Each upstream saw its own attempt's span id under the caller's trace id, once.
    const seenA = (await failing.stats()).last_request.headers;
    const seenB = (await good.stats()).last_request.headers;
    assert.equal(seenA.traceparent, `00-${CALLER_TRACE}-${clients[0].spanId}-01`);
    assert.equal(seenB.traceparent, `00-${CALLER_TRACE}-${clients[1].spanId}-01`);
    assert.equal(seenB.tracestate, 'congo=t61rcWkgMzE');

    const s = attrs(server);
    assert.equal(s['gen_ai.operation.name'], 'chat');
    assert.equal(s['gen_ai.request.model'], 'gpt-test');
    assert.equal(s['gen_ai.response.model'], 'backup-model');
    assert.equal(s['gen_ai.provider.name'], 'openai');
    assert.equal(s['gen_ai.usage.input_tokens'], usage.prompt_tokens);
    assert.equal(s['gen_ai.usage.output_tokens'], usage.completion_tokens);
    assert.deepEqual(s['gen_ai.response.finish_reasons'], ['stop']);
    assert.equal(s['http.request.method'], 'POST');
    assert.equal(s['http.response.status_code'], 200);
    assert.equal(s['sluice.alias'], 'gpt-test');
    assert.equal(s['sluice.key'], 'team-a');
    assert.equal(s['sluice.outcome'], 'complete');
    assert.equal(s['sluice.attempts'], 2);
    assert.deepEqual(server.status, {});

    const [a, b] = clients.map(attrs);
    assert.equal(clients[0].name, 'chat primary-model');
    assert.equal(a['http.response.status_code'], 500);
    assert.equal(a['gen_ai.request.model'], 'primary-model');
    assert.equal(a['server.address'], '127.0.0.1');
    assert.equal(a['server.port'], failing.port);
    assert.equal(a['sluice.provider'], 'primary');
    assert.ok(a['error.type']);
    assert.equal(clients[0].status.code, 2);
    assert.equal(a['gen_ai.usage.input_tokens'], undefined, 'the failed attempt used no tokens');
    assert.equal(clients[1].name, 'chat backup-model');
    assert.equal(b['http.response.status_code'], 200);
    assert.equal(b['server.port'], good.port);
    assert.equal(b['gen_ai.usage.input_tokens'], usage.prompt_tokens);
    assert.equal(b['gen_ai.usage.output_tokens'], usage.completion_tokens);
    assert.equal(b['gen_ai.response.model'], 'backup-model');
    assert.deepEqual(clients[1].status, {});

    const resource = collector.resources()[0];
    assert.deepEqual(resource.attributes.find((x) => x.key === 'service.name').value, {
      stringValue: 'sluice-test',
    });

    // Nothing of the conversation or the credentials leaves in the export.
    const exported = collector.bodies.join('\n');
    assert.ok(!exported.includes(PROMPT), 'prompt text in the export');
    assert.ok(!exported.includes('Mock reply'), 'answer text in the export');
    assert.ok(!exported.includes(PROVIDER_KEY), 'provider key in the export');
    assert.ok(!exported.includes(GATEWAY_KEY), 'gateway key in the export');
  });

  test('without a caller traceparent a new trace is started and propagated', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'direct' }));
    assert.equal(r.status, 200, r.text);
    const seen = (await good.stats()).last_request.headers.traceparent;
    const [, trace, span] = seen.match(TRACEPARENT_RE);
    assert.notEqual(trace, CALLER_TRACE);
    const spans = await waitFor(
      () => {
        const mine = collector.spans().filter((s) => s.traceId === trace);
        return mine.length >= 2 ? mine : undefined;
      },
      { timeoutMs: 5000, message: 'spans of the new trace' },
    );
    const server = spans.find((s) => s.kind === 2);
    const client = spans.find((s) => s.kind === 3);
    assert.equal(server.parentSpanId ?? '', '');
    assert.equal(client.spanId, span);
    assert.equal(client.parentSpanId, server.spanId);
  });

  test('a malformed caller traceparent is never forwarded, even when forward_headers names it', async () => {
    const other = await startSluice(
      gatewayConfig({
        failing,
        good,
        forward: ['x-mock-*', 'traceparent', 'tracestate'],
        traces: { endpoint: collector.endpoint, export_interval_ms: 50 },
      }),
    );
    try {
      const bad = '00-ZZZZ-not-a-traceparent-01';
      const r = await postJson(other, '/v1/chat/completions', chatBody({ model: 'direct' }), {
        headers: { traceparent: bad, tracestate: 'leak=1' },
      });
      assert.equal(r.status, 200, r.text);
      const headers = (await good.stats()).last_request.headers;
      assert.match(headers.traceparent, TRACEPARENT_RE, 'one well-formed traceparent, not the caller\'s');
      assert.equal(headers.tracestate, undefined, 'tracestate of an invalid traceparent is dropped');

      // A valid one is re-written with the gateway's span, and sent once.
      const r2 = await postJson(other, '/v1/chat/completions', chatBody({ model: 'direct' }), {
        headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
      });
      assert.equal(r2.status, 200);
      const [, trace, span] = (await good.stats()).last_request.headers.traceparent.match(TRACEPARENT_RE);
      assert.equal(trace, CALLER_TRACE);
      assert.notEqual(span, CALLER_SPAN);
    } finally {
      await other.stop();
    }
  });
});

describe('spans are flushed on shutdown', () => {
  test('SIGTERM exports what is queued', async () => {
    const collector = await startCollector('ok');
    try {
      const gw = await startSluice(
        gatewayConfig({
          failing,
          good,
          traces: { endpoint: collector.endpoint, export_interval_ms: 600000, batch_size: 1000 },
        }),
      );
      const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'direct' }));
      assert.equal(r.status, 200);
      assert.equal(collector.posts(), 0, 'nothing exported before the interval');
      assert.equal(await gw.stop(), 0);
      assert.equal(collector.spans().length, 2, 'server and client span exported at shutdown');
    } finally {
      await collector.close();
    }
  });
});

describe('tracing off (no traces: section)', () => {
  let gw;
  before(async () => {
    gw = await startSluice(gatewayConfig({ failing, good }));
  });
  after(async () => gw?.stop());

  test("a caller's context is carried on with its own span as the parent", async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'direct' }), {
      headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'congo=1' },
    });
    assert.equal(r.status, 200);
    const headers = (await good.stats()).last_request.headers;
    assert.equal(headers.traceparent, `00-${CALLER_TRACE}-${CALLER_SPAN}-01`);
    assert.equal(headers.tracestate, 'congo=1');
  });

  test('no caller context: no traceparent upstream', async () => {
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'direct' }));
    assert.equal(r.status, 200);
    assert.equal((await good.stats()).last_request.headers.traceparent, undefined);
  });
});

describe('a collector that is down or never answers costs the gateway nothing', () => {
  for (const mode of ['down', 'hang']) {
    test(`collector ${mode}`, async () => {
      const collector = await startCollector(mode);
      const gw = await startSluice(
        gatewayConfig({
          failing,
          good,
          traces: {
            endpoint: collector.endpoint,
            export_interval_ms: 20,
            export_timeout_ms: 300,
            batch_size: 2,
            queue_capacity: 16,
          },
        }),
      );
      try {
        const started = performance.now();
        for (let round = 0; round < 5; round++) {
          const answers = await withTimeout(
            Promise.all(
              Array.from({ length: 10 }, () =>
                postJson(gw, '/v1/chat/completions', chatBody({ model: 'direct' })),
              ),
            ),
            5000,
            `requests while the collector is ${mode}`,
          );
          assert.ok(answers.every((a) => a.status === 200));
        }
        // 50 requests against a local mock: far below the export timeout times the retries.
        assert.ok(performance.now() - started < 5000);
        await waitFor(() => collector.posts() > 0, { timeoutMs: 3000, message: 'an export attempt' });
        assert.equal((await postJson(gw, '/v1/chat/completions', chatBody({ model: 'direct' }))).status, 200);
      } finally {
        const t0 = performance.now();
        assert.equal(await gw.stop({ timeoutMs: 5000 }), 0);
        // Shutdown waits for the exporter at most about one export timeout.
        assert.ok(performance.now() - t0 < 4000, 'shutdown bounded');
        await collector.close();
      }
    });
  }
});
