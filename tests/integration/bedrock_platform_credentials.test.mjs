// Bedrock signed with temporary keys the platform serves, nothing in the gateway's config:
// - a container credentials endpoint, as ECS gives tasks and EKS Pod Identity gives pods
//   (AWS_CONTAINER_CREDENTIALS_FULL_URI and AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE);
// - EC2's instance metadata service, IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT pointing at the
//   mock; on EC2 the default address): the chain's last resort.
// sluice-mock-upstream plays both (keys that live 3 s here, so the gateway fetches again all
// through the run) and checks every Bedrock request's SigV4 signature against the keys it
// issued and their session token.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';

import { GATEWAY_KEY, makeTempDir, removeTempDir, startMock, startSluice, waitFor } from '../support/harness.mjs';

const TOKEN = 'pod-identity-token-0001';
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

let dir;
let tokenFile;
// One mock per gateway: each counts only its own gateway's fetches.
const stacks = {};

before(async () => {
  dir = makeTempDir('sluice-platform-creds-');
  tokenFile = path.join(dir, 'eks-pod-identity-token');
  fs.writeFileSync(tokenFile, `${TOKEN}\n`);
  const none = {
    AWS_ACCESS_KEY_ID: '',
    AWS_SECRET_ACCESS_KEY: '',
    AWS_ROLE_ARN: '',
    AWS_WEB_IDENTITY_TOKEN_FILE: '',
    AWS_CONTAINER_CREDENTIALS_FULL_URI: '',
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '',
    AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'),
    AWS_CONFIG_FILE: path.join(dir, 'none'),
  };
  const platforms = {
    container: (mock) => ({ ...none, AWS_CONTAINER_CREDENTIALS_FULL_URI: `${mock.url}/v1/credentials`, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE: tokenFile }),
    'instance role': (mock) => ({ ...none, AWS_EC2_METADATA_SERVICE_ENDPOINT: mock.url }),
  };
  for (const [name, envOf] of Object.entries(platforms)) {
    const mock = await startMock({
      args: ['--aws-container-token', TOKEN, '--aws-imds-role', 'sluice-instance-role', '--aws-sts-lifetime-s', '3'],
    });
    const gw = await startSluice(
      {
        version: 1,
        listen: '127.0.0.1:0',
        server: { workers: 1, drain_timeout_ms: 3000 },
        providers: [{ id: 'aws', adapter: 'bedrock', base_url: mock.url, bedrock: { region: 'us-east-1' } }],
        routes: [{ alias: 'claude', provider: 'aws', model: MODEL }],
        keys: [{ name: 'test', key: GATEWAY_KEY }],
      },
      { dir: fs.mkdtempSync(path.join(dir, 'gw-')), env: envOf(mock) },
    );
    stacks[name] = { mock, gw };
  }
});

after(async () => {
  for (const { gw, mock } of Object.values(stacks)) {
    await gw.stop();
    await mock.stop();
  }
  if (dir) removeTempDir(dir);
});

beforeEach(async () => {
  for (const { mock } of Object.values(stacks)) await mock.reset();
});

const ask = (gw) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude', messages: [{ role: 'user', content: 'hello' }] }),
  });

for (const name of ['container', 'instance role']) {
  test(`${name}: requests are signed with the served keys; no platform token reaches Bedrock`, async () => {
    const { gw, mock } = stacks[name];
    const res = await ask(gw);
    assert.equal(res.status, 200, await res.text());
    const stats = await mock.stats();
    const last = stats.last_request;
    assert.match(last.headers.authorization, /^AWS4-HMAC-SHA256 Credential=ASIAMOCK\d{8}\/\d{8}\/us-east-1\/bedrock\/aws4_request, /);
    assert.match(last.headers['x-amz-security-token'], /^mock-session-token-\d+$/);
    assert.equal(stats.bedrock_signatures_valid, 1);
    const sent = JSON.stringify(last);
    assert.ok(!sent.includes(TOKEN) && !sent.includes('imds-session'), 'no platform token reaches Bedrock');
  });

  test(`${name}: the keys are fetched again before they expire, never used expired`, async () => {
    const { gw, mock } = stacks[name];
    let requests = 0;
    await waitFor(
      async () => {
        const res = await ask(gw);
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
}

test('the mock refuses what the platforms refuse', async () => {
  const { mock } = stacks.container;
  const res = await fetch(`${mock.url}/v1/credentials`, { headers: { authorization: 'someone-else' } });
  assert.equal(res.status, 403, 'another container token');
  const v1 = await fetch(`${mock.url}/latest/meta-data/iam/security-credentials/`);
  assert.equal(v1.status, 401, 'IMDSv1 (no session token)');
  const proxied = await fetch(`${mock.url}/latest/api/token`, {
    method: 'PUT',
    headers: { 'x-aws-ec2-metadata-token-ttl-seconds': '60', 'x-forwarded-for': '10.0.0.1' },
  });
  assert.equal(proxied.status, 400, 'a session token asked for through a proxy');
});
