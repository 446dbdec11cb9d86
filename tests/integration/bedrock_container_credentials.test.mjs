// Bedrock signed with the keys a container credentials endpoint serves, as ECS gives tasks and
// EKS Pod Identity gives pods: AWS_CONTAINER_CREDENTIALS_FULL_URI and
// AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE in the gateway's environment, nothing in its config.
// sluice-mock-upstream plays the endpoint for one token (keys that live 3 s here, so the
// gateway fetches again all through the run) and checks every Bedrock request's SigV4
// signature against the keys it issued and their session token.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';

import { GATEWAY_KEY, makeTempDir, removeTempDir, startMock, startSluice, waitFor } from '../support/harness.mjs';

const TOKEN = 'pod-identity-token-0001';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

let mock;
let gw;
let dir;
let tokenFile;

before(async () => {
  dir = makeTempDir('sluice-container-creds-');
  tokenFile = path.join(dir, 'eks-pod-identity-token');
  fs.writeFileSync(tokenFile, `${TOKEN}\n`);
  mock = await startMock({ args: ['--aws-container-token', TOKEN, '--aws-sts-lifetime-s', '3'] });
  gw = await startSluice(
    {
      version: 1,
      listen: '127.0.0.1:0',
      server: { workers: 1, drain_timeout_ms: 3000 },
      providers: [{ id: 'pod', adapter: 'bedrock', base_url: mock.url, bedrock: { region: 'us-east-1' } }],
      routes: [{ alias: 'claude', provider: 'pod', model: MODEL }],
      keys: [{ name: 'test', key: GATEWAY_KEY }],
    },
    {
      dir,
      env: {
        AWS_CONTAINER_CREDENTIALS_FULL_URI: `${mock.url}/v1/credentials`,
        AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: tokenFile,
        AWS_ACCESS_KEY_ID: '',
        AWS_SECRET_ACCESS_KEY: '',
        AWS_ROLE_ARN: '',
        AWS_WEB_IDENTITY_TOKEN_FILE: '',
        AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'),
        AWS_CONFIG_FILE: path.join(dir, 'none'),
      },
    },
  );
});

after(async () => {
  await gw?.stop();
  await mock?.stop();
  if (dir) removeTempDir(dir);
});

beforeEach(() => mock.reset());

const ask = () =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude', messages: [{ role: 'user', content: 'hello' }] }),
  });

test("requests are signed with the endpoint's keys; its token goes to the endpoint only", async () => {
  const res = await ask();
  assert.equal(res.status, 200, await res.text());
  const stats = await mock.stats();
  const last = stats.last_request;
  assert.match(last.headers.authorization, /^AWS4-HMAC-SHA256 Credential=ASIAMOCK\d{8}\/\d{8}\/us-east-1\/bedrock\/aws4_request, /);
  assert.match(last.headers['x-amz-security-token'], /^mock-session-token-\d+$/);
  assert.equal(stats.bedrock_signatures_valid, 1);
  assert.ok(!JSON.stringify(last).includes(TOKEN), 'the authorization token never reaches Bedrock');
});

test('the keys are fetched again before they expire (the token file read each time), never used expired', async () => {
  let requests = 0;
  await waitFor(
    async () => {
      const res = await ask();
      assert.equal(res.status, 200, await res.text());
      requests += 1;
      return (await mock.stats()).sts_credentials_issued >= 2;
    },
    { timeoutMs: 15000, intervalMs: 200, message: 'two more sets of keys issued' },
  );
  const stats = await mock.stats();
  assert.equal(stats.bedrock_signatures_invalid, 0, 'every request carried live keys');
  assert.equal(stats.bedrock_signatures_valid, requests);
  assert.equal(stats.sts_refusals, 0);
});

test('the mock refuses another token, as the endpoint does', async () => {
  const res = await fetch(`${mock.url}/v1/credentials`, { headers: { authorization: 'someone-else' } });
  assert.equal(res.status, 403);
});
