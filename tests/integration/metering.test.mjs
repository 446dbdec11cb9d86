// Usage records end to end: the real binary, sluice-mock-upstream and a real SQLite file.
//   1. Requests of every kind (non-stream, stream, failing upstream, fallback, a caller leaving
//      mid-stream, a truncated answer, another protocol) leave exactly one record each, with
//      the fields the request had; health checks, model lists and refused requests leave none.
//   2. No loss: under steady load the database is locked for 10 s (another sqlite3 process in
//      an exclusive transaction), then the gateway is SIGKILLed with records in its spool and
//      restarted on it; at the end the records stored equal the responses the client got.
// The database is read with the sqlite3 CLI. Bounded waits only.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  PROVIDER_KEY,
  makeTempDir,
  removeTempDir,
  sleep,
  startMock,
  sluiceBin,
  startSluice,
  waitFor,
  withTimeout,
} from '../support/harness.mjs';

const sqliteAvailable = spawnSync('sqlite3', ['-version']).status === 0;

function sql(db, query) {
  const r = spawnSync('sqlite3', ['-json', '-cmd', '.timeout 2000', db, query], {
    encoding: 'utf8',
    timeout: 10000,
  });
  if (r.status !== 0) {
    throw new Error(`sqlite3 failed: ${r.stderr}`);
  }
  return r.stdout.trim() === '' ? [] : JSON.parse(r.stdout);
}

// The SQLite ledger keeps records in segments (src/store/usage_segment.h): counted by the
// segments' record counts, read whole through `sluice usage export`.
const countRecords = (db) =>
  existsSync(db) ? sql(db, 'SELECT coalesce(sum(records), 0) AS n FROM usage_segments')[0].n : 0;

function exportRecords(db) {
  const r = spawnSync(sluiceBin, ['usage', 'export', '--store', `sqlite:${db}`], {
    encoding: 'utf8',
    timeout: 10000,
    maxBuffer: 256 << 20,
  });
  if (r.status !== 0) {
    throw new Error(`sluice usage export failed (${r.error ?? r.status}): ${r.stderr}`);
  }
  return r.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

// Frames in a spool file (magic "SLSP", u32 length, u32 CRC, payload), as the gateway wrote them.
function spoolFrames(file) {
  if (!existsSync(file)) {
    return 0;
  }
  const buf = readFileSync(file);
  let n = 0;
  for (let at = 0; at + 12 <= buf.length; ) {
    if (buf.toString('latin1', at, at + 4) !== 'SLSP') {
      break;
    }
    const len = buf.readUInt32LE(at + 4);
    if (at + 12 + len > buf.length) {
      break;
    }
    at += 12 + len;
    n += 1;
  }
  return n;
}

// Holds an exclusive write transaction on `db` from another process until release().
async function lockDatabase(db) {
  const proc = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout.setEncoding('utf8');
  proc.stdout.on('data', (d) => (out += d));
  const exited = new Promise((r) => proc.on('exit', r));
  proc.stdin.write('.timeout 10000\nBEGIN EXCLUSIVE;\nSELECT \'locked\';\n');
  await waitFor(() => out.includes('locked'), { timeoutMs: 15000, message: 'exclusive lock taken' });
  return {
    async release() {
      proc.stdin.end('COMMIT;\n.quit\n');
      await withTimeout(exited, 5000, 'sqlite3 lock holder exit');
    },
  };
}

const provider = (id, mock, headers = {}) => ({
  id,
  adapter: 'openai',
  base_url: mock.baseUrl,
  api_key: PROVIDER_KEY,
  headers,
  forward_headers: ['x-mock-*'],
});

function meteringConfig(mock, dir, extra = {}) {
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 2, drain_timeout_ms: 5000 },
    store: { sqlite: path.join(dir, 'usage.db') },
    metering: { spool: path.join(dir, 'usage.spool'), flush_interval_ms: 20, ...(extra.metering ?? {}) },
    providers: [
      provider('good', mock),
      provider('fail503', mock, { 'x-mock-status': '503' }),
      provider('fail500', mock, { 'x-mock-status': '500' }),
    ],
    routes: [
      { alias: 'chat', provider: 'good', model: 'mock-model' },
      { alias: 'ha', targets: [{ provider: 'fail503', model: 'first-model' }, { provider: 'good', model: 'second-model' }] },
      { alias: 'broken', provider: 'fail500', model: 'mock-model', retry: { per_target_attempts: 1 } },
      { alias: 'embed', kind: 'embeddings', provider: 'good', model: 'mock-embed-model' },
    ],
    keys: [{ name: 'team-a', key: GATEWAY_KEY }],
  };
}

