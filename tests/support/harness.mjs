// Test harness for the integration and conformance suites: starts the real `sluice` binary
// and `sluice-mock-upstream` on port 0, and offers the client-side tools the tests need
// (bounded polling, a raw-socket HTTP client, an SSE reader that timestamps every event).
//
// Every process and temp directory is registered when created and torn down by stop() /
// cleanup(); tests call them from t.after() or a finally block so nothing leaks on failure.

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import net from 'node:net';
import { after, before, beforeEach } from 'node:test';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const fixturesDir = path.join(repoRoot, 'tests', 'fixtures');

export const sluiceBin = path.resolve(repoRoot, process.env.SLUICE_BIN ?? 'build/release/sluice');
export const mockBin = path.resolve(
  repoRoot,
  process.env.SLUICE_MOCK_BIN ?? 'build/release/tools/mock_upstream/sluice-mock-upstream',
);

// The gateway key most tests present, and the provider key that must never leak back.
export const GATEWAY_KEY = 'sk-sluice-test-key-0000000001';
export const LIMITED_KEY = 'sk-sluice-limited-key-00000002';
export const PROVIDER_KEY = 'sk-provider-SECRET-do-not-leak-7f3a9c';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// Polling

/**
 * Polls `predicate` (sync or async) until it returns a truthy value, which is returned.
 * Throws after `timeoutMs` with `message` and the last value seen.
 */
/**
 * The usage record of one request (GET /admin/v1/usage/record), once the sink has stored it:
 * asked again until it is there, for at most 5 s.
 */
export async function usageRecord(adminUrl, adminKey, requestId) {
  let record;
  await waitFor(
    async () => {
      const res = await fetch(`${adminUrl}/admin/v1/usage/record?request_id=${encodeURIComponent(requestId)}`, {
        headers: { authorization: `Bearer ${adminKey}` },
      });
      record = await res.json();
      return res.status === 200;
    },
    { timeoutMs: 5000, message: `usage record of ${requestId}` },
  );
  return record;
}

