// Google Cloud Vertex AI behind the gateway (`adapter: vertex`), played by sluice-mock-upstream,
// which also plays Google's OAuth token endpoint for one service account: it checks the RS256
// signature and the claims of every JWT assertion the gateway signs, issues short-lived tokens
// (3 s here, so the gateway refreshes them all through the run) and refuses Vertex requests
// without a live one. Gemini on Vertex is the Gemini protocol on Vertex paths; Claude on Vertex
// is the Messages protocol through rawPredict / streamRawPredict, its body without `model` and
// with anthropic_version vertex-2023-10-16.

import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';

import {
  GATEWAY_KEY,
  collectSse,
  makeTempDir,
  removeTempDir,
  startMock,
  startSluice,
  usageRecord,
  waitFor,
} from '../support/harness.mjs';
import { callerProtocols } from '../support/callers.mjs';

const ADMIN_KEY = 'sk-sluice-vertex-admin-key-0000001';
const PROJECT = 'sluice-test-project';
const EMAIL = 'gateway@sluice-test-project.iam.gserviceaccount.com';
const TOKEN_LIFETIME_S = 3;

let mock;
let gw;
let dir;
let admin;
let privateKey;
let strangerKey;

function serviceAccount(file, key, tokenUri) {
  fs.writeFileSync(
    file,
    JSON.stringify({
      type: 'service_account',
      project_id: PROJECT,
      private_key_id: 'key-0001',
      private_key: key,
      client_email: EMAIL,
      client_id: '100000000000000000001',
      token_uri: tokenUri,
    }),
  );
  return file;
}

function rsaKey() {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  }).privateKey;
}

before(async () => {
  dir = makeTempDir('sluice-vertex-');
  privateKey = rsaKey();
  strangerKey = rsaKey();
  // The mock reads the account's key at start; its token_uri does not matter to it.
  const mockAccount = serviceAccount(path.join(dir, 'mock-sa.json'), privateKey, 'http://unused/token');
  mock = await startMock({
    args: ['--gcp-service-account', mockAccount, '--gcp-token-lifetime-s', String(TOKEN_LIFETIME_S)],
  });
  const account = serviceAccount(path.join(dir, 'sa.json'), privateKey, `${mock.url}/token`);
  const stranger = serviceAccount(path.join(dir, 'stranger.json'), strangerKey, `${mock.url}/token`);
  const vertex = (id, publisher, file = account) => ({
    id,
    adapter: 'vertex',
    base_url: `${mock.url}/v1`,
    headers: { 'x-mock-count-key': id },
    forward_headers: ['x-mock-*'],
    vertex: { location: 'us-central1', publisher, credentials_file: file },
  });
  gw = await startSluice(
    {
      version: 1,
      listen: '127.0.0.1:0',
      server: { workers: 1, drain_timeout_ms: 3000 },
      admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
      store: { sqlite: path.join(dir, 'usage.db') },
      metering: { flush_interval_ms: 20 },
      providers: [
        vertex('gemini_vertex', 'google'),
        vertex('claude_vertex', 'anthropic'),
        vertex('stranger', 'google', stranger),
        // On Google Cloud: the workload's own account, from the metadata server (the mock).
        { ...vertex('metadata_vertex', 'google'), vertex: { location: 'us-central1', publisher: 'google', project: 'p-meta', metadata_server: new URL(mock.url).host } },
      ],
      routes: [
        { alias: 'gemini', provider: 'gemini_vertex', model: 'gemini-2.5-flash' },
        { alias: 'claude', provider: 'claude_vertex', model: 'claude-sonnet-4-5@20250929' },
        { alias: 'stranger', provider: 'stranger', model: 'gemini-2.5-flash', retry: { per_target_attempts: 1 } },
        { alias: 'gemini-metadata', provider: 'metadata_vertex', model: 'gemini-2.5-flash' },
      ],
      keys: [{ name: 'test', key: GATEWAY_KEY }],
    },
    { dir },
  );
  admin = `http://127.0.0.1:${gw.listening.admin_port}`;
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
  if (dir) removeTempDir(dir);
});

