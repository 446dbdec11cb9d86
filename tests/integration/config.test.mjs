// Configuration from the outside: check-config on the examples and on broken files, routes, --version,
// start-up notes, reload on SIGHUP (higher version applied, invalid or not-newer file ignored),
// access_log.path.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

import {
  GATEWAY_KEY,
  chatBody,
  gatewayConfig,
  getJson,
  makeTempDir,
  postJson,
  removeTempDir,
  repoRoot,
  runBinary,
  sluiceBin,
  startMock,
  startSluice,
  toYaml,
  waitFor,
} from '../support/harness.mjs';

/** The environment without OPENAI_API_KEY / SLUICE_* so examples load as in a clean shell. */
function cleanEnv() {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k.startsWith('OPENAI_') || (k.startsWith('SLUICE_') && k !== 'SLUICE_BIN' && k !== 'SLUICE_MOCK_BIN')) {
      delete env[k];
    }
  }
  return env;
}

function tempFile(t, name, text) {
  const dir = makeTempDir('sluice-cfg-');
  t.after(() => removeTempDir(dir));
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('sluice binary', () => {
  test('--version prints "sluice 0.1.0"', async () => {
    const r = await runBinary(sluiceBin, ['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), 'sluice 0.1.0');
  });
});

describe('check-config', () => {
  const examples = readdirSync(path.join(repoRoot, 'examples')).filter((f) => /\.ya?ml$/.test(f));
  assert.ok(examples.length >= 3);

  for (const file of examples) {
    test(`examples/${file} is valid`, async () => {
      const r = await runBinary(sluiceBin, ['check-config', path.join(repoRoot, 'examples', file)], { env: cleanEnv() });
      assert.equal(r.code, 0, `stderr: ${r.stderr}`);
      assert.match(r.stdout, /^OK: /);
      for (const line of r.stdout.trim().split('\n').slice(1)) {
        assert.match(line, /^note: /);
      }
    });
  }

  test('quickstart notes the skipped openai provider when OPENAI_API_KEY is unset', async () => {
    const r = await runBinary(sluiceBin, ['check-config', path.join(repoRoot, 'examples', 'quickstart.yaml')], { env: cleanEnv() });
    assert.equal(r.code, 0);
    assert.match(r.stdout, /note: provider openai skipped: OPENAI_API_KEY is not set/);
  });

  test('the gateway config the tests use is valid', async (t) => {
    const file = tempFile(t, 'ok.yaml', toYaml(gatewayConfig('http://127.0.0.1:9/v1')));
    const r = await runBinary(sluiceBin, ['check-config', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^OK: .*\(version 1, 2 providers, 4 routes, 2 keys\)/);
  });

  test('an unknown key fails with file:line:col on stderr, exit 1', async (t) => {
    const text = toYaml(gatewayConfig('http://127.0.0.1:9/v1')).replace('  workers: 1\n', '  workers: 1\n  max_conections: 5\n');
    const file = tempFile(t, 'bad.yaml', text);
    const line = text.split('\n').findIndex((l) => l.includes('max_conections')) + 1;
    const r = await runBinary(sluiceBin, ['check-config', file]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.ok(r.stderr.startsWith(`${file}:${line}:3: `), r.stderr);
    assert.match(r.stderr, /server\.max_conections: unknown field/);
  });

  test('an unknown top-level key fails', async (t) => {
    const file = tempFile(t, 'bad.yaml', `${toYaml(gatewayConfig('http://127.0.0.1:9/v1'))}colour: blue\n`);
    const r = await runBinary(sluiceBin, ['check-config', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^.+:\d+:\d+: /);
  });

  test('a dangling provider reference fails and names the field', async (t) => {
    const cfg = gatewayConfig('http://127.0.0.1:9/v1');
    cfg.routes[0].provider = 'opnai';
    const file = tempFile(t, 'bad.yaml', toYaml(cfg));
    const r = await runBinary(sluiceBin, ['check-config', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^.+:\d+:\d+: routes\[0\]\.provider: unknown provider "opnai"/);
  });

  test('errors never echo a secret', async (t) => {
    const cfg = gatewayConfig('http://127.0.0.1:9/v1');
    cfg.keys[0].key = 'short';
    const file = tempFile(t, 'bad.yaml', toYaml(cfg));
    const r = await runBinary(sluiceBin, ['check-config', file]);
    assert.equal(r.code, 1);
    assert.ok(!r.stderr.includes('"short"') && !/\bshort\b.*\bshort\b/.test(r.stderr), r.stderr);
  });

  test('a missing file fails with exit 1', async () => {
    const r = await runBinary(sluiceBin, ['check-config', '/nonexistent/sluice.yaml']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot read file/);
  });

  test('serve refuses an invalid file with exit 1', async (t) => {
    const file = tempFile(t, 'bad.yaml', 'version: 1\nlisten: 127.0.0.1:0\nbogus: 1\n');
    const r = await runBinary(sluiceBin, ['serve', '--config', file]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /bogus/);
  });
});

describe('routes', () => {
  // A fallback over a weighted pool with a failover-only member, then a third target; the
  // route's timeout covers the targets without their own.
  const nested = `version: 1
auth: none
providers:
  - { id: a, adapter: mock, timeout: { first_byte_ms: 1000, total_ms: 5000 } }
  - { id: b, adapter: mock }
  - { id: c, adapter: mock }
routes:
  - alias: [chat, chat-2]
    policy:
      fallback:
        on_status: [429, 503]
        targets:
          - loadbalance:
              targets:
                - { provider: a, model: m, weight: 3 }
                - { provider: b, model: m, weight: 0, timeout: { first_byte_ms: 500, total_ms: 2000 } }
          - { provider: c, model: m }
    retry: { per_target_attempts: 2, backoff_base_ms: 100, backoff_max_ms: 400, retry_after_max_ms: 300, deadline_ms: 10000 }
    timeout: { first_byte_ms: 1000, total_ms: 4000 }
`;

  test('prints each route\'s tree, paths, timeouts, retry settings and worst case', async (t) => {
    const file = tempFile(t, 'routes.yaml', nested);
    const r = await runBinary(sluiceBin, ['routes', file]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const lines = r.stdout.split('\n').map((l) => l.trimEnd());
    assert.equal(lines[0], `${file}: version 1, 1 routes`);
    assert.ok(lines.includes(`route chat, chat-2 (chat, ${file}:8)`), r.stdout);
    const tree = lines.slice(lines.indexOf('  policy:') + 1, lines.findIndex((l) => l.startsWith('  retry:')));
    assert.deepEqual(tree, [
      '    fallback  on_status 429,503',
      '      [0] loadbalance  strategy weighted',
      '        [0.0] target a/m  weight 3',
      '              timeout connect 2000 ms, first_byte 1000 ms, idle 300000 ms, total 4000 ms (route)',
      '        [0.1] target b/m  weight 0 (failover only)',
      '              timeout connect 2000 ms, first_byte 500 ms, idle 300000 ms, total 2000 ms (target)',
      '      [1] target c/m',
      '          timeout connect 2000 ms, first_byte 1000 ms, idle 300000 ms, total 4000 ms (route)',
    ]);
    assert.match(r.stdout, /retry: max_attempts 0 \(= 3 targets x 2 = 6\), per_target_attempts 2, /);
    // 2 x (4000 + 2000 + 4000) + 3 x 300 = 20900, cut to the 10000 ms deadline + one 4000 ms attempt.
    assert.match(r.stdout, /\n {2}worst case: 10000 ms\n {4}longest chain: 6 attempts, 20900 ms /);
  });

  test('the examples print with an empty environment', async () => {
    const r = await runBinary(sluiceBin, ['routes', path.join(repoRoot, 'examples', 'production.yaml')], { env: cleanEnv() });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^route llama-8b, chat-internal \(chat, /m);
    assert.match(r.stdout, /note: route llama-8b, chat-internal: a target left out: provider openai disabled/);
  });

  test('an invalid file fails exactly like check-config', async (t) => {
    const file = tempFile(t, 'bad.yaml', nested.replace('provider: c,', 'provider: cc,'));
    const routes = await runBinary(sluiceBin, ['routes', file]);
    const check = await runBinary(sluiceBin, ['check-config', file]);
    assert.equal(routes.code, 1);
    assert.equal(routes.stdout, '');
    assert.equal(routes.stderr, check.stderr);
    assert.match(routes.stderr, /^.+:\d+:\d+: routes\[0\]\.policy\.fallback\.targets\[1\]\.provider: unknown provider "cc"/);
  });
});

describe('start-up notes', () => {
  test('without a store, the note shows the store setting to add, as it is written', async (t) => {
    const mock = await startMock();
    t.after(() => mock.stop());
    const gw = await startSluice(gatewayConfig(mock.baseUrl));
    t.after(() => gw.stop());
    const note = await waitFor(() => gw.stderr.split('\n').find((l) => l.includes('no store configured')), {
      timeoutMs: 3000,
      message: 'the no-store note on stderr',
    });
    assert.match(note, /\(set store: \{ sqlite: \.\/sluice\.db \} to keep them\)$/);
  });
});

describe('reload on SIGHUP', () => {
  async function setup(t) {
    const mock = await startMock();
    t.after(() => mock.stop());
    const gw = await startSluice(gatewayConfig(mock.baseUrl));
    t.after(() => gw.stop());
    // Serve one request first: the start-up race (a signal arriving right after the
    // listening line) has its own test below.
    assert.equal((await getJson(gw, '/readyz', { key: null })).status, 200);
    return { mock, gw };
  }

  const modelIds = async (gw) => (await getJson(gw, '/v1/models')).json.data.map((m) => m.id);

  test('a higher version adds a new alias', async (t) => {
    const { mock, gw } = await setup(t);
    assert.ok(!(await modelIds(gw)).includes('gpt-new'));
    const cfg = gatewayConfig(mock.baseUrl, { version: 2 });
    cfg.routes.push({ alias: 'gpt-new', provider: 'up', model: 'new-upstream-model' });
    gw.reload(cfg);
    await waitFor(async () => (await modelIds(gw)).includes('gpt-new'), { timeoutMs: 3000, message: 'gpt-new in /v1/models' });
    const ready = await getJson(gw, '/readyz', { key: null });
    assert.deepEqual({ status: ready.json.status, config_version: ready.json.config_version },
      { status: 'ready', config_version: 2 });
    const r = await postJson(gw, '/v1/chat/completions', chatBody({ model: 'gpt-new' }));
    assert.equal(r.status, 200, r.text);
    assert.equal(r.headers.get('x-sluice-model'), 'new-upstream-model');
    assert.equal(JSON.parse((await mock.stats()).last_request.body).model, 'new-upstream-model');
  });

  test('SIGHUP right after the listening line does not kill the process', async (t) => {
    const mock = await startMock();
    t.after(() => mock.stop());
    // The listening line is the readiness signal; a reload may follow at once. The window is
    // a race, so try a few times.
    for (let attempt = 0; attempt < 5; attempt++) {
      const gw = await startSluice(gatewayConfig(mock.baseUrl), { onListening: (proc) => proc.kill('SIGHUP') });
      try {
        const ready = await getJson(gw, '/readyz', { key: null }).catch((e) => e);
        assert.equal(
          gw.state.exited,
          false,
          `attempt ${attempt + 1}: SIGHUP killed the gateway (exit code ${gw.state.exitCode}, signal ${gw.state.exitSignal})`,
        );
        assert.equal(ready.status, 200);
      } finally {
        await gw.stop();
      }
    }
  });

  test('a reload can remove an alias and a key', async (t) => {
    const { mock, gw } = await setup(t);
    const cfg = gatewayConfig(mock.baseUrl, { version: 2 });
    cfg.routes = cfg.routes.filter((r) => r.alias !== 'embed-test');
    cfg.keys = [{ name: 'new', key: 'sk-sluice-rotated-key-000000009' }];
    gw.reload(cfg);
    await waitFor(async () => (await getJson(gw, '/readyz', { key: null })).json.config_version === 2, { timeoutMs: 3000 });
    const old = await getJson(gw, '/v1/models', { key: GATEWAY_KEY });
    assert.equal(old.status, 401, 'a key removed by the reload must stop working');
    const fresh = await getJson(gw, '/v1/models', { key: 'sk-sluice-rotated-key-000000009' });
    assert.equal(fresh.status, 200);
    assert.ok(!fresh.json.data.some((m) => m.id === 'embed-test'));
  });

  test('an invalid file keeps the old config serving', async (t) => {
    const { gw } = await setup(t);
    gw.reload('version: 5\nlisten: 127.0.0.1:0\nthis is: [not valid\n');
    await waitFor(() => /reload rejected/.test(gw.stderr), { timeoutMs: 3000, message: 'reload rejection on stderr' });
    assert.equal((await getJson(gw, '/readyz', { key: null })).json.config_version, 1);
    assert.deepEqual((await modelIds(gw)).sort(), ['embed-test', 'gpt-test', 'mock-chat', 'mock-embed']);
    const r = await postJson(gw, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 200, r.text);
    assert.equal(gw.state.exited, false);
  });

  test('a file that fails validation (unknown key) keeps the old config serving', async (t) => {
    const { mock, gw } = await setup(t);
    const cfg = gatewayConfig(mock.baseUrl, { version: 3 });
    cfg.routes.push({ alias: 'gpt-new', provider: 'up', model: 'x', colour: 'blue' });
    gw.reload(cfg);
    await waitFor(() => /reload rejected/.test(gw.stderr), { timeoutMs: 3000, message: 'reload rejection on stderr' });
    assert.ok(!(await modelIds(gw)).includes('gpt-new'));
    assert.equal((await getJson(gw, '/readyz', { key: null })).json.config_version, 1);
  });

  test('a file with the same version is ignored', async (t) => {
    const { mock, gw } = await setup(t);
    const cfg = gatewayConfig(mock.baseUrl, { version: 1 });
    cfg.routes.push({ alias: 'gpt-new', provider: 'up', model: 'x' });
    gw.reload(cfg);
    await waitFor(() => /reload ignored/.test(gw.stderr), { timeoutMs: 3000, message: 'reload ignored on stderr' });
    assert.ok(!(await modelIds(gw)).includes('gpt-new'));
  });

  test('after a rejected reload, a later valid one is applied', async (t) => {
    const { mock, gw } = await setup(t);
    gw.reload('version: 2\nnot: [valid\n');
    await waitFor(() => /reload rejected/.test(gw.stderr), { timeoutMs: 3000 });
    const cfg = gatewayConfig(mock.baseUrl, { version: 2 });
    cfg.routes.push({ alias: 'gpt-new', provider: 'up', model: 'x' });
    gw.reload(cfg);
    await waitFor(async () => (await modelIds(gw)).includes('gpt-new'), { timeoutMs: 3000, message: 'gpt-new after the second reload' });
  });

  test('a reload that changes the provider base_url sends new requests to the new upstream', async (t) => {
    const { mock, gw } = await setup(t);
    const r1 = await postJson(gw, '/v1/chat/completions', chatBody());
    assert.equal(r1.status, 200);
    const other = await startMock();
    t.after(() => other.stop());
    gw.reload(gatewayConfig(other.baseUrl, { version: 2 }));
    await waitFor(async () => (await getJson(gw, '/readyz', { key: null })).json.config_version === 2, { timeoutMs: 3000 });
    const before = (await mock.stats()).chat_requests;
    const r2 = await postJson(gw, '/v1/chat/completions', chatBody());
    assert.equal(r2.status, 200, r2.text);
    assert.equal((await other.stats()).chat_requests, 1, 'request did not go to the new upstream');
    assert.equal((await mock.stats()).chat_requests, before);
  });
});

describe('access_log', () => {
  test('access_log.path writes lines to the file, not stdout', async (t) => {
    const mock = await startMock();
    t.after(() => mock.stop());
    const dir = makeTempDir('sluice-log-');
    t.after(() => removeTempDir(dir));
    const logFile = path.join(dir, 'access.log');
    const gw = await startSluice(gatewayConfig(mock.baseUrl, { access_log: { path: logFile } }));
    t.after(() => gw.stop());
    const r = await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-request-id': 'to-file-1' } });
    assert.equal(r.status, 200);
    const line = await waitFor(
      () => {
        try {
          return readFileSync(logFile, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l))
            .find((e) => e.request_id === 'to-file-1');
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 3000, message: 'access log line in the file' },
    );
    assert.equal(line.status, 200);
    assert.equal(line.outcome, 'complete');
    assert.equal(gw.accessLog().length, 0, 'access log lines also went to stdout');
    assert.equal(gw.listening.event, 'listening');
  });

  test('a reload switches the access log off and on again', async (t) => {
    const mock = await startMock();
    t.after(() => mock.stop());
    const gw = await startSluice(gatewayConfig(mock.baseUrl));
    t.after(() => gw.stop());
    const send = async (id) =>
      assert.equal((await postJson(gw, '/v1/chat/completions', chatBody(), { headers: { 'x-request-id': id } })).status, 200);
    const versionIs = (v) => waitFor(async () => (await getJson(gw, '/readyz', { key: null })).json.config_version === v,
      { timeoutMs: 3000, message: `config_version ${v}` });
    await send('log-on-1');
    await gw.waitForLog((e) => e.request_id === 'log-on-1');
    gw.reload(gatewayConfig(mock.baseUrl, { version: 2, access_log: { enabled: false } }));
    await versionIs(2);
    await send('log-off-1');
    gw.reload(gatewayConfig(mock.baseUrl, { version: 3 }));
    await versionIs(3);
    await send('log-on-2');
    await gw.waitForLog((e) => e.request_id === 'log-on-2');
    // Lines are written in order per worker: log-off-1 would be there by now.
    assert.ok(!gw.accessLog().some((e) => e.request_id === 'log-off-1'), 'a line while the log was off');
  });

  test('access_log.enabled: false writes nothing', async (t) => {
    const mock = await startMock();
    t.after(() => mock.stop());
    const gw = await startSluice(gatewayConfig(mock.baseUrl, { access_log: { enabled: false } }));
    t.after(() => gw.stop());
    const r = await postJson(gw, '/v1/chat/completions', chatBody());
    assert.equal(r.status, 200);
    // Stopping flushes whatever the log writer holds.
    await gw.stop({ timeoutMs: 2000 });
    assert.equal(gw.accessLog().length, 0);
  });
});