const auth = { authorization: `Bearer ${GATEWAY_KEY}`, 'content-type': 'application/json' };
const chat = (model, extra = {}) =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there, gateway' }], ...extra });

async function post(gw, p, body, headers = {}, signal) {
  const res = await fetch(`${gw.url}${p}`, { method: 'POST', headers: { ...auth, ...headers }, body, signal });
  const text = await res.text();
  return { status: res.status, text, headers: res.headers };
}

describe('usage records', { skip: !sqliteAvailable && 'sqlite3 CLI not installed' }, () => {
  let mock;
  let dir;
  before(async () => {
    mock = await startMock();
    dir = makeTempDir('sluice-metering-');
  });
  after(async () => {
    await mock?.stop();
    removeTempDir(dir);
  });

  test('one record per model call, with the fields of the request', async () => {
    const gw = await startSluice(meteringConfig(mock, dir), { dir });
    const db = path.join(dir, 'usage.db');
    const sent = {};
    try {
      // Not model calls: no record.
      assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
      assert.equal((await fetch(`${gw.url}/v1/models`, { headers: auth })).status, 200);
      assert.equal((await post(gw, '/v1/chat/completions', chat('chat'), { authorization: 'Bearer wrong' })).status, 401);
      assert.equal((await post(gw, '/v1/chat/completions', chat('no-such-model'))).status, 404);

      let r = await post(gw, '/v1/chat/completions', chat('chat'), { 'x-sluice-feature': 'search box\tv2' });
      assert.equal(r.status, 200);
      sent.plain = r.headers.get('x-request-id');

      r = await post(gw, '/v1/chat/completions', chat('chat', { stream: true, stream_options: { include_usage: true } }), {
        'x-sluice-feature': 'x'.repeat(200),
        'x-mock-events': '5',
      });
      assert.equal(r.status, 200);
      assert.match(r.text, /\[DONE\]/);
      sent.stream = r.headers.get('x-request-id');

      r = await post(gw, '/v1/chat/completions', chat('broken'));
      assert.equal(r.status, 500);
      sent.failed = r.headers.get('x-request-id');

      r = await post(gw, '/v1/chat/completions', chat('ha'));
      assert.equal(r.status, 200);
      sent.fallback = r.headers.get('x-request-id');

      r = await post(gw, '/v1/chat/completions', chat('chat', { stream: true }), {
        'x-mock-fixture': 'chat-stream-finish-length-usage',
      });
      assert.equal(r.status, 200);
      sent.truncated = r.headers.get('x-request-id');

      r = await post(
        gw,
        '/v1/messages',
        JSON.stringify({ model: 'chat', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
        { 'anthropic-version': '2023-06-01' },
      );
      assert.equal(r.status, 200);
      sent.anthropic = r.headers.get('x-request-id');

      r = await post(gw, '/v1/embeddings', JSON.stringify({ model: 'embed', input: 'some text' }));
      assert.equal(r.status, 200);
      sent.embed = r.headers.get('x-request-id');

      // The caller leaves after the first event of a slow stream.
      const abort = new AbortController();
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...auth, 'x-mock-events': '50', 'x-mock-pace-ms': '100' },
        body: chat('chat', { stream: true }),
        signal: abort.signal,
      });
      sent.gone = res.headers.get('x-request-id');
      const reader = res.body.getReader();
      await reader.read();
      abort.abort();
      await reader.read().catch(() => {});

      for (const id of Object.values(sent)) {
        assert.ok(id, 'every response has an x-request-id');
      }
      const expected = Object.keys(sent).length;
      await waitFor(() => countRecords(db) === expected, { timeoutMs: 5000, message: `${expected} records` });
    } finally {
      assert.equal(await gw.stop(), 0);
    }

    const rows = exportRecords(db);
    assert.equal(rows.length, Object.keys(sent).length, 'exactly one record per model call, none for the rest');
    const by = Object.fromEntries(Object.entries(sent).map(([k, id]) => [k, rows.find((x) => x.request_id === id)]));
    for (const [k, row] of Object.entries(by)) {
      assert.ok(row, `record for ${k}`);
      assert.equal(row.key_name, 'team-a');
      assert.ok(row.ended_at_ms >= row.started_at_ms);
      assert.ok(row.total_us > 0 && row.overhead_us >= 0 && row.overhead_us <= row.total_us, `${k} timings`);
      assert.ok(row.record_id.length > 0);
    }
    assert.equal(new Set(rows.map((x) => x.record_id)).size, rows.length, 'record ids are unique');

    const plain = by.plain;
    assert.equal(plain.feature, 'search_box_v2');
    assert.equal(plain.alias, 'chat');
    assert.equal(plain.provider, 'good');
    assert.equal(plain.model, 'mock-model');
    assert.equal(plain.outcome, 'complete');
    assert.equal(plain.status, 200);
    assert.equal(plain.stream, false);
    assert.equal(plain.usage_reported, true);
    assert.equal(plain.output_tokens, 10); // 8 words + 2
    assert.ok(plain.input_tokens > 0);
    assert.equal(plain.finish_reason, 'stop');
    assert.equal(plain.operation, 'chat');
    assert.ok(plain.upstream_ttfb_us >= 0);
    assert.equal(plain.ttft_us, -1);
    assert.ok(plain.output_tokens_per_s_milli > 0);
    assert.equal(plain.attempts.length, 1);

    const stream = by.stream;
    assert.equal(stream.feature, 'x'.repeat(64), 'cut to metering.max_feature_length');
    assert.equal(stream.stream, true);
    assert.equal(stream.outcome, 'complete');
    assert.equal(stream.output_tokens, 7);
    assert.ok(stream.ttft_us > 0 && stream.ttft_us <= stream.total_us);

    const failed = by.failed;
    assert.equal(failed.outcome, 'upstream_error');
    assert.equal(failed.status, 500);
    assert.equal(failed.error_class, 'upstream_status');
    assert.equal(failed.usage_reported, false);
    const failedAttempts = failed.attempts;
    assert.equal(failedAttempts.length, 1);
    assert.equal(failedAttempts[0].status, 500);

    const fallback = by.fallback;
    const attempts = fallback.attempts;
    assert.equal(attempts.length, 2);
    assert.equal(attempts[0].provider, 'fail503');
    assert.equal(attempts[0].status, 503);
    assert.equal(attempts[0].error_class, 'upstream_status');
    assert.equal(attempts[1].provider, 'good');
    assert.equal(attempts[1].status, 200);
    assert.equal(fallback.provider, 'good', 'the provider that answered');
    assert.equal(fallback.model, 'second-model');
    assert.equal(fallback.outcome, 'complete');
    const upstreamUs = attempts.reduce((s, a) => s + a.duration_us, 0);
    assert.ok(fallback.overhead_us <= fallback.total_us - upstreamUs + 1, 'overhead excludes upstream time');

    assert.equal(by.truncated.outcome, 'truncated');
    assert.equal(by.truncated.finish_reason, 'length');

    assert.equal(by.anthropic.ingress, 'anthropic_messages');
    assert.equal(by.anthropic.outcome, 'complete');
    assert.equal(by.embed.operation, 'embeddings');
    assert.ok(by.embed.input_tokens > 0);

    assert.equal(by.gone.outcome, 'client_gone');
    assert.equal(by.gone.stream, true);

    // Priced or unaccounted, never a silent zero.
    for (const row of rows) {
      if (row.priced) {
        assert.ok(row.price_version.length > 0);
      } else {
        assert.equal(row.cost_micros, 0);
      }
    }
  });
});

