// Prometheus metrics and the admin listener: traffic through the gateway (mock upstream), then
// /metrics scraped from the admin listener and parsed by the Prometheus client library's own
// text-format parser (python3-prometheus-client, scripts/install-deps.sh --test). The counts must
// equal the traffic sent: requests by status and outcome, attempts and retries, tokens equal to
// the usage the mock reported, histogram counts. Also: the admin credential (none -> 401, a model
// key -> 401, the admin key -> 200), metrics_public, metrics_on_main, and that no request id or
// secret ever appears in the exposition.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  chatBody,
  gatewayConfig,
  makeTempDir,
  postJson,
  removeTempDir,
  sseEvents,
  startMock,
  startSluice,
} from '../support/harness.mjs';

const ADMIN_KEY = 'sluice-admin-key-for-tests-0123456789';
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

// Parses Prometheus text format with prometheus_client's parser; returns
// [{ name, type, samples: [{ name, labels, value }] }]. Throws on text the parser rejects.
function parseExposition(text) {
  const script = `
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for fam in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": fam.name, "type": fam.type, "samples": [
        {"name": s.name, "labels": s.labels,
         "value": s.value if math.isfinite(s.value) else str(s.value)} for s in fam.samples]})
print(json.dumps(out))
`;
  const r = spawnSync(PYTHON, ['-c', script], { input: text, encoding: 'utf8' });
  assert.equal(r.status, 0, `prometheus_client parser failed:\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

// The value of the one sample named `name` whose labels include `labels` (0 when none; throws
// when more than one matches, so a test never sums by accident).
function value(families, name, labels = {}) {
  const matches = [];
  for (const fam of families) {
    for (const s of fam.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) {
        matches.push(s);
      }
    }
  }
  assert.ok(matches.length <= 1, `${name} ${JSON.stringify(labels)} matches ${matches.length}`);
  return matches.length ? matches[0].value : 0;
}

function family(families, name) {
  return families.find((f) => f.name === name);
}

async function scrape(port, key = ADMIN_KEY) {
  const headers = key ? { authorization: `Bearer ${key}` } : {};
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

let mock;
let gw;
let adminPort;
const requestIds = [];
const sent = { ok: 0, stream: 0, failed400: 0, retried: 0, unauthorized: 0 };
const usage = { input: 0, output: 0 };

before(async () => {
  mock = await startMock();
  gw = await startSluice(
    gatewayConfig(mock.baseUrl, {
      server: { workers: 2 },
      // A second try at the same target after a 5xx, so a retry shows in the metrics.
      routing: { retry: { per_target_attempts: 2, backoff_base_ms: 1, backoff_max_ms: 2 } },
      admin: { listen: '127.0.0.1:0', key: ADMIN_KEY, metrics_on_main: true },
    }),
  );
  adminPort = gw.listening.admin_port;

  const remember = (r) => requestIds.push(r.headers.get('x-request-id'));
  for (let i = 0; i < 5; ++i) {
    const r = await postJson(gw, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 200, r.text);
    remember(r);
    usage.input += r.json.usage.prompt_tokens;
    usage.output += r.json.usage.completion_tokens;
    sent.ok += 1;
  }
  for (let i = 0; i < 3; ++i) {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody({ stream: true, stream_options: { include_usage: true } })),
    });
    assert.equal(res.status, 200);
    requestIds.push(res.headers.get('x-request-id'));
    for await (const ev of sseEvents(res)) {
      if (ev.data && ev.data !== '[DONE]') {
        const chunk = JSON.parse(ev.data);
        if (chunk.usage) {
          usage.input += chunk.usage.prompt_tokens;
          usage.output += chunk.usage.completion_tokens;
        }
      }
    }
    sent.stream += 1;
  }
  for (let i = 0; i < 2; ++i) {
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
      headers: { 'x-mock-status': '400' },
    });
    assert.equal(r.status, 400, r.text);
    remember(r);
    sent.failed400 += 1;
  }
  // One 500 then a 200 from the same target: a retry, then a success with the mock's usage.
  const r = await postJson(gw, '/v1/chat/completions', chatBody(), {
    headers: { 'x-mock-status': '500,200', 'x-mock-sequence-key': 'metrics-retry' },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.headers.get('x-sluice-attempts'), '2');
  remember(r);
  usage.input += r.json.usage.prompt_tokens;
  usage.output += r.json.usage.completion_tokens;
  sent.retried += 1;
  const denied = await postJson(gw, '/v1/chat/completions', chatBody(), { key: 'sk-wrong-key-000000000000' });
  assert.equal(denied.status, 401);
  remember(denied);
  sent.unauthorized += 1;
  assert.ok(usage.input > 0 && usage.output > 0, JSON.stringify(usage));
});

after(async () => {
  const code = await gw?.stop();
  await mock?.stop();
  assert.equal(code, 0, 'the gateway (and its admin listener) stops cleanly on SIGTERM');
});

describe('metrics on the admin listener', () => {
  test('the listening line names the admin port; /healthz there needs no credential', async () => {
    assert.ok(Number.isInteger(adminPort) && adminPort > 0 && adminPort !== gw.port);
    const res = await fetch(`http://127.0.0.1:${adminPort}/healthz`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
  });

  test('no credential, a model key or a wrong key get 401 JSON; the admin key gets 200', async () => {
    for (const key of [null, GATEWAY_KEY, 'not-the-admin-key-at-all-000']) {
      const r = await scrape(adminPort, key);
      assert.equal(r.status, 401, `key ${key}`);
      assert.match(r.headers.get('content-type'), /application\/json/);
      assert.equal(JSON.parse(r.text).error.code, 'unauthorized');
      assert.match(r.headers.get('www-authenticate'), /^Bearer/);
    }
    const ok = await scrape(adminPort);
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
  });

  test('unknown admin paths are 404 and wrong methods 405, as JSON', async () => {
    const missing = await fetch(`http://127.0.0.1:${adminPort}/nope`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).error.code, 'not_found');
    const wrong = await fetch(`http://127.0.0.1:${adminPort}/metrics`, { method: 'POST' });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'GET');
  });

  test('counts equal the traffic sent, parsed by the Prometheus text parser', async () => {
    const { text } = await scrape(adminPort);
    const fams = parseExposition(text);
    assert.equal(family(fams, 'sluice_requests').type, 'counter');
    assert.equal(family(fams, 'sluice_request_duration_seconds').type, 'histogram');

    const route = { alias: 'gpt-test', provider: 'up', model: 'mock-model' };
    assert.equal(
      value(fams, 'sluice_requests_total', { ...route, status: '200', outcome: 'complete' }),
      sent.ok + sent.stream + sent.retried,
    );
    assert.equal(
      value(fams, 'sluice_requests_total', { ...route, status: '400', outcome: 'upstream_error' }),
      sent.failed400,
    );
    assert.equal(
      value(fams, 'sluice_requests_total', { alias: '', status: '401', outcome: 'none' }),
      sent.unauthorized,
    );

    const target = { provider: 'up', model: 'mock-model' };
    assert.equal(
      value(fams, 'sluice_upstream_attempts_total', { ...target, result: '2xx' }),
      sent.ok + sent.stream + sent.retried,
    );
    assert.equal(value(fams, 'sluice_upstream_attempts_total', { ...target, result: '4xx' }), sent.failed400);
    assert.equal(value(fams, 'sluice_upstream_attempts_total', { ...target, result: '5xx' }), 1);
    assert.equal(
      value(fams, 'sluice_upstream_retries_total', { ...target, reason: '5xx', kind: 'retry' }),
      1,
    );

    const tokens = { key: 'test', model: 'mock-model' };
    assert.equal(value(fams, 'sluice_tokens_total', { ...tokens, type: 'input' }), usage.input);
    assert.equal(value(fams, 'sluice_tokens_total', { ...tokens, type: 'output' }), usage.output);

    // Histograms: one observation per request (or attempt, or stream) they describe.
    const routed = sent.ok + sent.stream + sent.failed400 + sent.retried;
    assert.equal(value(fams, 'sluice_request_duration_seconds_count', { alias: 'gpt-test' }), routed);
    assert.equal(
      value(fams, 'sluice_request_duration_seconds_bucket', { alias: 'gpt-test', le: '+Inf' }),
      routed,
    );
    assert.equal(value(fams, 'sluice_gateway_overhead_seconds_count'), routed);
    assert.equal(
      value(fams, 'sluice_upstream_time_to_first_byte_seconds_count', target),
      routed + 1, // the retried request made two attempts
    );
    assert.equal(value(fams, 'sluice_time_to_first_token_seconds_count', target), sent.stream);
    assert.ok(value(fams, 'sluice_output_tokens_per_second_count', target) >= sent.ok);
    const buckets = family(fams, 'sluice_request_duration_seconds').samples.filter(
      (s) => s.name.endsWith('_bucket') && s.labels.alias === 'gpt-test',
    );
    for (let i = 1; i < buckets.length; ++i) {
      assert.ok(buckets[i].value >= buckets[i - 1].value, 'buckets are cumulative');
    }

    // Gauges read at scrape time.
    assert.equal(value(fams, 'sluice_config_version'), 1);
    assert.equal(value(fams, 'sluice_requests_in_flight'), 0);
    assert.equal(value(fams, 'sluice_access_log_dropped_total'), 0);
    assert.equal(value(fams, 'sluice_breaker_state', target), 0);
    const inUse = value(fams, 'sluice_upstream_connections', { provider: 'up', state: 'in_use' });
    const idle = value(fams, 'sluice_upstream_connections', { provider: 'up', state: 'idle' });
    assert.equal(inUse, 0);
    assert.ok(idle >= 1, `keep-alive connections stay idle in the pools: ${idle}`);
    assert.equal(value(fams, 'sluice_metrics_series_dropped_total'), 0);
  });

  test('schema drift is counted per provider and kind (sluice_schema_drift_total)', async () => {
    const drift = async (kind) =>
      value(parseExposition((await scrape(adminPort)).text), 'sluice_schema_drift_total', { provider: 'up', kind });
    const messages = (extra, headers = {}) =>
      postJson(
        gw,
        '/v1/messages',
        { model: 'gpt-test', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...extra },
        { headers: { 'anthropic-version': '2023-06-01', ...headers } },
      );
    const ignoredBefore = await drift('request_ignored');
    const unknownBefore = await drift('answer_unknown');
    // Caller fields the translation to the OpenAI provider cannot carry.
    const ignored = await messages({ service_tier: 'auto', context_management: {} });
    assert.equal(ignored.status, 200, ignored.text);
    // An answer with a field the OpenAI decoder does not know: the provider changed its shape.
    const answer = {
      id: 'chatcmpl-drift',
      object: 'chat.completion',
      created: 1,
      model: 'mock-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      brand_new_field: { added: 'by the provider' },
    };
    const unknown = await messages({}, { 'x-mock-raw-body': JSON.stringify(answer) });
    assert.equal(unknown.status, 200, unknown.text);
    assert.equal((await drift('request_ignored')) - ignoredBefore, 2);
    assert.equal((await drift('answer_unknown')) - unknownBefore, 1);
  });

  test('no request id, gateway key, provider key or admin key appears in the exposition', async () => {
    const { text } = await scrape(adminPort);
    assert.equal(requestIds.length, sent.ok + sent.stream + sent.failed400 + sent.retried + sent.unauthorized);
    for (const id of requestIds) {
      assert.ok(id && !text.includes(id), `request id ${id} in the exposition`);
    }
    for (const secret of [GATEWAY_KEY, PROVIDER_KEY, ADMIN_KEY]) {
      assert.ok(!text.includes(secret));
    }
  });

  test('admin.metrics_on_main: GET /metrics on the main listener, no credential', async () => {
    const res = await fetch(`${gw.url}/metrics`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
    const fams = parseExposition(await res.text());
    assert.ok(value(fams, 'sluice_requests_total', { alias: 'gpt-test', status: '200', outcome: 'complete' }) > 0);
  });
});

