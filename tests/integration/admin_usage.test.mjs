// The admin listener's usage endpoints against a real SQLite store: traffic with feature tags
// from two keys, then GET /admin/v1/usage grouped and filtered (JSON, CSV, table) answers what
// the stored records say and what `sluice usage` prints for the same parameters, byte for byte;
// GET /admin/v1/usage/record gives one request's attempts. A model key cannot read usage.
// Bounded waits only (the sink flushes every 20 ms).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { GATEWAY_KEY, PROVIDER_KEY, makeTempDir, removeTempDir, sluiceBin, startMock, startSluice, waitFor } from '../support/harness.mjs';

const ADMIN_KEY = 'sluice-admin-key-for-usage-0123456789';
const OTHER_KEY = 'sk-sluice-other-team-key-000000002';

describe('usage on the admin listener', () => {
  let mock;
  let gw;
  let dir;
  let admin;
  const ids = [];

  const get = async (p, key = ADMIN_KEY) => {
    const res = await fetch(`${admin}${p}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  before(async () => {
    mock = await startMock();
    dir = makeTempDir('sluice-admin-usage-');
    gw = await startSluice(
      {
        version: 1,
        listen: '127.0.0.1:0',
        admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
        store: { sqlite: path.join(dir, 'usage.db') },
        metering: { flush_interval_ms: 20 },
        providers: [{ id: 'up', adapter: 'openai', base_url: mock.baseUrl, api_key: PROVIDER_KEY }],
        routes: [{ alias: 'chat', provider: 'up', model: 'mock-model' }],
        keys: [
          { name: 'team-a', group: 'research', key: GATEWAY_KEY },
          { name: 'team-b', key: OTHER_KEY },
        ],
      },
      { dir },
    );
    admin = `http://127.0.0.1:${gw.listening.admin_port}`;
    const send = async (key, feature) => {
      const res = await fetch(`${gw.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-sluice-feature': feature },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hello' }] }),
      });
      assert.equal(res.status, 200);
      ids.push(res.headers.get('x-request-id'));
      await res.text();
    };
    for (let i = 0; i < 3; i++) await send(GATEWAY_KEY, 'search');
    await send(GATEWAY_KEY, 'summarise');
    for (let i = 0; i < 2; i++) await send(OTHER_KEY, 'search');
    await waitFor(
      async () => {
        const r = await get('/admin/v1/usage');
        return r.status === 200 && JSON.parse(r.text).rows[0]?.requests === 6;
      },
      { timeoutMs: 5000, message: 'six records stored' },
    );
  });

  after(async () => {
    await gw?.stop();
    await mock?.stop();
    removeTempDir(dir);
  });

  test('grouped by key and feature, JSON by default', async () => {
    const r = await get('/admin/v1/usage?by=key,feature&since=1d');
    assert.equal(r.status, 200);
    assert.match(r.type, /application\/json/);
    const body = JSON.parse(r.text);
    assert.deepEqual(body.group_by, ['key', 'feature']);
    const rows = Object.fromEntries(body.rows.map((row) => [`${row.key}/${row.feature}`, row]));
    assert.equal(rows['team-a/search'].requests, 3);
    assert.equal(rows['team-a/summarise'].requests, 1);
    assert.equal(rows['team-b/search'].requests, 2);
    assert.ok(rows['team-a/search'].input_tokens > 0, 'the mock reports usage');
  });

  test('filters by key group; CSV and table renderings', async () => {
    const grouped = JSON.parse((await get('/admin/v1/usage?key_group=research')).text);
    assert.equal(grouped.rows[0].requests, 4, 'team-a is in research, team-b in no group');
    const csv = await get('/admin/v1/usage?by=model&format=csv');
    assert.equal(csv.status, 200);
    assert.match(csv.type, /text\/csv/);
    assert.match(csv.text.split('\n')[0], /model/);
    assert.match(csv.text, /mock-model/);
    const table = await get('/admin/v1/usage?by=key&format=table');
    assert.match(table.type, /text\/plain/);
    assert.match(table.text, /team-b/);
  });

  test('the endpoint and `sluice usage` print the same bytes', async () => {
    const params = 'by=key,feature&since=2026-01-01&format=csv';
    const http = await get(`/admin/v1/usage?${params}`);
    const cli = spawnSync(
      sluiceBin,
      ['usage', '--config', gw.configPath, '--by', 'key,feature', '--since', '2026-01-01', '--format', 'csv'],
      { encoding: 'utf8', timeout: 10000, cwd: dir },
    );
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(http.text, cli.stdout);
  });

  test("one request's record with its attempts", async () => {
    const r = await get(`/admin/v1/usage/record?request_id=${encodeURIComponent(ids[0])}`);
    assert.equal(r.status, 200, r.text);
    const record = JSON.parse(r.text);
    assert.equal(record.request_id, ids[0]);
    assert.equal(record.key_name ?? record.key, 'team-a');
    assert.equal(record.attempts.length, 1);
    const missing = await get('/admin/v1/usage/record?request_id=no-such-request');
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.text).error.code, 'not_found');
  });

  test('bad parameters are 400 naming the parameter; a model key is 401', async () => {
    const bad = await get('/admin/v1/usage?by=colour');
    assert.equal(bad.status, 400);
    assert.match(JSON.parse(bad.text).error.message, /by/);
    const noId = await get('/admin/v1/usage/record');
    assert.equal(noId.status, 400);
    for (const key of [null, GATEWAY_KEY]) {
      const r = await get('/admin/v1/usage', key);
      assert.equal(r.status, 401, `credential ${key}`);
      assert.doesNotMatch(r.text, /team-a/);
    }
  });
});