describe('a record the store refuses', { skip: !sqliteAvailable && 'sqlite3 CLI not installed' }, () => {
  let mock;
  let dir;
  before(async () => {
    mock = await startMock();
    dir = makeTempDir('sluice-metering-refused-');
  });
  after(async () => {
    await mock?.stop();
    removeTempDir(dir);
  });

  // An upstream reporting 2^64 - 1 input tokens: no store keeps the number (both refuse above
  // 2^63 - 1). Before, that refusal failed the record's batch on every write and every replay,
  // so nothing after it reached the ledger; now it is set aside and the rest stored.
  test('is set aside whole; the records of its batch and after it are stored', async () => {
    const absurd =
      '{"id":"chatcmpl-absurd","object":"chat.completion","created":1,"model":"mock-model",' +
      '"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],' +
      '"usage":{"prompt_tokens":18446744073709551615,"completion_tokens":1,"total_tokens":18446744073709551615}}';
    const config = meteringConfig(mock, dir, { metering: { flush_interval_ms: 200 } });
    const gw = await startSluice(config, { dir });
    const db = path.join(dir, 'usage.db');
    const rejected = path.join(dir, 'usage.spool.rejected');
    const ids = [];
    let bad;
    try {
      // In one flush interval: the same batch as the refused record.
      const sends = [];
      for (let i = 0; i < 3; i += 1) {
        sends.push(post(gw, '/v1/chat/completions', chat('chat')));
      }
      sends.push(post(gw, '/v1/chat/completions', chat('chat'), { 'x-mock-raw-body': absurd }));
      for (const r of await Promise.all(sends)) {
        assert.equal(r.status, 200, 'the caller gets its answer whatever the ledger does');
        ids.push(r.headers.get('x-request-id'));
      }
      bad = ids.pop();
      const r = await post(gw, '/v1/chat/completions', chat('chat'));
      assert.equal(r.status, 200);
      ids.push(r.headers.get('x-request-id'));
      await waitFor(() => countRecords(db) === 4, { timeoutMs: 5000, message: '4 records stored' });
      await waitFor(() => existsSync(rejected) && readFileSync(rejected, 'utf8').includes('\n'), {
        timeoutMs: 5000,
        message: 'the refused record in the rejected file',
      });
    } finally {
      assert.equal(await gw.stop(), 0);
    }
    const stored = exportRecords(db).map((x) => x.request_id).sort();
    assert.deepEqual(stored, [...ids].sort());
    const lines = readFileSync(rejected, 'utf8').split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1);
    assert.match(lines[0], new RegExp(`"request_id":"${bad}"`));
    assert.match(lines[0], /"input_tokens":18446744073709551615/, 'kept whole, the number as sent');
    assert.equal(spoolFrames(path.join(dir, 'usage.spool')), 0, 'nothing left to replay');
  });
});