beforeEach(() => mock.reset());

const auth = { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' };
const post = (p, body, headers = {}) =>
  fetch(`${gw.url}${p}`, { method: 'POST', headers: { ...auth, ...headers }, body: JSON.stringify(body) });

const CALLERS = callerProtocols(post);

async function answerText(caller, res, stream) {
  if (!stream) {
    const body = await res.text();
    assert.equal(res.status, 200, body);
    return caller.text(body);
  }
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /text\/event-stream/);
  const { events } = await collectSse(res);
  return caller.streamed(events);
}

function assertAuthorized(last) {
  assert.match(last.headers.authorization, /^Bearer ya29\.mock-\d+$/, 'an access token the mock issued');
  const sent = JSON.stringify(last);
  assert.ok(!sent.includes(GATEWAY_KEY), 'the caller key never goes upstream');
  assert.ok(!sent.includes('PRIVATE KEY'), 'the private key never goes upstream');
}

describe('Gemini on Vertex AI, every caller protocol', () => {
  for (const [protocol, caller] of Object.entries(CALLERS)) {
    for (const stream of [false, true]) {
      test(`${protocol}${stream ? ', streamed' : ''}`, async () => {
        const res = await caller.ask('gemini', stream, { 'x-mock-events': '3' });
        assert.equal(await answerText(caller, res, stream), 'Mock reply w1 w2 w3');
        const stats = await mock.stats();
        const last = stats.last_request;
        assert.equal(
          last.target,
          `/v1/projects/${PROJECT}/locations/us-central1/publishers/google/models/gemini-2.5-flash:` +
            (stream ? 'streamGenerateContent?alt=sse' : 'generateContent'),
        );
        assertAuthorized(last);
        assert.equal(stats.vertex_auth_failures, 0);
        assert.deepEqual(JSON.parse(last.body).contents, [{ role: 'user', parts: [{ text: 'hello' }] }]);
      });
    }
  }
});

