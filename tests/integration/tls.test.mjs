// TLS to the upstream: a test CA and a server certificate (SAN IP:127.0.0.1, DNS:localhost)
// generated with the openssl CLI; the mock serves HTTPS with it.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  chatBody,
  collectSse,
  gatewayConfig,
  jsonEvents,
  makeTempDir,
  openaiError,
  postJson,
  removeTempDir,
  runBinary,
  sluiceBin,
  startMock,
  startSluice,
  toYaml,
} from '../support/harness.mjs';

let dir;
let ca;
let otherCa;
let mock;

function openssl(args) {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function makeCa(name) {
  openssl([
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '2',
    '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.pem`,
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return path.join(dir, `${name}.pem`);
}

before(async () => {
  dir = makeTempDir('sluice-tls-');
  ca = makeCa('test-ca');
  otherCa = makeCa('other-ca');
  writeFileSync(
    path.join(dir, 'server.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '',
    ].join('\n'),
  );
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr']);
  openssl([
    'x509', '-req', '-in', 'server.csr', '-CA', 'test-ca.pem', '-CAkey', 'test-ca.key', '-CAcreateserial',
    '-days', '2', '-sha256', '-extfile', 'server.ext', '-out', 'server.pem',
  ]);
  mock = await startMock({ tlsCert: path.join(dir, 'server.pem'), tlsKey: path.join(dir, 'server.key') });
  assert.equal(mock.tls, true);
  assert.ok(mock.baseUrl.startsWith('https://127.0.0.1:'));
});

after(async () => {
  await mock?.stop();
  if (dir) {
    removeTempDir(dir);
  }
});

async function gateway(t, tls, baseUrl = mock.baseUrl) {
  const g = await startSluice(gatewayConfig(baseUrl, { provider: tls === undefined ? {} : { tls } }));
  t.after(() => g.stop());
  return g;
}

describe('TLS upstream', () => {
  test('with tls.ca_file naming the test CA: non-stream chat works over HTTPS', async (t) => {
    const g = await gateway(t, { ca_file: ca });
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.object, 'chat.completion');
    const { last_request: lr } = await mock.stats();
    assert.equal(lr.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  });

  test('with tls.ca_file: streaming works over HTTPS', async (t) => {
    const g = await gateway(t, { ca_file: ca });
    const res = await fetch(`${g.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json', 'x-mock-events': '4' },
      body: JSON.stringify(chatBody({ stream: true })),
    });
    assert.equal(res.status, 200);
    const { events } = await collectSse(res);
    assert.equal(events.at(-1).data, '[DONE]');
    const text = jsonEvents(events).map((c) => c.choices?.[0]?.delta?.content ?? '').join('');
    assert.equal(text, 'Mock reply w1 w2 w3 w4');
  });

  test('with tls.ca_file: a broken TLS stream (no close_notify) gives an error event, not [DONE]', async (t) => {
    const g = await gateway(t, { ca_file: ca });
    const res = await fetch(`${g.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${GATEWAY_KEY}`,
        'content-type': 'application/json',
        'x-mock-events': '6',
        'x-mock-disconnect-after': '2',
      },
      body: JSON.stringify(chatBody({ stream: true })),
    });
    const { events } = await collectSse(res);
    assert.ok(!events.some((e) => e.data === '[DONE]'));
    const last = jsonEvents(events).at(-1);
    assert.match(last.error?.code ?? '', /^upstream_stream_(broken|truncated)$/, JSON.stringify(last));
  });

  test('https://localhost with the CA verifies the DNS SAN', async (t) => {
    const g = await gateway(t, { ca_file: ca }, `https://localhost:${mock.port}/v1`);
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 200, r.text);
  });

  test('without ca_file (system store) the test certificate is rejected: 502', async (t) => {
    const g = await gateway(t, undefined);
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 502, r.text);
    const e = openaiError(r.json);
    assert.ok(e, r.text);
    assert.match(e.message, /certificate|verify|TLS|handshake/i);
  });

  test('with a CA that did not sign the certificate: 502', async (t) => {
    const g = await gateway(t, { ca_file: otherCa });
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 502, r.text);
  });

  test('with tls.server_name not matching the certificate: 502', async (t) => {
    const g = await gateway(t, { ca_file: ca, server_name: 'api.example.com' });
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 502, r.text);
    assert.ok(openaiError(r.json), r.text);
  });

  test('with tls.server_name matching a SAN of the certificate: works', async (t) => {
    const g = await gateway(t, { ca_file: ca, server_name: 'localhost' });
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 200, r.text);
  });

  test('tls.verify: false accepts the certificate and check-config prints a note', async (t) => {
    const g = await gateway(t, { verify: false });
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 200, r.text);
    const file = path.join(dir, 'verify-false.yaml');
    writeFileSync(file, toYaml(gatewayConfig(mock.baseUrl, { provider: { tls: { verify: false } } })));
    const check = await runBinary(sluiceBin, ['check-config', file]);
    assert.equal(check.code, 0, check.stderr);
    assert.match(check.stdout, /tls\.verify is false/);
  });

  test('plain http:// to the HTTPS port fails with 502, not a hang', async (t) => {
    const g = await startSluice(
      gatewayConfig(`http://127.0.0.1:${mock.port}/v1`, { provider: { timeout: { first_byte_ms: 2000, total_ms: 3000 } } }),
    );
    t.after(() => g.stop());
    const r = await postJson(g, '/v1/chat/completions', chatBody());
    assert.ok([502, 504].includes(r.status), `${r.status} ${r.text}`);
    assert.ok(openaiError(r.json), r.text);
  });
});