describe('no usage record is lost', { skip: !sqliteAvailable && 'sqlite3 CLI not installed' }, () => {
  let mock;
  let dir;
  before(async () => {
    mock = await startMock({ threads: 2 });
    dir = makeTempDir('sluice-noloss-');
  });
  after(async () => {
    await mock?.stop();
    removeTempDir(dir);
  });

  // Steady load from `concurrency` clients until stop(); counts the responses received in full.
  function load(gw, concurrency = 4) {
    let running = true;
    let responses = 0;
    let errors = 0;
    const kinds = [
      () => post(gw, '/v1/chat/completions', chat('chat')),
      () => post(gw, '/v1/chat/completions', chat('chat', { stream: true }), { 'x-mock-events': '3' }),
      () => post(gw, '/v1/chat/completions', chat('ha')),
      () => post(gw, '/v1/chat/completions', chat('broken')),
    ];
    const client = async (c) => {
      for (let i = c; running; i += concurrency) {
        try {
          await kinds[i % kinds.length]();
          responses += 1; // status and whole body received
        } catch {
          errors += 1;
          await sleep(20);
        }
      }
    };
    const clients = Array.from({ length: concurrency }, (_, c) => client(c));
    return {
      get responses() {
        return responses;
      },
      get errors() {
        return errors;
      },
      async stop() {
        running = false;
        await withTimeout(Promise.all(clients), 20000, 'load clients');
        return responses;
      },
    };
  }

  // One no-loss run against `backend`: { config(cfg), count(), down(), up(), name }.
  async function noLoss(backend) {
    const spool = path.join(dir, `${backend.name}.spool`);
    const cfg = backend.config(meteringConfig(mock, dir, { metering: { spool } }));
    let gw = await startSluice(cfg, { dir });
    let total = 0;
    try {
      // Phase 1: steady load, store healthy.
      let l = load(gw);
      await sleep(1000);
      // Phase 2: the store is unavailable for 10 s; the load goes on.
      await backend.down();
      await sleep(10000);
      assert.ok(spoolFrames(spool) > 0, 'records went to the spool while the store was down');
      await backend.up();
      await sleep(1500);
      total += await l.stop();
      await waitFor(() => backend.count() === total && spoolFrames(spool) === 0, {
        timeoutMs: 20000,
        message: `${total} records stored and the spool replayed`,
      });
      assert.match(gw.stderr, /usage store down/);
      await waitFor(() => /records replayed into the store/.test(gw.stderr), {
        timeoutMs: 5000,
        message: 'the replay logged',
      });

      // Phase 3: down again (before any load, so every new record goes to the spool); once
      // every response's record is acknowledged, SIGKILL.
      const stored = backend.count();
      await backend.down();
      l = load(gw);
      await sleep(1500);
      total += await l.stop();
      await waitFor(() => stored + spoolFrames(spool) === total, {
        timeoutMs: 20000,
        message: 'every response acknowledged (store + spool)',
      });
      const spooled = spoolFrames(spool);
      assert.ok(spooled > 0, 'records are waiting in the spool');
      await gw.stop({ signal: 'SIGKILL' });
      await backend.up();

      // Phase 4: a new process on the same spool replays it, and serves more load meanwhile.
      gw = await startSluice(cfg, { dir });
      l = load(gw);
      await sleep(1500);
      total += await l.stop();
      assert.equal(await gw.stop(), 0, 'SIGTERM: drained and flushed');
      assert.match(gw.stderr, new RegExp(`holds ${spooled} records from an earlier run`));
    } finally {
      await gw.stop({ signal: 'SIGKILL' });
      await backend.up();
    }
    assert.ok(total > 100, `enough load (${total} responses)`);
    assert.equal(backend.count(), total, 'records stored = responses received');
    assert.equal(spoolFrames(spool), 0, 'spool empty');
    assert.equal(statSync(spool).size, 0);
  }

  test('SQLite locked 10 s under load, then SIGKILL with records in the spool, then restart', async () => {
    const db = path.join(dir, 'usage.db');
    let lock = null;
    await noLoss({
      name: 'sqlite',
      config: (cfg) => cfg,
      // Another process in an exclusive transaction: the gateway's inserts time out as busy.
      down: async () => {
        lock = await lockDatabase(db);
      },
      up: async () => {
        await lock?.release();
        lock = null;
      },
      count: () => countRecords(db),
    });
    const ids = exportRecords(db).map((r) => r.record_id);
    assert.equal(new Set(ids).size, ids.length, 'each record stored once');
  });

  const pgUrl = process.env.SLUICE_TEST_POSTGRES_URL;
  test(
    'PostgreSQL stopped 10 s under load, then SIGKILL with records in the spool, then restart',
    { skip: !(pgUrl && process.env.SLUICE_TEST_PG_STOP) && 'no test PostgreSQL (scripts/test-services.sh)' },
    async () => {
      // A key name of its own: other suites may share the database.
      const keyName = `noloss-${process.pid}-${Date.now()}`;
      const shell = (cmd) => {
        const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8', timeout: 60000 });
        assert.equal(r.status, 0, `${cmd}: ${r.stderr}`);
      };
      let stopped = false;
      await noLoss({
        name: 'postgres',
        config: (cfg) => ({ ...cfg, store: { postgres: pgUrl }, keys: [{ name: keyName, key: GATEWAY_KEY }] }),
        down: async () => {
          shell(process.env.SLUICE_TEST_PG_STOP);
          stopped = true;
        },
        up: async () => {
          if (stopped) {
            shell(process.env.SLUICE_TEST_PG_START);
            stopped = false;
          }
        },
        count: () => {
          const r = spawnSync(
            'psql',
            [pgUrl, '-tAc', `SELECT count(*) FROM usage_records WHERE key_name = '${keyName}'`],
            { encoding: 'utf8', timeout: 10000 },
          );
          if (r.status !== 0) {
            return r.stderr.includes('does not exist') ? 0 : NaN;
          }
          return Number(r.stdout.trim());
        },
      });
    },
  );
});
