// OpenAI's Codex CLI (@openai/codex, its native binary) run headless through Sluice, as a user
// runs it against a self-hosted gateway: a model provider in $CODEX_HOME/config.toml with
// `wire_api = "responses"`, its base URL at the gateway and a gateway key in the environment
// variable it names, one prompt with `codex exec`. The route goes to an Anthropic upstream
// (sluice-mock-upstream), so every turn is translated: Codex's namespace, custom (apply_patch)
// and web_search tools, `include`, `store: false`, `prompt_cache_key` and `client_metadata` all
// go through the Responses request decoder. The upstream (scripted through the provider's
// http_headers) asks for Codex's shell tool on a file in the working directory; Codex runs it,
// sends the output back through the gateway, and the upstream then answers in words.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { makeTempDir, removeTempDir } from '../support/harness.mjs';
import {
  ANTHROPIC_MODEL,
  BEDROCK_MODEL,
  GATEWAY_KEY,
  MOCK_TEXT,
  gatewayEntries,
  lastUpstreamBody,
  probeFeatures,
  requires,
  useClientStack,
  VERTEX_CLAUDE_MODEL,
} from './support.mjs';

await probeFeatures();
const stack = useClientStack();

const here = path.dirname(fileURLToPath(import.meta.url));
const CODEX = path.join(here, 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
const WORDS = 3;

const tomlString = (s) => JSON.stringify(s); // a TOML basic string is a JSON string here

/**
 * Runs `codex exec --json prompt` in a fresh CODEX_HOME and working directory holding notes.txt,
 * with the upstream told by headers which call to make (none: `tool` null). Returns the JSONL
 * events, the file's secret, stderr and the exit code. Killed after 60 s.
 */
async function runCodex({ model, tool }) {
  const home = makeTempDir('sluice-codex-home-');
  const work = makeTempDir('sluice-codex-work-');
  const secret = `sluice-client-test-${Math.random().toString(36).slice(2)}`;
  writeFileSync(path.join(work, 'notes.txt'), `${secret}\n`);
  const headers = { 'x-mock-events': String(WORDS) };
  if (tool) {
    headers['x-mock-tool-name'] = tool.name;
    headers['x-mock-tool-arguments'] = JSON.stringify(tool.arguments);
  }
  const config = [
    `model = ${tomlString(model)}`,
    'model_provider = "sluice"',
    'approval_policy = "never"',
    'sandbox_mode = "danger-full-access"',
    'model_reasoning_effort = "low"',
    // Codex's hosted search tool, so the decoder's drop is exercised too.
    'web_search = "live"',
    '[model_providers.sluice]',
    'name = "Sluice"',
    `base_url = ${tomlString(`${stack.gw.url}/v1`)}`,
    'env_key = "SLUICE_GATEWAY_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    `http_headers = { ${Object.entries(headers).map(([k, v]) => `${tomlString(k)} = ${tomlString(v)}`).join(', ')} }`,
    '',
  ].join('\n');
  writeFileSync(path.join(home, 'config.toml'), config);
  const proc = spawn(process.execPath, [CODEX, 'exec', '--json', '--skip-git-repo-check', '-C', work, 'Print what notes.txt says.'], {
    cwd: work,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      CODEX_HOME: home,
      SLUICE_GATEWAY_KEY: GATEWAY_KEY,
      RUST_LOG: 'error',
      NO_COLOR: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 60000);
  const code = await new Promise((resolve) => proc.on('exit', (c, s) => resolve(c ?? s)));
  clearTimeout(timer);
  removeTempDir(home);
  removeTempDir(work);
  const events = [];
  for (const line of stdout.split('\n')) {
    if (line.trim().startsWith('{')) {
      try {
        events.push(JSON.parse(line));
      } catch {
        // not an event line
      }
    }
  }
  const context = `exit ${code}; stdout: ${stdout.slice(0, 3000)}; stderr: ${stderr.slice(-3000)}`;
  return { code, events, secret, stderr, context };
}

/** The checks every run makes: Codex finished its turn without an error, every request went through. */
async function assertCompletedTurn(run, alias = ANTHROPIC_MODEL) {
  const { code, events, context } = run;
  const failed = events.filter((e) => e.type === 'turn.failed' || e.type === 'error');
  assert.deepEqual(failed, [], context);
  assert.ok(events.some((e) => e.type === 'turn.completed'), `no turn.completed: ${context}`);
  assert.equal(code, 0, context);
  const messages = events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message');
  assert.equal(messages.at(-1)?.item?.text, MOCK_TEXT(WORDS), context);
  const entries = await gatewayEntries(stack);
  const calls = entries.filter((e) => e.path === '/v1/responses');
  assert.ok(calls.length >= 1, 'Codex called /v1/responses');
  for (const e of calls) {
    // The one field left out of each translated request: the web_search tool (the IR has no
    // server tools; prompt_cache_key, client_metadata, include and store change nothing).
    assert.equal(e.ignored_fields, 1, 'web_search is the one thing left out');
    assert.equal(e.alias, alias);
    assert.equal(e.api, 'openai_responses');
    assert.equal(e.upstream[0].passthrough, false, 'a Responses caller is translated for this upstream');
  }
  return calls;
}

describe('Codex CLI through Sluice', () => {
  test('Anthropic upstream (translation): a shell tool turn', requires('responsesIngress'), async () => {
    const run = await runCodex({ model: ANTHROPIC_MODEL, tool: { name: 'exec_command', arguments: { cmd: 'cat notes.txt' } } });
    const calls = await assertCompletedTurn(run);
    assert.equal(calls.length, 2, 'one tool call, then the answer');

    // What reached Anthropic: Codex's tools as functions (namespaces flattened, apply_patch a
    // function of one string, web_search left out), and the shell output as the tool result.
    const { json: sent } = await lastUpstreamBody(stack);
    const names = sent.tools.map((t) => t.name);
    assert.ok(names.includes('exec_command'), names.join(','));
    assert.ok(!names.includes('web_search'));
    // Codex 0.171 sends its sub-agent tools as namespace `multi_agent_v1` (tools[4]: the turn
    // that failed before the namespace flattening): here as `<namespace>__<tool>` functions.
    assert.ok(names.includes('multi_agent_v1__spawn_agent'), names.join(','));
    for (const n of names) {
      assert.match(n, /^[A-Za-z0-9_-]{1,64}$/, 'every tool name fits Anthropic');
    }
    const last = sent.messages.at(-1);
    const result = last.content.find((b) => b.type === 'tool_result');
    assert.ok(result, JSON.stringify(last).slice(0, 500));
    assert.ok(JSON.stringify(result.content).includes(run.secret), 'the command output went back upstream');

    // Codex ran the command the upstream asked for.
    const command = run.events.find((e) => e.type === 'item.completed' && e.item?.type === 'command_execution');
    assert.ok(command, run.context);
    assert.match(command.item.command, /cat notes\.txt/);
  });

  for (const [alias, where] of [[VERTEX_CLAUDE_MODEL, 'Vertex AI Claude'], [BEDROCK_MODEL, 'Bedrock Converse']]) {
    test(`${where} upstream (translation): a shell tool turn`, requires('responsesIngress'), async () => {
      const run = await runCodex({ model: alias, tool: { name: 'exec_command', arguments: { cmd: 'cat notes.txt' } } });
      const calls = await assertCompletedTurn(run, alias);
      assert.equal(calls.length, 2, 'one tool call, then the answer');
      const { body, target } = await lastUpstreamBody(stack);
      assert.ok(body.includes(run.secret), 'the command output went back upstream');
      assert.match(target, alias === BEDROCK_MODEL ? /\/converse-stream$/ : /:streamRawPredict$/);
    });
  }
});