export async function waitFor(predicate, { timeoutMs = 2000, intervalMs = 10, message } = {}) {
  const deadline = performance.now() + timeoutMs;
  let last;
  let lastError;
  for (;;) {
    try {
      last = await predicate();
      if (last) {
        return last;
      }
    } catch (e) {
      lastError = e;
    }
    if (performance.now() >= deadline) {
      const why = lastError ? ` (last error: ${lastError.message})` : '';
      throw new Error(
        `waitFor timed out after ${timeoutMs} ms: ${message ?? predicate.toString()}; ` +
          `last value ${JSON.stringify(last)}${why}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** Resolves with the promise's value, or rejects after `ms` with `message`. */
export function withTimeout(promise, ms, message = 'operation') {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${message} did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------------------------------------
// Temp files

const tempDirs = new Set();

export function makeTempDir(prefix = 'sluice-test-') {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir) {
  tempDirs.delete(dir);
  rmSync(dir, { recursive: true, force: true });
}

const liveProcesses = new Set();

process.on('exit', () => {
  // Safety net: a test file that dies before its teardown must not leave servers running.
  for (const proc of liveProcesses) {
    try {
      proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort at exit
    }
  }
});

// ---------------------------------------------------------------------------------------------
// YAML emitter for plain objects, arrays and scalars (enough for Sluice configs)

function yamlScalar(v) {
  if (v === null || v === undefined) {
    return 'null';
  }
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) {
      throw new Error(`cannot emit ${v} as YAML`);
    }
    return String(v);
  }
  if (typeof v === 'boolean') {
    return v ? 'true' : 'false';
  }
  // JSON string syntax is valid YAML double-quoted syntax.
  return JSON.stringify(String(v));
}

function yamlKey(k) {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(k) ? k : JSON.stringify(k);
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Serialises a tree of plain objects, arrays and scalars as block-style YAML. */
export function toYaml(value, indent = 0) {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) {
      return `${pad}[]\n`;
    }
    let out = '';
    for (const item of value) {
      if (isPlainObject(item) && Object.keys(item).length > 0) {
        const body = toYaml(item, indent + 2);
        out += `${pad}- ${body.slice(indent + 2)}`;
      } else if (Array.isArray(item) && item.length > 0) {
        out += `${pad}-\n${toYaml(item, indent + 2)}`;
      } else {
        out += `${pad}- ${inline(item)}\n`;
      }
    }
    return out;
  }
  if (isPlainObject(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined);
    if (keys.length === 0) {
      return `${pad}{}\n`;
    }
    let out = '';
    for (const k of keys) {
      const v = value[k];
      if ((isPlainObject(v) && Object.keys(v).length > 0) || (Array.isArray(v) && v.length > 0)) {
        out += `${pad}${yamlKey(k)}:\n${toYaml(v, indent + 2)}`;
      } else {
        out += `${pad}${yamlKey(k)}: ${inline(v)}\n`;
      }
    }
    return out;
  }
  return `${pad}${yamlScalar(value)}\n`;
}

function inline(v) {
  if (Array.isArray(v)) {
    return v.length === 0 ? '[]' : `[${v.map(inline).join(', ')}]`;
  }
  if (isPlainObject(v)) {
    const keys = Object.keys(v);
    return keys.length === 0 ? '{}' : `{ ${keys.map((k) => `${yamlKey(k)}: ${inline(v[k])}`).join(', ')} }`;
  }
  return yamlScalar(v);
}

// ---------------------------------------------------------------------------------------------
// Processes

/**
 * Spawns `bin args`, waits (bounded) for the first stdout line that parses as JSON with
 * event "listening", and keeps collecting stdout lines and stderr text afterwards.
 */
async function spawnListening(bin, args, { env, timeoutMs = 10000, name, onListening }) {
  if (!existsSync(bin)) {
    throw new Error(`${name} binary not found at ${bin} (set ${name === 'sluice' ? 'SLUICE_BIN' : 'SLUICE_MOCK_BIN'})`);
  }
  const proc = spawn(bin, args, {
    env: env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const state = {
    proc,
    stdoutLines: [],
    stderr: '',
    exited: false,
    exitCode: null,
    exitSignal: null,
  };
  liveProcesses.add(proc);
  state.exitPromise = new Promise((resolve) => {
    proc.on('exit', (code, signal) => {
      liveProcesses.delete(proc);
      state.exited = true;
      state.exitCode = code;
      state.exitSignal = signal;
      resolve({ code, signal });
    });
  });
  proc.on('error', () => {});
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (d) => {
    state.stderr += d;
  });
  const rl = readline.createInterface({ input: proc.stdout });
  let resolveListening;
  const listening = new Promise((r) => {
    resolveListening = r;
  });
  rl.on('line', (line) => {
    state.stdoutLines.push(line);
    if (!state.listening) {
      try {
        const obj = JSON.parse(line);
        if (obj && obj.event === 'listening') {
          state.listening = obj;
          onListening?.(proc, obj);
          resolveListening(obj);
        }
      } catch {
        // not JSON: keep waiting
      }
    }
  });
  const exitedEarly = state.exitPromise.then(({ code, signal }) => {
    throw new Error(
      `${name} exited (code ${code}, signal ${signal}) before listening; stderr:\n${state.stderr}`,
    );
  });
  try {
    await withTimeout(Promise.race([listening, exitedEarly]), timeoutMs, `${name} start-up`);
  } catch (e) {
    if (!state.exited) {
      proc.kill('SIGKILL');
      await state.exitPromise;
    }
    throw new Error(`${e.message}\nstderr:\n${state.stderr}`);
  }
  exitedEarly.catch(() => {});
  return state;
}

/** SIGTERMs (or `signal`s) the process and awaits its exit; SIGKILL after `timeoutMs`. */
async function stopProcess(state, { signal = 'SIGTERM', timeoutMs = 5000 } = {}) {
  if (!state.exited) {
    state.proc.kill(signal);
    const timer = setTimeout(() => {
      if (!state.exited) {
        state.killedAfterTimeout = true;
        state.proc.kill('SIGKILL');
      }
    }, timeoutMs);
    await state.exitPromise;
    clearTimeout(timer);
  }
  return state.exitCode;
}

/**
 * Starts sluice-mock-upstream. opts: fixtures (dir, default tests/fixtures/openai-chat; false
 * for none), tlsCert, tlsKey, threads, args (extra flags).
 */
export async function startMock(opts = {}) {
  const args = ['--listen', '127.0.0.1:0'];
  const fixtures = opts.fixtures === undefined ? path.join(fixturesDir, 'openai-chat') : opts.fixtures;
  if (fixtures) {
    args.push('--fixtures', fixtures);
  }
  if (opts.tlsCert) {
    args.push('--tls-cert', opts.tlsCert, '--tls-key', opts.tlsKey);
  }
  if (opts.threads) {
    args.push('--threads', String(opts.threads));
  }
  args.push(...(opts.args ?? []));
  const state = await spawnListening(mockBin, args, { name: 'mock', timeoutMs: opts.timeoutMs });
  const port = state.listening.port;
  const scheme = state.listening.tls ? 'https' : 'http';
  // The control endpoints are plain HTTP unless TLS is on; fetch can't trust our test CA,
  // so control calls go through a raw TLS-capable helper when needed.
  const control = async (method, p) => {
    if (!state.listening.tls) {
      const res = await fetch(`http://127.0.0.1:${port}${p}`, { method });
      return res.json();
    }
    const { request } = await import('node:https');
    return new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: p, method, rejectUnauthorized: false },
        (res) => {
          let data = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (data += d));
          res.on('end', () => {
            try {
              resolve(JSON.parse(data));
            } catch (e) {
              reject(e);
            }
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  };
  return {
    port,
    tls: state.listening.tls,
    url: `${scheme}://127.0.0.1:${port}`,
    baseUrl: `${scheme}://127.0.0.1:${port}/v1`,
    proc: state.proc,
    get stderr() {
      return state.stderr;
    },
    stats: () => control('GET', '/_mock/stats'),
    reset: () => control('POST', '/_mock/reset'),
    stop: (o) => stopProcess(state, o),
    state,
  };
}

/**
 * Starts `sluice serve` with `config` (a YAML string, or an object emitted with toYaml).
 * opts: env (extra variables), timeoutMs, dir (temp dir to use), onListening(proc, line)
 * (called synchronously when the listening line is read, e.g. to signal the process at once).
 * Returns a handle: port, url, configPath, accessLog() (parsed JSON stdout lines after the
 * listening line), waitForLog(pred), stderr, reload(config), stop(), exitPromise.
 */
export async function startSluice(config, opts = {}) {
  const dir = opts.dir ?? makeTempDir('sluice-gw-');
  const ownsDir = !opts.dir;
  const configPath = path.join(dir, 'sluice.yaml');
  writeFileSync(configPath, typeof config === 'string' ? config : toYaml(config));
  const env = { ...process.env, ...(opts.env ?? {}) };
  let state;
  try {
    state = await spawnListening(sluiceBin, ['serve', '--config', configPath], {
      env,
      name: 'sluice',
      timeoutMs: opts.timeoutMs,
      onListening: opts.onListening,
    });
  } catch (e) {
    if (ownsDir) {
      removeTempDir(dir);
    }
    throw e;
  }
  const port = state.listening.port;
  const accessLog = () => {
    const out = [];
    for (const line of state.stdoutLines) {
      try {
        const obj = JSON.parse(line);
        if (obj && obj.event !== 'listening') {
          out.push(obj);
        }
      } catch {
        // non-JSON stdout line: not an access-log entry
      }
    }
    return out;
  };
  return {
    port,
    listening: state.listening,
    url: `http://127.0.0.1:${port}`,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    configPath,
    dir,
    proc: state.proc,
    state,
    get stderr() {
      return state.stderr;
    },
    get stdout() {
      return state.stdoutLines.join('\n');
    },
    accessLog,
    /** Waits (bounded) for an access-log entry matching `pred` and returns it. */
    waitForLog: (pred, { timeoutMs = 3000 } = {}) =>
      waitFor(() => accessLog().find(pred), { timeoutMs, message: 'access log entry' }),
    /** Rewrites the config file and sends SIGHUP. */
    reload(newConfig) {
      writeFileSync(configPath, typeof newConfig === 'string' ? newConfig : toYaml(newConfig));
      state.proc.kill('SIGHUP');
    },
    exitPromise: state.exitPromise,
    async stop(o) {
      const code = await stopProcess(state, { timeoutMs: 2000, ...o });
      if (ownsDir) {
        removeTempDir(dir);
      }
      return code;
    },
  };
}

/** Runs a binary to completion; returns { code, stdout, stderr }. */
export function runBinary(bin, args, { env, timeoutMs = 10000 } = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(bin, args, { env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8');
    proc.stderr.setEncoding('utf8');
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`${bin} ${args.join(' ')} did not exit within ${timeoutMs} ms`));
    }, timeoutMs);
    proc.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Configs

/**
 * A gateway config with:
 *   - provider `up` (openai adapter) pointing at `upstreamBaseUrl` with PROVIDER_KEY and
 *     forward_headers [x-mock-*];
 *   - provider `mock` (built-in);
 *   - routes gpt-test -> up/mock-model (chat), embed-test -> up/mock-embed-model (embeddings),
 *     mock-chat -> mock/mock-1, mock-embed -> mock/mock-embed-1;
 *   - keys `test` (GATEWAY_KEY, all models) and `limited` (LIMITED_KEY, mock-chat only).
 * `overrides` are shallow-merged at top level; `server`, `provider` (merged into `up`) are
 * merged one level deeper.
 */
export function gatewayConfig(upstreamBaseUrl, overrides = {}) {
  const { server, provider, ...rest } = overrides;
  return {
    version: 1,
    listen: '127.0.0.1:0',
    server: { workers: 1, drain_timeout_ms: 3000, ...(server ?? {}) },
    providers: [
      {
        id: 'up',
        adapter: 'openai',
        base_url: upstreamBaseUrl,
        api_key: PROVIDER_KEY,
        forward_headers: ['x-mock-*'],
        ...(provider ?? {}),
      },
      { id: 'mock', adapter: 'mock' },
    ],
    routes: [
      { alias: 'gpt-test', provider: 'up', model: 'mock-model' },
      { alias: 'embed-test', kind: 'embeddings', provider: 'up', model: 'mock-embed-model' },
      { alias: 'mock-chat', provider: 'mock', model: 'mock-1' },
      { alias: 'mock-embed', kind: 'embeddings', provider: 'mock', model: 'mock-embed-1' },
    ],
    keys: [
      { name: 'test', key: GATEWAY_KEY },
      { name: 'limited', key: LIMITED_KEY, models: ['mock-chat'] },
    ],
    ...rest,
  };
}

/** Starts a mock and a gateway in front of it; `stop()` stops both (gateway first). */
export async function startStack({ mockOpts, config, sluiceOpts } = {}) {
  const mock = await startMock(mockOpts);
  let gw;
  try {
    const cfg = typeof config === 'function' ? config(mock) : gatewayConfig(mock.baseUrl, config);
    gw = await startSluice(cfg, sluiceOpts);
  } catch (e) {
    await mock.stop();
    throw e;
  }
  return {
    mock,
    gw,
    async stop() {
      const code = await gw.stop();
      await mock.stop();
      return code;
    },
  };
}

/**
 * One mock + gateway stack for a whole test file: registers node:test hooks that start it
 * before the first test, stop it after the last, and zero the mock's counters before each
 * test. `onStart(stack)` runs once the stack is up (assign gw / mock / clients there).
 */
export function useStack(opts, onStart) {
  let stack;
  before(async () => {
    stack = await startStack(opts);
    onStart?.(stack);
  });
  after(async () => {
    await stack?.stop();
  });
  beforeEach(async () => {
    await stack.mock.reset();
  });
}

/** A TCP port on 127.0.0.1 with nothing listening (bound, then closed). */
export async function closedPort() {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

// ---------------------------------------------------------------------------------------------
// HTTP helpers

export function authHeaders(key = GATEWAY_KEY, extra = {}) {
  return { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra };
}

/** POSTs JSON to the gateway with the test key; returns { res, status, headers, text, json }. */
export async function postJson(gw, p, body, { headers = {}, key = GATEWAY_KEY, signal } = {}) {
  const h = key === null ? { 'content-type': 'application/json', ...headers } : authHeaders(key, headers);
  const res = await fetch(`${gw.url}${p}`, {
    method: 'POST',
    headers: h,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
  return readResponse(res);
}

export async function getJson(gw, p, { headers = {}, key = GATEWAY_KEY } = {}) {
  const h = key === null ? headers : { authorization: `Bearer ${key}`, ...headers };
  const res = await fetch(`${gw.url}${p}`, { headers: h });
  return readResponse(res);
}

async function readResponse(res) {
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { res, status: res.status, headers: res.headers, text, json };
}

export function chatBody(extra = {}) {
  return { model: 'gpt-test', messages: [{ role: 'user', content: 'Say hello' }], ...extra };
}

// ---------------------------------------------------------------------------------------------
// SSE

/**
 * Reads an SSE body (a fetch Response) event by event. Yields
 * { raw, event, data, t } where raw is the exact event text including its blank-line
 * terminator, event the `event:` name (or null), data the joined `data:` lines, t the arrival
 * time (performance.now()).
 */
export async function* sseEvents(res) {
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        break;
      }
      const t = performance.now();
      buf += decoder.decode(value, { stream: true });
      for (;;) {
        const m = /\r\n\r\n|\n\n|\r\r/.exec(buf);
        if (!m) {
          break;
        }
        const raw = buf.slice(0, m.index + m[0].length);
        buf = buf.slice(m.index + m[0].length);
        yield { raw, event: sseName(raw), data: sseData(raw), t };
      }
    }
    buf += decoder.decode();
    if (buf.length > 0) {
      yield { raw: buf, event: sseName(buf), data: sseData(buf), t: performance.now(), incomplete: true };
    }
  } finally {
    reader.releaseLock?.();
  }
}

function sseName(raw) {
  for (const line of raw.split(/\r\n|\n|\r/)) {
    if (line.startsWith('event:')) {
      return line.slice(6).replace(/^ /, '');
    }
  }
  return null;
}

function sseData(raw) {
  const lines = raw.split(/\r\n|\n|\r/);
  const data = [];
  for (const line of lines) {
    if (line.startsWith('data:')) {
      data.push(line.slice(5).replace(/^ /, ''));
    }
  }
  return data.length ? data.join('\n') : null;
}

/** Reads a whole SSE response: { events, text, json(i) } with per-event arrival times. */
export async function collectSse(res) {
  const events = [];
  for await (const ev of sseEvents(res)) {
    events.push(ev);
  }
  return { events, text: events.map((e) => e.raw).join('') };
}

/** Parsed JSON payloads of the data events (skips [DONE] and non-JSON). */
export function jsonEvents(events) {
  const out = [];
  for (const e of events) {
    if (e.data && e.data !== '[DONE]') {
      try {
        out.push(JSON.parse(e.data));
      } catch {
        // non-JSON data event
      }
    }
  }
  return out;
}

/** Splits an SSE file's text into raw events (blank-line terminated), as the mock does. */
export function splitSse(text) {
  const out = [];
  let rest = text;
  for (;;) {
    const m = /\r\n\r\n|\n\n|\r\r/.exec(rest);
    if (!m) {
      if (rest.length) {
        out.push(rest);
      }
      return out;
    }
    out.push(rest.slice(0, m.index + m[0].length));
    rest = rest.slice(m.index + m[0].length);
  }
}

export function readFixture(rel) {
  return readFileSync(path.join(fixturesDir, rel), 'utf8');
}

// ---------------------------------------------------------------------------------------------
// Raw-socket HTTP/1.1 client (pipelining, 100-continue, slow clients, partial requests)

/**
 * A TCP connection with a receive buffer. `readResponse()` parses one HTTP/1.1 response off the
 * buffer (interim 1xx responses are returned on their own), keeping any following bytes.
 */
export class RawConnection {
  static async open(port, host = '127.0.0.1') {
    const sock = net.connect({ port, host });
    sock.setNoDelay(true);
    await new Promise((resolve, reject) => {
      sock.once('connect', resolve);
      sock.once('error', reject);
    });
    return new RawConnection(sock);
  }

  constructor(sock) {
    this.sock = sock;
    this.buf = Buffer.alloc(0);
    this.ended = false;
    this.error = null;
    this.waiters = [];
    this.closedPromise = new Promise((resolve) => {
      sock.on('close', () => {
        this.ended = true;
        this.closedAt = performance.now();
        this.notify();
        resolve();
      });
    });
    sock.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.notify();
    });
    sock.on('end', () => {
      this.ended = true;
      this.notify();
    });
    sock.on('error', (e) => {
      this.error = e;
      this.ended = true;
      this.notify();
    });
  }

  notify() {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) {
      w();
    }
  }

  changed() {
    return new Promise((r) => this.waiters.push(r));
  }

  write(data) {
    return new Promise((resolve, reject) => {
      this.sock.write(data, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Waits until `test(buffer)` returns a non-undefined value or the deadline passes. */
  async until(test, timeoutMs, what) {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const r = test(this.buf);
      if (r !== undefined) {
        return r;
      }
      if (this.ended) {
        throw new Error(`connection closed while waiting for ${what}; received: ${JSON.stringify(this.buf.toString('latin1').slice(0, 500))}`);
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(this.buf.toString('latin1').slice(0, 500))}`);
      }
      let timer;
      await Promise.race([this.changed(), new Promise((r) => (timer = setTimeout(r, left)))]);
      clearTimeout(timer);
    }
  }

  /**
   * Reads one response: { status, reason, headers (lower-cased names; arrays joined ", "),
   * rawHead, body (Buffer), chunks (array of chunk payload strings when chunked), chunkedComplete }.
   */
  async readResponse({ timeoutMs = 5000, noBody = false } = {}) {
    const headEnd = await this.until(
      (b) => {
        const i = b.indexOf('\r\n\r\n');
        return i >= 0 ? i : undefined;
      },
      timeoutMs,
      'response head',
    );
    const rawHead = this.buf.subarray(0, headEnd).toString('latin1');
    this.buf = this.buf.subarray(headEnd + 4);
    const [statusLine, ...headerLines] = rawHead.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(statusLine);
    if (!m) {
      throw new Error(`bad status line: ${statusLine}`);
    }
    const status = Number(m[1]);
    const headers = {};
    for (const line of headerLines) {
      const i = line.indexOf(':');
      const name = line.slice(0, i).trim().toLowerCase();
      const value = line.slice(i + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const resp = { status, reason: m[2], headers, rawHead, body: Buffer.alloc(0), chunks: [] };
    if ((status >= 100 && status < 200) || status === 204 || status === 304 || noBody) {
      return resp;
    }
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const bodies = [];
      for (;;) {
        const lineEnd = await this.until(
          (b) => {
            const i = b.indexOf('\r\n');
            return i >= 0 ? i : undefined;
          },
          timeoutMs,
          'chunk size',
        );
        const size = parseInt(this.buf.subarray(0, lineEnd).toString('latin1').split(';')[0], 16);
        if (Number.isNaN(size)) {
          throw new Error(`bad chunk size line: ${this.buf.subarray(0, lineEnd).toString('latin1')}`);
        }
        await this.until((b) => (b.length >= lineEnd + 2 + size + 2 ? true : undefined), timeoutMs, 'chunk data');
        const data = this.buf.subarray(lineEnd + 2, lineEnd + 2 + size);
        if (this.buf.subarray(lineEnd + 2 + size, lineEnd + 4 + size).toString('latin1') !== '\r\n') {
          throw new Error('chunk not followed by CRLF');
        }
        this.buf = this.buf.subarray(lineEnd + 4 + size);
        if (size === 0) {
          resp.chunkedComplete = true;
          break;
        }
        bodies.push(Buffer.from(data));
        resp.chunks.push(data.toString('utf8'));
      }
      resp.body = Buffer.concat(bodies);
    } else if (headers['content-length'] !== undefined) {
      const len = Number(headers['content-length']);
      await this.until((b) => (b.length >= len ? true : undefined), timeoutMs, 'response body');
      resp.body = Buffer.from(this.buf.subarray(0, len));
      this.buf = this.buf.subarray(len);
    } else {
      await this.until((b) => (this.ended ? true : undefined), timeoutMs, 'close-delimited body');
      resp.body = Buffer.from(this.buf);
      this.buf = Buffer.alloc(0);
    }
    resp.text = resp.body.toString('utf8');
    try {
      resp.json = JSON.parse(resp.text);
    } catch {
      resp.json = undefined;
    }
    return resp;
  }

  /** Resolves true when the peer closes within timeoutMs, false otherwise. */
  async waitClosed(timeoutMs = 2000) {
    if (this.ended) {
      return true;
    }
    let timer;
    const r = await Promise.race([
      this.closedPromise.then(() => true),
      new Promise((res) => (timer = setTimeout(() => res(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    return r || this.ended;
  }

  destroy() {
    this.sock.destroy();
  }
}

/** A request as raw bytes. `body` string/Buffer; Content-Length added unless given or chunked. */
export function rawRequest(method, target, { headers = {}, body, http10 = false } = {}) {
  const h = { host: '127.0.0.1', ...headers };
  const names = Object.keys(h).map((k) => k.toLowerCase());
  if (body !== undefined && !names.includes('content-length') && !names.includes('transfer-encoding')) {
    h['content-length'] = Buffer.byteLength(body);
  }
  let head = `${method} ${target} HTTP/1.${http10 ? 0 : 1}\r\n`;
  for (const [k, v] of Object.entries(h)) {
    head += `${k}: ${v}\r\n`;
  }
  head += '\r\n';
  return body === undefined ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(body)]);
}

/** Resolves true if a TCP connect to the port is refused (or fails) within timeoutMs. */
export function connectRefused(port, timeoutMs = 1000) {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    const timer = setTimeout(() => {
      sock.destroy();
      resolve(false);
    }, timeoutMs);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.destroy();
      resolve(false);
    });
    sock.once('error', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export const REQUEST_ID_RE = /^[0-9a-f]{32}$/;

/** Asserts-free check that `body` is an OpenAI error object; returns the inner error. */
export function openaiError(body) {
  if (!body || typeof body !== 'object' || !body.error || typeof body.error !== 'object') {
    return null;
  }
  const e = body.error;
  for (const k of ['message', 'type', 'param', 'code']) {
    if (!(k in e)) {
      return null;
    }
  }
  return typeof e.message === 'string' && typeof e.type === 'string' ? e : null;
}
