// Keys and budgets from the store in the data plane, against the real binary: a key created
// through the admin API works on every instance sharing the store, and once revoked on one it is
// refused (401 "API key revoked") on all of them within a bounded wait; a hard monthly budget
// refuses (429 insufficient_quota) once the spend reaches it; an advisory budget POSTs one event
// at 80 % and one at 100 % to a webhook receiver run by the test.
//
// SQLite: one instance. PostgreSQL (SLUICE_TEST_POSTGRES_URL, scripts/test-services.sh): two
// instances sharing the database. Names carry a per-run suffix: the database is shared with other
// suites. Prices come from a test catalogue (mock-model at 1000 per million tokens each way), so a
// request costs about 1000 micro-units a token and a few requests exceed a small budget.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';

import { makeTempDir, removeTempDir, startSluice, waitFor } from '../support/harness.mjs';

const ADMIN_KEY = 'sluice-admin-key-for-dataplane-0123456789';
const PRICES = `catalogue: tenancy-test
date: "2026-01-01"
versions:
  - id: "2026-01-01"
    effective_from: 2026-01-01T00:00:00Z
    prices:
      - { adapter: mock, model: mock-model, input: 1000, output: 1000 }
`;

const backends = [{ name: 'sqlite', instances: 1, store: (dir) => ({ sqlite: path.join(dir, 'tenancy.db') }) }];
if (process.env.SLUICE_TEST_POSTGRES_URL) {
  backends.push({ name: 'postgres', instances: 2, store: () => ({ postgres: process.env.SLUICE_TEST_POSTGRES_URL }) });
}

