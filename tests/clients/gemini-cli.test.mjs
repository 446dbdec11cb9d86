// Google's Gemini CLI (@google/gemini-cli) run headless through Sluice, as a user points it at a
// self-hosted gateway: API-key auth (`security.auth.selectedType: gemini-api-key`), the gateway
// key as GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL at the gateway, one prompt with `-p` and
// `--output-format json`, tools approved (`--yolo`). The upstream (scripted through
// GEMINI_CLI_CUSTOM_HEADERS, which the gateway forwards to the mock) asks for the CLI's shell
// tool on a file in the working directory; the CLI runs it and sends the output back; the
// upstream then answers in words. Against a Gemini upstream every call is passed through;
// against Anthropic, OpenAI and Bedrock Converse ones it is translated, tool call and function
// response included; Gemini on Vertex AI is passed through like the Gemini API.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { makeTempDir, removeTempDir } from '../support/harness.mjs';
import {
  ANTHROPIC_MODEL,
  BEDROCK_MODEL,
  GATEWAY_KEY,
  GEMINI_MODEL,
  MOCK_TEXT,
  OPENAI_MODEL,
  VERTEX_GEMINI_MODEL,
  gatewayEntries,
  lastUpstreamBody,
  probeFeatures,
  requires,
  sumUsage,
  useClientStack,
} from './support.mjs';

await probeFeatures();
const stack = useClientStack();

const here = path.dirname(fileURLToPath(import.meta.url));
const GEMINI = path.join(here, 'node_modules', '.bin', 'gemini');
const WORDS = 3;

/**
 * Runs `gemini -m model -p prompt --output-format json --yolo` in a fresh HOME and working
 * directory holding notes.txt. Returns the JSON result, the file's secret and the exit code.
 * Killed after 90 s.
 */
async function runGemini({ model }) {
  const home = makeTempDir('sluice-gemini-home-');
  const work = makeTempDir('sluice-gemini-work-');
  mkdirSync(path.join(home, '.gemini'));
  writeFileSync(
    path.join(home, '.gemini', 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, telemetry: { enabled: false } }),
  );
  const secret = `sluice-client-test-${Math.random().toString(36).slice(2)}`;
  writeFileSync(path.join(work, 'notes.txt'), `${secret}\n`);
  const headers = [
    `x-mock-events: ${WORDS}`,
    'x-mock-tool-name: run_shell_command',
    // One member: the CLI splits its header list at commas followed by a name and a colon.
    `x-mock-tool-arguments: ${JSON.stringify({ command: 'cat notes.txt' })}`,
  ];
  const proc = spawn(GEMINI, ['-m', model, '-p', 'Print what notes.txt says.', '--output-format', 'json', '--yolo'], {
    cwd: work,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      GEMINI_API_KEY: GATEWAY_KEY,
      GOOGLE_GEMINI_BASE_URL: stack.gw.url,
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
      GEMINI_CLI_CUSTOM_HEADERS: headers.join(', '),
      NO_COLOR: '1',
      CI: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 90000);
  const code = await new Promise((resolve) => proc.on('exit', (c, s) => resolve(c ?? s)));
  clearTimeout(timer);
  removeTempDir(home);
  removeTempDir(work);
  const context = `exit ${code}; stdout: ${stdout.slice(0, 3000)}; stderr: ${stderr.slice(-3000)}`;
  let result = null;
  try {
    result = JSON.parse(stdout.slice(stdout.indexOf('{')));
  } catch {
    // reported through context
  }
  return { code, result, secret, context };
}

/** The CLI's token figures over every model it used. */
function reportedTokens(result) {
  let prompt = 0;
  let candidates = 0;
  for (const m of Object.values(result.stats.models)) {
    prompt += m.tokens.prompt;
    candidates += m.tokens.candidates;
  }
  return { prompt, candidates };
}

async function assertShellLoop(run, { model, passthrough }) {
  const { code, result, secret, context } = run;
  assert.equal(code, 0, context);
  assert.ok(result, context);
  assert.equal(result.error, undefined, context);
  assert.equal(result.response.trim(), MOCK_TEXT(WORDS), context);
  const shell = result.stats.tools.byName.run_shell_command;
  assert.ok(shell && shell.success >= 1, `the CLI ran the shell tool: ${context}`);

  const entries = await gatewayEntries(stack);
  const calls = entries.filter((e) => e.alias === model);
  assert.ok(calls.length >= 2, `one tool call, then the answer: ${calls.length} calls`);
  for (const e of calls) {
    assert.equal(e.api, 'gemini');
    assert.equal(e.upstream[0].passthrough, passthrough);
  }
  // The command's output went back upstream as the tool's result, in the upstream's protocol.
  const { body } = await lastUpstreamBody(stack);
  assert.ok(body.includes(secret), 'the shell output reached the upstream');
  // What the CLI reports is what the gateway metered.
  const metered = sumUsage(calls);
  const reported = reportedTokens(result);
  assert.equal(reported.prompt, metered.input_tokens, context);
  assert.equal(reported.candidates, metered.output_tokens, context);
}

describe('Gemini CLI through Sluice', () => {
  test('Gemini upstream (passthrough): a shell tool turn', requires('geminiAdapter', 'geminiIngress'), async () => {
    const run = await runGemini({ model: GEMINI_MODEL });
    await assertShellLoop(run, { model: GEMINI_MODEL, passthrough: true });
  });

  test('Anthropic upstream (translation): a shell tool turn', requires('geminiIngress'), async () => {
    const run = await runGemini({ model: ANTHROPIC_MODEL });
    await assertShellLoop(run, { model: ANTHROPIC_MODEL, passthrough: false });
    const { json } = await lastUpstreamBody(stack);
    const result = json.messages.at(-1).content.find((b) => b.type === 'tool_result');
    assert.ok(result, 'the function response became a tool_result');
    assert.ok(json.tools.some((t) => t.name === 'run_shell_command'));
  });

  test('OpenAI upstream (translation): a shell tool turn', requires('geminiIngress'), async () => {
    const run = await runGemini({ model: OPENAI_MODEL });
    await assertShellLoop(run, { model: OPENAI_MODEL, passthrough: false });
    const { json } = await lastUpstreamBody(stack);
    assert.equal(json.messages.at(-1).role, 'tool');
  });

  test('Vertex AI Gemini upstream (passthrough): a shell tool turn', requires('geminiIngress'), async () => {
    const run = await runGemini({ model: VERTEX_GEMINI_MODEL });
    await assertShellLoop(run, { model: VERTEX_GEMINI_MODEL, passthrough: true });
    const { target, headers } = await lastUpstreamBody(stack);
    assert.match(target, /\/projects\/sluice-clients\/locations\/us-east5\/publishers\/google\/models\/gemini-2\.5-flash:streamGenerateContent/);
    assert.match(headers.authorization, /^Bearer ya29\.mock-\d+$/);
  });

  test('Bedrock Converse upstream (translation): a shell tool turn', requires('geminiIngress'), async () => {
    const run = await runGemini({ model: BEDROCK_MODEL });
    await assertShellLoop(run, { model: BEDROCK_MODEL, passthrough: false });
    const { json } = await lastUpstreamBody(stack);
    assert.ok(json.messages.at(-1).content.some((b) => b.toolResult));
  });
});