describe('Claude on Vertex AI', () => {
  for (const stream of [false, true]) {
    test(`an Anthropic caller is passed through to ${stream ? 'streamRawPredict' : 'rawPredict'}`, async () => {
      const request = {
        model: 'claude',
        max_tokens: 64,
        stream,
        system: 'be brief',
        metadata: { user_id: 'u-1' },
        messages: [{ role: 'user', content: 'hello' }],
      };
      const res = await post('/v1/messages', request, { 'anthropic-version': '2023-06-01', 'x-mock-events': '3' });
      assert.equal(await answerText(CALLERS.anthropic, res, stream), 'Mock reply w1 w2 w3');
      const last = (await mock.stats()).last_request;
      assert.equal(
        last.target,
        `/v1/projects/${PROJECT}/locations/us-central1/publishers/anthropic/models/` +
          `claude-sonnet-4-5@20250929:${stream ? 'streamRawPredict' : 'rawPredict'}`,
      );
      assertAuthorized(last);
      // The caller's body as it was, but for `model` (in the URL now) and the version Vertex asks for.
      const { model, ...rest } = request;
      assert.deepEqual(JSON.parse(last.body), { anthropic_version: 'vertex-2023-10-16', ...rest });
      assert.ok(model);
    });
  }

  for (const stream of [false, true]) {
    test(`an OpenAI caller is translated to Messages on Vertex${stream ? ', streamed' : ''}`, async () => {
      const res = await CALLERS.chat.ask('claude', stream, { 'x-mock-events': '2' });
      assert.equal(await answerText(CALLERS.chat, res, stream), 'Mock reply w1 w2');
      const sent = JSON.parse((await mock.stats()).last_request.body);
      assert.equal(sent.anthropic_version, 'vertex-2023-10-16');
      assert.equal(sent.model, undefined);
      assert.equal(sent.stream === true, stream);
    });
  }

  test('the Anthropic SDK streams through it, and the usage record has its tokens', async () => {
    const client = new Anthropic({ apiKey: GATEWAY_KEY, baseURL: gw.url, maxRetries: 0 });
    const { data: stream, response } = await client.messages
      .create({ model: 'claude', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    let input = 0;
    let output = 0;
    let text = '';
    for await (const event of stream) {
      if (event.type === 'message_start') input = event.message.usage.input_tokens;
      if (event.type === 'message_delta') output = event.usage.output_tokens;
      if (event.type === 'content_block_delta') text += event.delta.text;
    }
    assert.match(text, /^Mock reply/);
    assert.ok(input > 0 && output > 0);
    const record = await usageRecord(admin, ADMIN_KEY, response.headers.get('x-request-id'));
    assert.equal(record.provider, 'claude_vertex');
    assert.equal(record.input_tokens, input);
    assert.equal(record.output_tokens, output);
  });
});

describe('access tokens', () => {
  test('are refreshed before they expire, off the request path, and requests never see an expired one', async () => {
    // Tokens live 3 s here: the gateway asks for the next one half-way through each.
    const start = (await mock.stats()).gcp_tokens_issued;
    let requests = 0;
    await waitFor(
      async () => {
        const res = await CALLERS.chat.ask('gemini', false, {});
        assert.equal(res.status, 200, await res.text());
        requests += 1;
        return (await mock.stats()).gcp_tokens_issued >= start + 2;
      },
      { timeoutMs: 15000, intervalMs: 200, message: 'two more tokens issued' },
    );
    const stats = await mock.stats();
    assert.equal(stats.vertex_auth_failures, 0, 'no request went out with an expired token');
    assert.ok(requests >= 2);
  });

  test('from the metadata server (GKE Workload Identity, GCE): nothing secret configured, the token a GET with Metadata-Flavor', async () => {
    const res = await CALLERS.chat.ask('gemini-metadata', false, { 'x-mock-events': '3' });
    assert.equal(await answerText(CALLERS.chat, res, false), 'Mock reply w1 w2 w3');
    const stats = await mock.stats();
    assert.equal(stats.vertex_auth_failures, 0, 'the request carried a token the mock issued');
    assert.match(stats.last_request.target, /^\/v1\/projects\/p-meta\/locations\/us-central1\/publishers\/google\/models\/gemini-2\.5-flash:generateContent$/);
    // The mock's metadata server refuses what the real one refuses.
    const bare = await fetch(`${mock.url}/computeMetadata/v1/instance/service-accounts/default/token`);
    assert.equal(bare.status, 403, 'no Metadata-Flavor header');
    const proxied = await fetch(`${mock.url}/computeMetadata/v1/instance/service-accounts/default/token`, {
      headers: { 'metadata-flavor': 'Google', 'x-forwarded-for': '10.0.0.1' },
    });
    assert.equal(proxied.status, 403, 'forwarded through a proxy');
  });

  test('a key the token endpoint refuses is a 502 naming the provider, and no key material is echoed', async () => {
    const res = await CALLERS.chat.ask('stranger', false, {});
    const body = await res.text();
    assert.equal(res.status, 502, body);
    const error = JSON.parse(body).error;
    assert.equal(error.code, 'upstream_auth_failed');
    assert.match(error.message, /stranger/);
    assert.ok(!body.includes('PRIVATE KEY') && !body.includes('ya29.'), body);
    const stats = await mock.stats();
    assert.ok(stats.vertex_auth_failures >= 1, 'sent without a token, refused by Vertex');
    await waitFor(async () => (await mock.stats()).gcp_token_refusals >= 1, {
      timeoutMs: 5000,
      message: "the gateway keeps asking for the stranger's token (backing off)",
    });
  });
});