// One admin API call with the admin key; the parsed answer (fails the test on a non-2xx).
async function adminCall(admin, method, p, body) {
  const res = await fetch(`${admin}${p}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  assert.ok(res.status < 300, `${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// A webhook receiver: every POST body, parsed.
async function startReceiver() {
  const events = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      events.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { events, url: `http://127.0.0.1:${server.address().port}/budget`, stop: () => new Promise((r) => server.close(r)) };
}

for (const backend of backends) {
  describe(`store keys in the data plane (${backend.name}, ${backend.instances} instance(s))`, () => {
    const run = `${process.pid}-${Date.now() % 1e8}`;
    const gws = [];
    let dir;
    let receiver;
    let admin;

    const call = (...args) => adminCall(admin, ...args);
    const chat = async (gw, secret) => {
      const res = await fetch(`${gw.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hello there' }] }),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
    };
    const metric = async (gw, name) => {
      const res = await fetch(`http://127.0.0.1:${gw.listening.admin_port}/metrics`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.split(' ')[1]);
    };
    // A group and a key in it; the key's secret, once the key works on every instance.
    const groupWithKey = async (name, budget) => {
      await call('POST', '/admin/v1/groups', { name, allowed_aliases: ['chat'], ...(budget ? { budget } : {}) });
      const key = await call('POST', '/admin/v1/keys', { name: `${name}-key`, group: name });
      for (const gw of gws) {
        await waitFor(async () => (await chat(gw, key.secret)).status === 200, {
          timeoutMs: 5000,
          message: `the new key works on instance ${gws.indexOf(gw)}`,
        });
      }
      return key;
    };

    before(async () => {
      dir = makeTempDir('sluice-tenancy-dataplane-');
      receiver = await startReceiver();
      const prices = path.join(dir, 'prices.yaml');
      writeFileSync(prices, PRICES);
      for (let i = 0; i < backend.instances; i++) {
        gws.push(
          await startSluice(
            {
              version: 1,
              listen: '127.0.0.1:0',
              admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
              store: backend.store(dir),
              metering: { prices, flush_interval_ms: 20 },
              tenancy: {
                refresh_ms: 100,
                spend_refresh_ms: 200,
                budget_thresholds: [80, 100],
                budget_webhook: { url: receiver.url, timeout_ms: 1000 },
              },
              providers: [{ id: 'up', adapter: 'mock' }],
              routes: [{ alias: 'chat', provider: 'up', model: 'mock-model' }],
            },
            { dir: makeTempDir('sluice-tenancy-instance-') },
          ),
        );
      }
      admin = `http://127.0.0.1:${gws[0].listening.admin_port}`;
    });

    after(async () => {
      for (const gw of gws) {
        await gw.stop();
      }
      await receiver?.stop();
      removeTempDir(dir);
    });

    test('a revoked key is refused on every instance within a bounded wait', async () => {
      const key = await groupWithKey(`revoke-${run}`);
      const ok = await chat(gws[0], key.secret);
      assert.equal(ok.status, 200);
      const started = performance.now();
      await call('POST', `/admin/v1/keys/${key.id}/revoke`);
      for (const gw of gws) {
        await waitFor(async () => (await chat(gw, key.secret)).status === 401, {
          timeoutMs: 5000,
          message: `instance ${gws.indexOf(gw)} refuses the revoked key`,
        });
      }
      const refused = await chat(gws.at(-1), key.secret);
      assert.equal(refused.body.error.message, 'API key revoked');
      assert.equal(refused.body.error.code, 'key_revoked');
      assert.equal(refused.body.error.type, 'authentication_error');
      assert.equal(refused.headers.get('x-should-retry'), 'false');
      assert.ok(performance.now() - started < 5000);
      // A secret never issued says nothing more than that.
      const unknown = await chat(gws[0], `sk-slc-${'0'.repeat(40)}`);
      assert.equal(unknown.status, 401);
      assert.equal(unknown.body.error.message, 'invalid API key');
      for (const gw of gws) {
        assert.equal(await metric(gw, 'sluice_tenancy_refresh_ok'), 1);
      }
    });

    test('a hard monthly budget refuses once the spend reaches it', async () => {
      const budget = 60_000; // a request costs ~10 000-20 000 (see PRICES)
      const key = await groupWithKey(`hard-${run}`, { amount_micros: budget, period: 'monthly', mode: 'hard' });
      let admitted = 1; // groupWithKey's first request per instance
      let spent = 0;
      let refusal;
      for (let i = 0; i < 30 && !refusal; i++) {
        const r = await chat(gws[i % gws.length], key.secret);
        if (r.status === 429) {
          refusal = r;
        } else {
          assert.equal(r.status, 200);
          admitted++;
          spent += (r.body.usage.prompt_tokens + r.body.usage.completion_tokens) * 1000;
        }
      }
      assert.ok(refusal, 'refused within 30 requests');
      assert.ok(admitted >= 2, `some requests fit the budget (admitted ${admitted})`);
      assert.equal(refusal.body.error.type, 'insufficient_quota');
      assert.equal(refusal.body.error.code, 'insufficient_quota');
      assert.match(refusal.body.error.message, new RegExp(`budget exhausted: key group hard-${run}`));
      assert.match(refusal.body.error.message, /this month \(UTC; period/);
      assert.equal(refusal.headers.get('x-should-retry'), 'false');
      // Refused at entry: nothing of it reached the upstream, and it stays refused.
      assert.equal((await chat(gws[0], key.secret)).status, 429);
      assert.ok(spent + 20_000 * gws.length >= budget, 'refused only once the budget was (nearly) spent');
    });

    test('an advisory budget never refuses and posts one event at 80 % and one at 100 %', async () => {
      const budget = 50_000;
      const group = `advisory-${run}`;
      const key = await groupWithKey(group, { amount_micros: budget, period: 'monthly', mode: 'advisory' });
      const mine = () => receiver.events.filter((e) => e.group === group);
      for (let i = 0; i < 8; i++) {
        assert.equal((await chat(gws[0], key.secret)).status, 200, 'advisory: never refused');
      }
      await waitFor(() => mine().length >= 2 * gws.length, {
        timeoutMs: 5000,
        message: 'the 80 % and 100 % events of every instance',
      });
      // One more change to the store: once every instance serves its revision, each has
      // refreshed (and announced) at least once more.
      await call('PATCH', `/admin/v1/groups/${group}`, { description: 'checked' });
      const revision = await metric(gws[0], 'sluice_tenancy_revision');
      for (const gw of gws) {
        await waitFor(async () => (await metric(gw, 'sluice_tenancy_revision')) >= revision, { timeoutMs: 5000 });
      }
      const events = mine();
      assert.equal(events.length, 2 * gws.length, JSON.stringify(events));
      for (const threshold of [80, 100]) {
        const at = events.filter((e) => e.threshold_percent === threshold);
        assert.equal(at.length, gws.length, `one ${threshold} % event per instance`);
        for (const e of at) {
          assert.equal(e.type, 'budget.threshold');
          assert.equal(e.subject, 'group');
          assert.equal(e.mode, 'advisory');
          assert.equal(e.period, 'monthly');
          assert.equal(e.amount_micros, budget);
          assert.ok(e.spent_micros * 100 >= threshold * budget, JSON.stringify(e));
          assert.match(e.period_start, /^\d{4}-\d{2}-01T00:00:00Z$/);
        }
      }
    });
  });
}

// Rate limits of store keys: the store's quotas (a group's rpm) and the config's default key
// limit (`limits.key`) both apply to keys from the store. One SQLite instance of its own, so no
// other test spends these buckets; keys are awaited through GET /v1/models, which authenticates
// without charging any limit.
describe('rate limits of store keys (sqlite, 1 instance)', () => {
  const run = `${process.pid}-${Date.now() % 1e8}`;
  const KEY_RPM = 5;
  let gw;
  let dir;
  let admin;

  const call = (...args) => adminCall(admin, ...args);
  const chat = async (secret) => {
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  // A key in `group` (with `fields`, e.g. its own rpm), once the instance knows it.
  const keyIn = async (group, fields = {}) => {
    const key = await call('POST', '/admin/v1/keys', { name: `${group}-key`, group, ...fields });
    await waitFor(
      async () => {
        const res = await fetch(`${gw.baseUrl}/models`, { headers: { authorization: `Bearer ${key.secret}` } });
        await res.text();
        return res.status === 200;
      },
      { timeoutMs: 5000, message: 'the new key is known to the instance' },
    );
    return key;
  };
  // Requests until the first refusal (at most `max`): how many passed, and the refusal.
  const untilRefused = async (secret, max) => {
    for (let i = 0; i < max; i++) {
      const r = await chat(secret);
      if (r.status !== 200) {
        return { admitted: i, refused: r };
      }
    }
    return { admitted: max, refused: null };
  };

  before(async () => {
    dir = makeTempDir('sluice-tenancy-limits-');
    gw = await startSluice(
      {
        version: 1,
        listen: '127.0.0.1:0',
        admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
        store: { sqlite: path.join(dir, 'tenancy.db') },
        tenancy: { refresh_ms: 100 },
        limits: { key: { rpm: KEY_RPM } },
        providers: [{ id: 'up', adapter: 'mock' }],
        routes: [{ alias: 'chat', provider: 'up', model: 'mock-model' }],
      },
      { dir: makeTempDir('sluice-tenancy-limits-instance-') },
    );
    admin = `http://127.0.0.1:${gw.listening.admin_port}`;
  });

  after(async () => {
    await gw?.stop();
    removeTempDir(dir);
  });

  test("a key group's rpm quota from the store refuses the 4th request within the minute", async () => {
    const group = `quota-${run}`;
    await call('POST', '/admin/v1/groups', { name: group, allowed_aliases: ['chat'], rpm: 3 });
    const key = await keyIn(group);
    const { admitted, refused } = await untilRefused(key.secret, 10);
    assert.equal(admitted, 3);
    assert.equal(refused.status, 429);
    assert.match(refused.body.error.message, new RegExp(`key group ${group}: requests per minute \\(limit 3\\)`));
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  });

  test('limits.key of the config applies to a store key without a quota of its own', async () => {
    const group = `plain-${run}`;
    await call('POST', '/admin/v1/groups', { name: group, allowed_aliases: ['chat'] });
    const key = await keyIn(group);
    const { admitted, refused } = await untilRefused(key.secret, KEY_RPM + 5);
    assert.equal(admitted, KEY_RPM);
    assert.equal(refused.status, 429);
    assert.match(refused.body.error.message, new RegExp(`key ${group}-key: requests per minute \\(limit ${KEY_RPM}\\)`));
  });

  test("a store key's own rpm quota is charged in place of limits.key", async () => {
    const group = `own-${run}`;
    await call('POST', '/admin/v1/groups', { name: group, allowed_aliases: ['chat'] });
    const key = await keyIn(group, { rpm: 2 });
    const { admitted, refused } = await untilRefused(key.secret, KEY_RPM + 5);
    assert.equal(admitted, 2);
    assert.match(refused.body.error.message, new RegExp(`key ${group}-key: requests per minute \\(limit 2\\)`));
  });
});

// /readyz holds an instance back until its key directory tried the store once; a store that is
// down at start must not hold it back for ever: ready after that one try, with a warning.
test('with the store down at start, /readyz is 200 after the first attempt and the failure is logged', async () => {
  // A port nothing listens on: bound, then closed.
  const probe = createServer();
  await new Promise((r) => probe.listen(0, '127.0.0.1', r));
  const deadPort = probe.address().port;
  await new Promise((r) => probe.close(r));
  const dir = makeTempDir('sluice-tenancy-down-');
  const gw = await startSluice(
    {
      version: 1,
      listen: '127.0.0.1:0',
      store: { postgres: `postgresql://sluice@127.0.0.1:${deadPort}/none` },
      tenancy: { refresh_ms: 60000 },
      providers: [{ id: 'up', adapter: 'mock' }],
      routes: [{ alias: 'chat', provider: 'up', model: 'mock-model' }],
    },
    { dir },
  );
  try {
    // refresh_ms is a minute: ready within the wait means the first (failed) try counted.
    const ready = await waitFor(
      async () => {
        const res = await fetch(`${gw.url}/readyz`);
        const body = await res.json();
        return res.status === 200 ? body : undefined;
      },
      { timeoutMs: 10000, message: '/readyz 200 with the store down' },
    );
    assert.equal(ready.status, 'ready');
    assert.match(gw.stderr, /cannot load keys from the store at start/);
  } finally {
    await gw.stop();
    removeTempDir(dir);
  }
});

// The "done means": a platform team creates a key group with RPM and TPM limits and a
// monthly budget in the store, issues keys to two applications, and runs two instances sharing
// PostgreSQL (keys, groups, usage) and Redis (buckets): the group's limit holds across both
// instances and both keys, not once per instance.
describe(
  'one key group, two applications, two instances sharing PostgreSQL and Redis',
  {
    skip:
      !(process.env.SLUICE_TEST_POSTGRES_URL && process.env.SLUICE_TEST_REDIS_URL) &&
      'SLUICE_TEST_POSTGRES_URL and SLUICE_TEST_REDIS_URL are not both set',
  },
  () => {
    const run = `${process.pid}-${Date.now() % 1e8}`;
    const GROUP_RPM = 10;
    const gws = [];
    let admin;

    before(async () => {
      for (let i = 0; i < 2; i++) {
        gws.push(
          await startSluice(
            {
              version: 1,
              listen: '127.0.0.1:0',
              admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
              store: { postgres: process.env.SLUICE_TEST_POSTGRES_URL },
              metering: { flush_interval_ms: 20 },
              tenancy: { refresh_ms: 100 },
              state: { redis: { url: process.env.SLUICE_TEST_REDIS_URL, timeout_ms: 50, key_prefix: `t${run}:` } },
              providers: [{ id: 'up', adapter: 'mock' }],
              routes: [{ alias: 'chat', provider: 'up', model: 'mock-model' }],
            },
            { dir: makeTempDir('sluice-tenancy-fleet-') },
          ),
        );
      }
      admin = `http://127.0.0.1:${gws[0].listening.admin_port}`;
    });

    after(async () => {
      for (const gw of gws) {
        await gw.stop();
      }
    });

    test('the group rpm is one limit for both keys on both instances', async () => {
      const group = `fleet-${run}`;
      await adminCall(admin, 'POST', '/admin/v1/groups', {
        name: group,
        allowed_aliases: ['chat'],
        rpm: GROUP_RPM,
        tpm: 1_000_000,
        budget: { amount_micros: 100_000_000, period: 'monthly', mode: 'hard', time_zone: 'Europe/Berlin' },
      });
      const apps = [];
      for (const app of ['search', 'support']) {
        apps.push(await adminCall(admin, 'POST', '/admin/v1/keys', { name: `${group}-${app}`, group }));
      }
      // Known everywhere (GET /v1/models authenticates without charging a limit).
      for (const gw of gws) {
        for (const key of apps) {
          await waitFor(
            async () => {
              const res = await fetch(`${gw.baseUrl}/models`, { headers: { authorization: `Bearer ${key.secret}` } });
              await res.text();
              return res.status === 200;
            },
            { timeoutMs: 5000, message: 'every key known to every instance' },
          );
        }
      }
      // 3x the limit, alternating instances and applications, as fast as they answer.
      const statuses = [];
      let refusal;
      for (let i = 0; i < 3 * GROUP_RPM; i++) {
        const res = await fetch(`${gws[i % 2].baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apps[(i >> 1) % 2].secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hi' }] }),
        });
        const text = await res.text();
        statuses.push(res.status);
        if (res.status === 429) {
          refusal ??= JSON.parse(text);
        }
      }
      const admitted = statuses.filter((s) => s === 200).length;
      // The bucket refills GROUP_RPM a minute: one more may fit if the run takes over 6 s.
      assert.ok(admitted >= GROUP_RPM && admitted <= GROUP_RPM + 1, `admitted ${admitted}: ${statuses.join(',')}`);
      assert.equal(statuses.filter((s) => s === 429).length, statuses.length - admitted);
      assert.match(refusal.error.message, new RegExp(`key group ${group}: requests per minute \\(limit ${GROUP_RPM}\\)`));
      // Both instances refused some: the limit was shared, not enforced twice.
      for (const half of [0, 1]) {
        assert.ok(statuses.some((s, i) => i % 2 === half && s === 429), `instance ${half} refused some`);
      }
    });
  },
);

// A renamed store key keeps its budget: spend counts by the key's id, so an allocation drained
// before the rename stays drained after it and after a restart (the accounts then come from the
// ledger alone), and the group's pool paid none of it. SQLite, one instance restarted on the
// same store.
describe('a renamed key keeps its budget across a restart (sqlite, 1 instance)', () => {
  const run = `${process.pid}-${Date.now() % 1e8}`;
  let dir;
  let gw;
  let admin;

  const call = (...args) => adminCall(admin, ...args);
  const chat = async (secret) => {
    const res = await fetch(`${gw.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat', messages: [{ role: 'user', content: 'hello there' }] }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const start = async () => {
    gw = await startSluice(
      {
        version: 1,
        listen: '127.0.0.1:0',
        admin: { listen: '127.0.0.1:0', key: ADMIN_KEY },
        store: { sqlite: path.join(dir, 'tenancy.db') },
        metering: { prices: path.join(dir, 'prices.yaml'), flush_interval_ms: 20 },
        tenancy: { refresh_ms: 100, spend_refresh_ms: 200 },
        providers: [{ id: 'up', adapter: 'mock' }],
        routes: [{ alias: 'chat', provider: 'up', model: 'mock-model' }],
      },
      { dir: makeTempDir('sluice-tenancy-rename-instance-') },
    );
    admin = `http://127.0.0.1:${gw.listening.admin_port}`;
  };

  before(async () => {
    dir = makeTempDir('sluice-tenancy-rename-');
    writeFileSync(path.join(dir, 'prices.yaml'), PRICES);
    await start();
  });

  after(async () => {
    await gw?.stop();
    removeTempDir(dir);
  });

  test('an allocation drained before a rename stays drained after it and a restart', async () => {
    const group = `renamed-${run}`;
    await call('POST', '/admin/v1/groups', {
      name: group,
      allowed_aliases: ['chat'],
      budget: { amount_micros: 1_000_000, mode: 'hard' },
    });
    const key = await call('POST', '/admin/v1/keys', { name: `before-${run}`, group, allocation_micros: 30_000 });
    const pool = await call('POST', '/admin/v1/keys', { name: `pool-${run}`, group });
    await waitFor(async () => (await chat(pool.secret)).status === 200, { timeoutMs: 5000, message: 'the keys are known' });
    let refusal;
    for (let i = 0; i < 20 && !refusal; i++) {
      const r = await chat(key.secret);
      if (r.status === 429) {
        refusal = r;
      } else {
        assert.equal(r.status, 200);
      }
    }
    assert.ok(refusal, 'the allocation is drained within 20 requests');
    assert.match(refusal.body.error.message, new RegExp(`key before-${run} \\(its allocation`));

    await call('PATCH', `/admin/v1/keys/${key.id}`, { name: `after-${run}` });
    await waitFor(
      async () => {
        const r = await chat(key.secret);
        assert.equal(r.status, 429, 'still drained once renamed');
        return r.body.error.message.includes(`key after-${run} (its allocation`);
      },
      { timeoutMs: 5000, message: 'the rename is seen' },
    );

    await gw.stop();
    await start();
    await waitFor(async () => (await chat(pool.secret)).status === 200, {
      timeoutMs: 5000,
      message: 'the pool admits after the restart: it paid nothing of the allocation',
    });
    const again = await chat(key.secret);
    assert.equal(again.status, 429, 'a drained allocation stays drained after a rename and a restart');
    assert.match(again.body.error.message, new RegExp(`key after-${run} \\(its allocation`));
  });
});
