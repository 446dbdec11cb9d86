// Key groups and API keys through the admin API and the `sluice groups` / `sluice keys` CLI,
// against the real binary with a SQLite store and, when SLUICE_TEST_POSTGRES_URL is set
// (scripts/test-services.sh), a PostgreSQL one: CRUD, the allocation rules' errors, an
// Idempotency-Key retry, the audit log, and a model key refused. Names carry a per-run suffix:
// the PostgreSQL database is shared with other suites.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { GATEWAY_KEY, makeTempDir, removeTempDir, sluiceBin, startSluice, waitFor } from '../support/harness.mjs';

const ADMIN_KEY = 'sluice-admin-key-for-tenancy-0123456789';

// `sql` reads the store's tables directly (one column of text per row), as an operator would.
const command = (cmd, args) => {
  const out = spawnSync(cmd, args, { encoding: 'utf8', timeout: 15000 });
  assert.equal(out.status, 0, `${cmd}: ${out.stderr}`);
  return out.stdout;
};
const backends = [
  {
    name: 'sqlite',
    store: (dir) => ({ sqlite: path.join(dir, 'tenancy.db') }),
    sql: (dir, query) => command('sqlite3', [path.join(dir, 'tenancy.db'), query]),
  },
];
if (process.env.SLUICE_TEST_POSTGRES_URL) {
  backends.push({
    name: 'postgres',
    store: () => ({ postgres: process.env.SLUICE_TEST_POSTGRES_URL }),
    sql: (_dir, query) => command('psql', [process.env.SLUICE_TEST_POSTGRES_URL, '-At', '-c', query]),
  });
}

