// Gateway keys never reach a provider, whatever its forward_headers say: every header and query
// parameter a caller protocol reads a gateway key from (IngressCodec::credential_sources) is
// refused by the forwarding filter, for callers of every protocol. Regression: with
// forward_headers: ["x-goog-*"], a Gemini caller's x-goog-api-key (its gateway key) was sent
// to the provider next to the provider's own key.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  chatBody,
  collectSse,
  gatewayConfig,
  makeTempDir,
  removeTempDir,
  runBinary,
  sluiceBin,
  toYaml,
  useStack,
} from '../support/harness.mjs';

let gw;
let mock;

useStack(
  {
    config: (m) => {
      const cfg = gatewayConfig(m.baseUrl);
      cfg.providers.push(
        {
          id: 'gem',
          adapter: 'gemini',
          base_url: `${m.url}/v1beta`,
          api_key: PROVIDER_KEY,
          forward_headers: ['x-goog-*', 'x-mock-*'],
        },
        {
          id: 'oai',
          adapter: 'openai',
          base_url: m.baseUrl,
          api_key: PROVIDER_KEY,
          forward_headers: ['x-goog-*', 'x-mock-*'],
        },
      );
      cfg.routes.push(
        { alias: 'gemini-fwd', provider: 'gem', model: 'gemini-2.5-flash' },
        { alias: 'openai-fwd', provider: 'oai', model: 'mock-model' },
      );
      return cfg;
    },
  },
  (s) => ({ gw, mock } = s),
);

const contents = { contents: [{ role: 'user', parts: [{ text: 'hello' }] }] };

function gemini(alias, { stream = false, headers = {}, query = '' } = {}) {
  const method = stream ? 'streamGenerateContent' : 'generateContent';
  const q = [stream ? 'alt=sse' : '', query].filter(Boolean).join('&');
  return fetch(`${gw.url}/v1beta/models/${alias}:${method}${q ? `?${q}` : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(contents),
  });
}

// What the provider received, checked for the gateway key anywhere in it.
async function upstreamSawNoGatewayKey() {
  const { last_request: lr } = await mock.stats();
  assert.ok(lr, 'the request reached the provider');
  assert.ok(!JSON.stringify(lr).includes(GATEWAY_KEY), `the gateway key reached the provider: ${JSON.stringify(lr.headers)}`);
  return lr;
}

describe('a Gemini caller under forward_headers ["x-goog-*"]', () => {
  for (const stream of [false, true]) {
    test(`Gemini upstream (passthrough${stream ? ', stream' : ''}): only the provider key, the other x-goog-* headers pass`, async () => {
      const res = await gemini('gemini-fwd', {
        stream,
        headers: { 'x-goog-api-key': GATEWAY_KEY, 'x-goog-user-project': 'proj-1' },
      });
      assert.equal(res.status, 200, await res.clone().text());
      await (stream ? collectSse(res) : res.json());
      const lr = await upstreamSawNoGatewayKey();
      assert.equal(lr.headers['x-goog-api-key'], PROVIDER_KEY);
      assert.equal(lr.headers['x-goog-user-project'], 'proj-1', 'forward_headers still forwards');
    });
  }

  test('OpenAI upstream (translated): no x-goog-api-key at all', async () => {
    const res = await gemini('openai-fwd', {
      headers: { 'x-goog-api-key': GATEWAY_KEY, 'x-goog-user-project': 'proj-2' },
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.json();
    const lr = await upstreamSawNoGatewayKey();
    assert.equal(lr.headers['x-goog-api-key'], undefined);
    assert.equal(lr.headers.authorization, `Bearer ${PROVIDER_KEY}`);
    assert.equal(lr.headers['x-goog-user-project'], 'proj-2');
  });

  test('a key in ?key= reaches no upstream URL', async () => {
    for (const alias of ['gemini-fwd', 'openai-fwd']) {
      const res = await gemini(alias, { query: `key=${GATEWAY_KEY}`, headers: { 'x-goog-user-project': 'p' } });
      assert.equal(res.status, 200, await res.clone().text());
      await res.json();
      const lr = await upstreamSawNoGatewayKey();
      assert.equal(lr.query.key, undefined, alias);
    }
  });
});

test('an OpenAI caller sending x-goog-api-key besides its own key: not forwarded either', async () => {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${GATEWAY_KEY}`,
      'x-goog-api-key': GATEWAY_KEY,
      'content-type': 'application/json',
    },
    body: JSON.stringify(chatBody({ model: 'openai-fwd' })),
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.json();
  const lr = await upstreamSawNoGatewayKey();
  assert.equal(lr.headers['x-goog-api-key'], undefined);
});

test('a stored-object GET relays its query without credential parameters', async () => {
  const created = await fetch(`${gw.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', input: 'remember me' }),
  });
  assert.equal(created.status, 200);
  const { id } = await created.json();
  const got = await fetch(`${gw.url}/v1/responses/${id}?include[]=message.output_text.logprobs&key=${GATEWAY_KEY}`, {
    headers: { authorization: `Bearer ${GATEWAY_KEY}` },
  });
  assert.equal(got.status, 200, await got.clone().text());
  await got.text();
  const lr = await upstreamSawNoGatewayKey();
  assert.equal(lr.method, 'GET');
  assert.equal(lr.target, `/v1/responses/${id}?include[]=message.output_text.logprobs`);
});

test('forward_headers naming a credential header exactly is a config error', async (t) => {
  const dir = makeTempDir('sluice-cfg-');
  t.after(() => removeTempDir(dir));
  const file = path.join(dir, 'sluice.yaml');
  writeFileSync(
    file,
    toYaml(gatewayConfig('http://127.0.0.1:9/v1', { provider: { forward_headers: ['x-goog-api-key'] } })),
  );
  const r = await runBinary(sluiceBin, ['check-config', file]);
  assert.equal(r.code, 1, r.stdout);
  assert.match(r.stderr, /x-goog-api-key.*never forwarded/);
});
