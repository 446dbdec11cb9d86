// Bedrock with a role assumed through a web identity token, as EKS gives pods (IRSA):
// AWS_ROLE_ARN and AWS_WEB_IDENTITY_TOKEN_FILE in the gateway's environment, or bedrock.role_arn
// in the provider's config. sluice-mock-upstream plays STS's AssumeRoleWithWebIdentity for one
// token, issuing temporary keys that live 3 s here (so the gateway assumes the role again all
// through the run), and checks every Bedrock request's SigV4 signature against the keys it
// issued and their session token.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';

import { GATEWAY_KEY, makeTempDir, removeTempDir, startMock, startSluice, waitFor } from '../support/harness.mjs';

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.mock-web-identity.sig';
const ROLE = 'arn:aws:iam::123456789012:role/sluice-bedrock';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

let mock;
let gw;
let dir;

before(async () => {
  dir = makeTempDir('sluice-irsa-');
  const tokenFile = path.join(dir, 'token');
  fs.writeFileSync(tokenFile, `${TOKEN}\n`);
  const wrongFile = path.join(dir, 'wrong-token');
  fs.writeFileSync(wrongFile, 'not-the-token');
  mock = await startMock({ args: ['--aws-web-identity-token', TOKEN, '--aws-sts-lifetime-s', '3'] });
  const bedrock = (id, extra = {}) => ({
    id,
    adapter: 'bedrock',
    base_url: mock.url,
    bedrock: { region: 'us-east-1', ...extra },
  });
  gw = await startSluice(
    {
      version: 1,
      listen: '127.0.0.1:0',
      server: { workers: 1, drain_timeout_ms: 3000 },
      providers: [
        bedrock('irsa'),
        bedrock('wrong_token', { role_arn: ROLE, web_identity_token_file: wrongFile, sts_endpoint: `${mock.url}/` }),
      ],
      routes: [
        { alias: 'claude', provider: 'irsa', model: MODEL },
        { alias: 'claude-wrong', provider: 'wrong_token', model: MODEL, retry: { per_target_attempts: 1 } },
      ],
      keys: [{ name: 'test', key: GATEWAY_KEY }],
    },
    {
      dir,
      env: {
        AWS_ROLE_ARN: ROLE,
        AWS_WEB_IDENTITY_TOKEN_FILE: tokenFile,
        AWS_ROLE_SESSION_NAME: 'sluice-test',
        AWS_ENDPOINT_URL_STS: `${mock.url}/`,
        AWS_ACCESS_KEY_ID: '',
        AWS_SECRET_ACCESS_KEY: '',
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

const ask = (model) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 32, messages: [{ role: 'user', content: 'hello' }] }),
  });

test("requests are signed with the role's temporary keys and their session token", async () => {
  const res = await ask('claude');
  const body = await res.text();
  assert.equal(res.status, 200, body);
  const stats = await mock.stats();
  const last = stats.last_request;
  assert.match(last.headers.authorization, /^AWS4-HMAC-SHA256 Credential=ASIAMOCK\d{8}\/\d{8}\/us-east-1\/bedrock\/aws4_request, /);
  assert.match(last.headers['x-amz-security-token'], /^mock-session-token-\d+$/);
  assert.equal(stats.bedrock_signatures_valid, 1);
  assert.ok(!JSON.stringify(last).includes(TOKEN), 'the web identity token goes to STS only');
});

test('the role is assumed again before its keys expire, and no request is signed with expired keys', async () => {
  let requests = 0;
  await waitFor(
    async () => {
      const res = await ask('claude');
      assert.equal(res.status, 200, await res.text());
      requests += 1;
      return (await mock.stats()).sts_credentials_issued >= 2;
    },
    { timeoutMs: 15000, intervalMs: 200, message: 'two more sets of keys issued' },
  );
  const stats = await mock.stats();
  assert.equal(stats.bedrock_signatures_invalid, 0, 'every request carried live keys');
  assert.equal(stats.bedrock_signatures_valid, requests);
});

test('a token STS refuses: the request is a 502 naming the credentials, and STS is asked again', async () => {
  const res = await ask('claude-wrong');
  const body = await res.json();
  assert.equal(res.status, 502, JSON.stringify(body));
  assert.equal(body.error.code, 'upstream_auth_failed');
  assert.ok(!JSON.stringify(body).includes('not-the-token'));
  await waitFor(async () => (await mock.stats()).sts_refusals >= 1, {
    timeoutMs: 5000,
    message: 'the refused role is retried with backoff',
  });
});