describe('admin options', () => {
  test('metrics_public opens /metrics on the admin listener; without metrics_on_main the main listener has none', async () => {
    const dir = makeTempDir('sluice-metrics-');
    const other = await startSluice(
      gatewayConfig(mock.baseUrl, {
        admin: { listen: '127.0.0.1:0', key: ADMIN_KEY, metrics_public: true },
        store: { sqlite: path.join(dir, 'usage.db') },
      }),
    );
    try {
      const r = await scrape(other.listening.admin_port, null);
      assert.equal(r.status, 200);
      // With a store, the usage sink's gauges are there too.
      const fams = parseExposition(r.text);
      for (const name of ['sluice_usage_queue_depth', 'sluice_usage_spool_bytes', 'sluice_usage_records_dropped']) {
        assert.ok(family(fams, name), `${name} in the exposition`);
      }
      assert.equal(value(fams, 'sluice_usage_records_dropped_total'), 0);
      const onMain = await fetch(`${other.url}/metrics`);
      assert.equal(onMain.status, 404);
      await onMain.text();
    } finally {
      assert.equal(await other.stop(), 0);
      removeTempDir(dir);
    }
  });

  test('without admin: no admin port in the listening line', async () => {
    const plain = await startSluice(gatewayConfig(mock.baseUrl));
    try {
      assert.equal(plain.listening.admin_port, undefined);
      const onMain = await fetch(`${plain.url}/metrics`);
      assert.equal(onMain.status, 404);
      await onMain.text();
    } finally {
      await plain.stop();
    }
  });
});