for (const backend of backends) {
  describe(`tenancy admin API (${backend.name})`, () => {
    const run = `${process.pid}-${Date.now() % 1e8}`;
    const team = `research-${run}`;
    let gw;
    let dir;
    let admin;
    const config = (version, keys) => ({
      version,
      listen: '127.0.0.1:0',
      admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
      store: backend.store(dir),
      providers: [{ id: 'up', adapter: 'mock' }],
      routes: [{ alias: 'chat', provider: 'up', model: 'mock-model' }],
      keys,
    });

    const call = async (method, p, body, { key = ADMIN_KEY, headers = {} } = {}) => {
      const res = await fetch(`${admin}${p}`, {
        method,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null, text };
    };
    const cli = (args) =>
      spawnSync(sluiceBin, [...args, '--admin-url', admin], {
        encoding: 'utf8',
        timeout: 15000,
        env: { ...process.env, SLUICE_ADMIN_KEY: ADMIN_KEY },
      });

    before(async () => {
      dir = makeTempDir('sluice-tenancy-admin-');
      gw = await startSluice(config(1, [{ name: `config-key-${run}`, group: 'research', key: GATEWAY_KEY }]), { dir });
      admin = `http://127.0.0.1:${gw.listening.admin_port}`;
    });

    after(async () => {
      await gw?.stop();
      removeTempDir(dir);
    });

    test('a model key or no key is refused', async () => {
      assert.equal((await call('GET', '/admin/v1/groups', undefined, { key: GATEWAY_KEY })).status, 401);
      assert.equal((await call('GET', '/admin/v1/keys', undefined, { key: null })).status, 401);
      const post = await call('POST', '/admin/v1/groups', { name: `x-${run}` }, { key: GATEWAY_KEY });
      assert.equal(post.status, 401);
      assert.equal((await call('GET', `/admin/v1/groups/x-${run}`)).status, 404, 'nothing was created');
    });

    test('groups and keys: create, read, update, revoke, delete', async () => {
      const created = await call('POST', '/admin/v1/groups', {
        name: team,
        description: 'R&D',
        budget: { amount_micros: 100_000_000, period: 'monthly', mode: 'hard' },
        rpm: 100,
        allowed_aliases: ['chat'],
      });
      assert.equal(created.status, 201, created.text);
      assert.equal(created.body.name, team);
      assert.equal(created.body.budget.amount_micros, 100_000_000);

      const key = await call('POST', '/admin/v1/keys', { name: `indexer-${run}`, group: team, allocation_micros: 30_000_000 });
      assert.equal(key.status, 201, key.text);
      assert.match(key.body.secret, /^sk-slc-[0-9A-Za-z]{40}$/);
      assert.equal(key.body.prefix, key.body.secret.slice(0, 11));
      const id = key.body.id;

      const got = await call('GET', `/admin/v1/keys/${id}`);
      assert.equal(got.status, 200);
      assert.equal(got.body.name, `indexer-${run}`);
      assert.equal(got.body.secret, undefined, 'the secret is shown once');
      assert.ok(!got.text.includes(key.body.secret));

      const listed = await call('GET', `/admin/v1/keys?group=${team}`);
      assert.deepEqual(listed.body.keys.map((k) => k.id), [id]);
      const group = await call('GET', `/admin/v1/groups/${team}`);
      assert.equal(group.body.allocated_micros, 30_000_000);

      const disabled = await call('PATCH', `/admin/v1/keys/${id}`, { status: 'disabled', rpm: 5 });
      assert.equal(disabled.status, 200, disabled.text);
      assert.equal(disabled.body.status, 'disabled');
      assert.equal(disabled.body.allocation_micros, 30_000_000, 'disabling keeps the allocation');

      const patched = await call('PATCH', `/admin/v1/groups/${team}`, { description: 'Research' });
      assert.equal(patched.body.description, 'Research');

      assert.equal((await call('DELETE', `/admin/v1/groups/${team}`)).status, 409, 'a key is not revoked');
      const revoked = await call('POST', `/admin/v1/keys/${id}/revoke`);
      assert.equal(revoked.status, 200, revoked.text);
      assert.equal(revoked.body.status, 'revoked');
      assert.equal(revoked.body.allocation_micros, null);
      const again = await call('PATCH', `/admin/v1/keys/${id}`, { status: 'active' });
      assert.equal(again.status, 409);
      assert.equal(again.body.error.code, 'key_revoked');
      assert.equal((await call('DELETE', `/admin/v1/groups/${team}`)).status, 200);
      assert.equal((await call('GET', `/admin/v1/groups/${team}`)).status, 404);
    });

    test('allocation rules and bad input answer with the right status', async () => {
      const g = `alloc-${run}`;
      assert.equal((await call('POST', '/admin/v1/groups', { name: g, budget: { amount_micros: 100 } })).status, 201);
      assert.equal((await call('POST', '/admin/v1/keys', { name: `a-${run}`, group: g, allocation_micros: 60 })).status, 201);
      const over = await call('POST', '/admin/v1/keys', { name: `b-${run}`, group: g, allocation_micros: 41 });
      assert.equal(over.status, 409);
      assert.equal(over.body.error.code, 'allocation_exceeds_budget');
      assert.match(over.body.error.message, /above its budget/);
      const shrink = await call('PATCH', `/admin/v1/groups/${g}`, { budget: { amount_micros: 59 } });
      assert.equal(shrink.status, 409);
      const scope = await call('POST', '/admin/v1/groups', { name: `scoped-${run}`, allowed_aliases: ['chat'] });
      assert.equal(scope.status, 201);
      const outside = await call('POST', '/admin/v1/keys', { name: `c-${run}`, group: `scoped-${run}`, allowed_aliases: ['image'] });
      assert.equal(outside.status, 422);
      assert.equal(outside.body.error.code, 'alias_out_of_scope');
      const taken = await call('POST', '/admin/v1/keys', { name: `config-key-${run}`, group: g });
      assert.equal(taken.status, 409, 'a config-file key name');
      assert.equal((await call('POST', '/admin/v1/keys', { name: `d-${run}`, group: 'no-such-group' })).status, 422);
      assert.equal((await call('POST', '/admin/v1/groups', '{not json')).status, 400);
      const unknown = await call('POST', '/admin/v1/groups', { name: `e-${run}`, colour: 'red' });
      assert.equal(unknown.status, 400);
      assert.match(unknown.body.error.message, /colour: unknown field/);
      assert.equal((await call('GET', '/admin/v1/keys/key_nope')).status, 404);
      // Amounts are int64 micro-units; JSON.stringify cannot write the largest one exactly.
      const max = '9223372036854775807';
      const huge = `huge-${run}`;
      assert.equal((await call('POST', '/admin/v1/groups', `{"name":"${huge}","budget":{"amount_micros":${max}}}`)).status, 201);
      const first = await call('POST', '/admin/v1/keys', `{"name":"h1-${run}","group":"${huge}","allocation_micros":${max}}`);
      assert.equal(first.status, 201, first.text);
      const wrapped = await call('POST', '/admin/v1/keys', `{"name":"h2-${run}","group":"${huge}","allocation_micros":${max}}`);
      assert.equal(wrapped.status, 422, wrapped.text);
      assert.equal(wrapped.body.error.code, 'amount_out_of_range');
      assert.match(wrapped.body.error.message, /would sum to more than 9223372036854\.775807/);
      assert.match((await call('GET', `/admin/v1/groups/${huge}`)).text, new RegExp(`"allocated_micros":${max}`));
      assert.equal((await call('PUT', `/admin/v1/groups/${g}`, {})).status, 405);
    });

    test('an Idempotency-Key retry gets the first answer without the secret', async () => {
      const g = `idem-${run}`;
      assert.equal((await call('POST', '/admin/v1/groups', { name: g })).status, 201);
      const body = { name: `idem-key-${run}`, group: g };
      const headers = { 'idempotency-key': `create-${run}` };
      const first = await call('POST', '/admin/v1/keys', body, { headers });
      assert.equal(first.status, 201, first.text);
      assert.ok(first.body.secret);
      const retry = await call('POST', '/admin/v1/keys', body, { headers });
      assert.equal(retry.status, 201);
      assert.equal(retry.body.id, first.body.id);
      assert.equal(retry.body.secret, null);
      assert.ok(retry.body.secret_note);
      const other = await call('POST', '/admin/v1/keys', { ...body, name: `other-${run}` }, { headers });
      assert.equal(other.status, 422);
      assert.equal(other.body.error.code, 'idempotency_key_reused');
      const keys = await call('GET', `/admin/v1/keys?group=${g}`);
      assert.equal(keys.body.keys.length, 1, 'the key was created once');
    });

    test('a group created with its keys under an Idempotency-Key stores and replays no secret', async () => {
      const g = `onboard-${run}`;
      const body = { name: g, keys: [{ name: `onboard-a-${run}` }, { name: `onboard-b-${run}` }] };
      const headers = { 'idempotency-key': `onboard-${run}` };
      const first = await call('POST', '/admin/v1/groups', body, { headers });
      assert.equal(first.status, 201, first.text);
      const secrets = first.body.keys.map((k) => k.secret);
      assert.equal(secrets.length, 2);
      for (const secret of secrets) {
        assert.match(secret, /^sk-slc-[0-9A-Za-z]{40}$/);
      }
      const stored = backend.sql(dir, `SELECT body FROM idempotency_keys WHERE key = 'onboard-${run}'`);
      assert.ok(stored.includes(first.body.keys[1].id), `the answer is stored: ${stored}`);
      const replay = await call('POST', '/admin/v1/groups', body, { headers });
      assert.equal(replay.status, 201, replay.text);
      for (const [i, secret] of secrets.entries()) {
        assert.ok(!stored.includes(secret), 'no secret in the idempotency table');
        assert.ok(!replay.text.includes(secret), 'no secret in the replay');
        assert.equal(replay.body.keys[i].id, first.body.keys[i].id);
        assert.equal(replay.body.keys[i].secret, null);
        assert.match(replay.body.keys[i].secret_note, /shown only in the first answer/);
      }
    });

    test('every change is in the audit log, newest first, without the secret', async () => {
      const g = `audit-${run}`;
      await call('POST', '/admin/v1/groups', { name: g });
      const key = await call('POST', '/admin/v1/keys', { name: `audited-${run}`, group: g }, { headers: { 'x-request-id': `req-${run}` } });
      await call('PATCH', `/admin/v1/keys/${key.body.id}`, { status: 'disabled' });
      await call('POST', `/admin/v1/keys/${key.body.id}/revoke`);
      const audit = await call('GET', `/admin/v1/audit?object_id=${key.body.id}&since=1h`);
      assert.equal(audit.status, 200, audit.text);
      assert.deepEqual(audit.body.entries.map((e) => e.action), ['key.revoke', 'key.disable', 'key.create']);
      const created = audit.body.entries[2];
      assert.equal(created.actor, 'admin');
      assert.equal(created.request_id, `req-${run}`);
      assert.equal(created.before, null);
      assert.equal(created.after.name, `audited-${run}`);
      assert.ok(!audit.text.includes(key.body.secret));
      assert.equal(audit.body.entries[1].before.status, 'active');
      assert.equal(audit.body.entries[1].after.status, 'disabled');
      const groupAudit = await call('GET', `/admin/v1/audit?object_type=group&object_id=${g}`);
      assert.deepEqual(groupAudit.body.entries.map((e) => e.action), ['group.create']);
      assert.equal((await call('GET', '/admin/v1/audit?since=yesterday')).status, 400);
    });

    test('a key name added to the config file by a reload is refused too', async () => {
      const g = `reload-${run}`;
      assert.equal((await call('POST', '/admin/v1/groups', { name: g })).status, 201);
      gw.reload(
        config(2, [
          { name: `config-key-${run}`, group: 'research', key: GATEWAY_KEY },
          { name: `late-${run}`, key: 'sk-sluice-late-key-0000000000003' },
        ]),
      );
      await waitFor(
        async () => {
          const res = await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
          return /^sluice_config_version 2$/m.test(await res.text());
        },
        { timeoutMs: 5000, message: 'config version 2 serving' },
      );
      const taken = await call('POST', '/admin/v1/keys', { name: `late-${run}`, group: g });
      assert.equal(taken.status, 409, taken.text);
      assert.equal(taken.body.error.code, 'name_taken');
    });

    test("a reload that brings a store key's name is refused, naming the store key", async () => {
      const g = `shared-${run}`;
      assert.equal((await call('POST', '/admin/v1/groups', { name: g })).status, 201);
      const key = await call('POST', '/admin/v1/keys', { name: `shared-key-${run}`, group: g });
      assert.equal(key.status, 201, key.text);
      await waitFor(
        async () => {
          const res = await fetch(`http://127.0.0.1:${gw.listening.port}/v1/models`, {
            headers: { authorization: `Bearer ${key.body.secret}` },
          });
          await res.text();
          return res.status === 200;
        },
        { timeoutMs: 5000, message: 'the store key is loaded' },
      );
      gw.reload(
        config(3, [
          { name: `config-key-${run}`, group: 'research', key: GATEWAY_KEY },
          { name: `late-${run}`, key: 'sk-sluice-late-key-0000000000003' },
          { name: `shared-key-${run}`, key: 'sk-sluice-shared-key-000000000004' },
        ]),
      );
      await waitFor(() => gw.stderr.includes('config reload rejected, still serving version 2'), {
        timeoutMs: 5000,
        message: 'the reload is refused',
      });
      assert.match(gw.stderr, new RegExp(`key name shared-key-${run} \\(.*\\) is the store key ${key.body.id}'s, in key group ${g}`));
      const res = await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
      assert.match(await res.text(), /^sluice_config_version 2$/m);
    });

    test('the CLI creates, lists, updates and revokes through the API', () => {
      const g = `cli-${run}`;
      const created = cli(['groups', 'create', g, '--budget', '10', '--rpm', '50', '--aliases', 'chat']);
      assert.equal(created.status, 0, created.stderr);
      assert.match(created.stdout, /NAME\s+BUDGET/);
      assert.match(created.stdout, new RegExp(`${g}\\s+10\\.000000\\s+monthly`));

      const key = cli(['keys', 'create', `cli-key-${run}`, '--group', g, '--allocation', '2.5', '--json']);
      assert.equal(key.status, 0, key.stderr);
      const made = JSON.parse(key.stdout);
      assert.match(made.secret, /^sk-slc-/);
      assert.equal(made.allocation_micros, 2_500_000);

      const table = cli(['keys', 'create', `cli-key2-${run}`, '--group', g]);
      assert.equal(table.status, 0, table.stderr);
      assert.match(table.stdout, /secret: sk-slc-[0-9A-Za-z]{40}\n/);

      const over = cli(['keys', 'update', made.id, '--allocation', '10.000001']);
      assert.equal(over.status, 1);
      assert.match(over.stderr, /allocation_exceeds_budget, HTTP 409/);

      assert.equal(cli(['keys', 'disable', made.id]).status, 0);
      const listed = cli(['keys', 'list', '--group', g]);
      assert.equal(listed.status, 0, listed.stderr);
      assert.match(listed.stdout, new RegExp(`${made.id}\\s+cli-key-${run}\\s+${g}\\s+sk-slc-\\S+\\s+disabled\\s+2\\.500000`));
      assert.ok(!listed.stdout.includes(made.secret));
      assert.equal(cli(['keys', 'enable', made.id]).status, 0);
      const rotated = cli(['keys', 'rotate', made.id, '--json']);
      assert.equal(rotated.status, 0, rotated.stderr);
      const fresh = JSON.parse(rotated.stdout);
      assert.equal(fresh.id, made.id);
      assert.match(fresh.secret, /^sk-slc-/);
      assert.notEqual(fresh.secret, made.secret);
      assert.equal(cli(['keys', 'revoke', made.id]).status, 0);
      const json = JSON.parse(cli(['keys', 'list', '--group', g, '--json']).stdout);
      assert.equal(json.keys.find((k) => k.id === made.id).status, 'revoked');

      const groups = cli(['groups', 'list']);
      assert.match(groups.stdout, new RegExp(`${g}\\s+10\\.000000`));
      const noKey = spawnSync(sluiceBin, ['groups', 'list', '--admin-url', admin], {
        encoding: 'utf8',
        env: { ...process.env, SLUICE_ADMIN_KEY: '' },
      });
      assert.equal(noKey.status, 2);
      assert.match(noKey.stderr, /SLUICE_ADMIN_KEY/);
      const bad = cli(['groups', 'create', `bad-${run}`, '--budget', 'lots']);
      assert.equal(bad.status, 2);
      assert.match(bad.stderr, /--budget: expected an amount/);
    });
  });
}
