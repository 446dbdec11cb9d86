// Claude Code (@anthropic-ai/claude-code, its native binary) run headless through Sluice, as a
// user runs it: ANTHROPIC_BASE_URL at the gateway, a gateway key as ANTHROPIC_API_KEY, one prompt
// with -p. Each case is one agent turn that uses a tool: the upstream (sluice-mock-upstream,
// scripted through ANTHROPIC_CUSTOM_HEADERS) asks for Claude Code's Read tool on a file in the
// working directory, Claude Code reads it and sends the result back through the gateway, and the
// upstream then answers in words (the mock's rule for a conversation ending with a tool result).
// Claude Code starts slowly (about half a second), so the cases are few.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { makeTempDir, removeTempDir } from '../support/harness.mjs';
import {
  ANTHROPIC_MODEL,
  BEDROCK_INVOKE_MODEL,
  BEDROCK_MODEL,
  VERTEX_CLAUDE_MODEL,
  GATEWAY_KEY,
  GEMINI_MODEL,
  MOCK_TEXT,
  OPENAI_MODEL,
  PRIVATE_MODEL,
  PROVIDER_KEY,
  assertToolLoopUsage,
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
const CLAUDE = path.join(here, 'node_modules', '@anthropic-ai', 'claude-code', 'bin', 'claude.exe');
const WORDS = 3;

/**
 * Runs `claude -p prompt` in a fresh HOME (also its working directory) holding notes.txt, with
 * the upstream told by headers to call `Read` on that file. Returns the parsed output, the file's
 * secret line, stderr and the exit code. Killed after 30 s.
 */
async function runClaude({ model, format = 'json', extraHeaders = {}, pseudonymised = false }) {
  const home = makeTempDir('sluice-claude-home-');
  const secret = `sluice-client-test-${Math.random().toString(36).slice(2)}`;
  const file = path.join(home, 'notes.txt');
  writeFileSync(file, `${secret}\n`);
  // Pseudonymised: the upstream only ever sees the home directory as [HOME_1], so it asks for
  // the file by that name; the gateway puts the real name back before Claude Code reads it.
  const asked = pseudonymised ? path.join(path.dirname(home), '[HOME_1]', 'notes.txt') : file;
  const headers = {
    'x-mock-events': String(WORDS),
    'x-mock-tool-name': 'Read',
    'x-mock-tool-arguments': JSON.stringify({ file_path: asked }),
    ...extraHeaders,
  };
  const prompt = pseudonymised ? `Read ${file} and tell me what it says.` : 'Read notes.txt and tell me what it says.';
  const args = ['-p', prompt, '--model', model, '--max-turns', '4', '--output-format', format];
  if (format === 'stream-json') {
    args.push('--verbose');
  }
  const proc = spawn(CLAUDE, args, {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: stack.gw.url,
      ANTHROPIC_API_KEY: GATEWAY_KEY,
      ANTHROPIC_CUSTOM_HEADERS: Object.entries(headers).map(([k, v]) => `${k}: ${v}`).join('\n'),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
  proc.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30000);
  const code = await new Promise((resolve) => proc.on('exit', (c, s) => resolve(c ?? s)));
  clearTimeout(timer);
  removeTempDir(home);
  const lines = stdout.split('\n').filter((l) => l.trim().startsWith('{'));
  let parsed;
  try {
    parsed = lines.map((l) => JSON.parse(l));
  } catch (e) {
    throw new Error(`Claude Code printed non-JSON (exit ${code}): ${stdout.slice(0, 2000)}\nstderr: ${stderr.slice(0, 2000)}`);
  }
  const result = parsed.find((m) => m.type === 'result');
  assert.ok(result, `no result from Claude Code (exit ${code}); stdout: ${stdout.slice(0, 2000)}; stderr: ${stderr.slice(0, 2000)}`);
  return { code, result, messages: parsed, secret, stderr, home };
}

/** The checks every case makes: the result, the tool round trip upstream, the access log. */
async function assertAgentTurn(run, { alias }) {
  const { code, result, secret } = run;
  assert.equal(result.is_error, false, `Claude Code reported an error: ${JSON.stringify(result).slice(0, 1500)}`);
  assert.equal(result.subtype, 'success');
  assert.equal(code, 0);
  assert.equal(result.result, MOCK_TEXT(WORDS), 'the final text is the upstream answer after the tool result');
  assert.equal(result.num_turns, 2, 'one tool call, then the answer');
  assert.deepEqual(result.permission_denials, []);

  // The tool really ran: its output (the file's secret line) reached the upstream, in the
  // upstream's own protocol, as the result of the call the upstream made.
  const { json: sent, headers } = await lastUpstreamBody(stack);
  assert.ok(JSON.stringify(sent).includes(secret), 'the tool result carries the file content upstream');
  assert.ok(!JSON.stringify(headers).includes(GATEWAY_KEY), 'the caller key never reaches the upstream');

  // Every request Claude Code made went through and succeeded; its usage is the gateway's.
  const entries = await gatewayEntries(stack);
  for (const e of entries) {
    assert.equal(e.alias, alias, `every model call goes to ${alias} (${e.method} ${e.path})`);
    assert.equal(e.api, 'anthropic');
  }
  await assertToolLoopUsage(stack, entries, { alias, words: WORDS, caller: 'anthropic' });
  const total = sumUsage(entries);
  assert.equal(result.usage.input_tokens, total.input_tokens, 'Claude Code counts the input the gateway metered');
  assert.equal(result.usage.output_tokens, total.output_tokens, 'Claude Code counts the output the gateway metered');
  assert.equal(result.modelUsage[alias]?.outputTokens, total.output_tokens);
  return { sent, entries };
}

describe('Claude Code through Sluice', () => {
  test('Anthropic upstream (passthrough): a Read tool turn, stream-json', async () => {
    const run = await runClaude({ model: ANTHROPIC_MODEL, format: 'stream-json' });
    const { sent } = await assertAgentTurn(run, { alias: ANTHROPIC_MODEL });
    // The stream-json transcript shows the call and its result as Claude Code saw them.
    const toolUse = run.messages
      .filter((m) => m.type === 'assistant')
      .flatMap((m) => m.message.content)
      .find((b) => b.type === 'tool_use');
    assert.equal(toolUse?.name, 'Read');
    const toolResult = run.messages
      .filter((m) => m.type === 'user')
      .flatMap((m) => (Array.isArray(m.message.content) ? m.message.content : []))
      .find((b) => b.type === 'tool_result');
    assert.equal(toolResult?.tool_use_id, toolUse.id);
    assert.ok(JSON.stringify(toolResult.content).includes(run.secret));
    // Passthrough: what Claude Code sent reaches Anthropic as sent, model aside.
    assert.equal(sent.model, 'claude-sonnet-4-5-20250929');
    const last = sent.messages.at(-1);
    assert.ok(last.content.some((b) => b.type === 'tool_result' && b.tool_use_id === toolUse.id));
    const { headers } = await lastUpstreamBody(stack);
    assert.equal(headers['x-api-key'], PROVIDER_KEY);
    assert.match(headers['anthropic-beta'] ?? '', /claude-code-/, "Claude Code's betas reach Anthropic");
  });

  test('OpenAI chat upstream (translation): a Read tool turn', async () => {
    const run = await runClaude({ model: OPENAI_MODEL });
    const { sent } = await assertAgentTurn(run, { alias: OPENAI_MODEL });
    const last = sent.messages.at(-1);
    assert.equal(last.role, 'tool');
    const call = sent.messages.findLast((m) => m.role === 'assistant').tool_calls[0];
    assert.equal(call.function.name, 'Read');
    assert.equal(last.tool_call_id, call.id, 'the result answers the call');
    assert.ok(sent.tools.some((t) => t.function?.name === 'Read'));
  });

  test('guardrails: a pseudonymised path comes back whole in the stream, the upstream never sees it', async () => {
    const run = await runClaude({ model: PRIVATE_MODEL, format: 'stream-json', pseudonymised: true });
    await assertAgentTurn(run, { alias: PRIVATE_MODEL });
    const toolUse = run.messages
      .filter((m) => m.type === 'assistant')
      .flatMap((m) => m.message.content)
      .find((b) => b.type === 'tool_use');
    assert.equal(toolUse?.input?.file_path, path.join(run.home, 'notes.txt'), 'Claude Code got the real path back');
    const { json: sent } = await lastUpstreamBody(stack);
    const upstream = JSON.stringify(sent);
    assert.ok(!upstream.includes(path.basename(run.home)), 'the home directory never reached the upstream');
    assert.ok(upstream.includes('[HOME_1]'), upstream.slice(0, 500));
  });

  test('Gemini upstream (translation): a Read tool turn', requires('geminiAdapter'), async () => {
    const run = await runClaude({ model: GEMINI_MODEL });
    const { sent } = await assertAgentTurn(run, { alias: GEMINI_MODEL });
    const last = sent.contents.at(-1);
    const response = last.parts.find((p) => p.functionResponse)?.functionResponse;
    assert.equal(response?.name, 'Read');
  });

  test('Bedrock InvokeModel upstream (passthrough): a Read tool turn', async () => {
    const run = await runClaude({ model: BEDROCK_INVOKE_MODEL, format: 'stream-json' });
    const { sent } = await assertAgentTurn(run, { alias: BEDROCK_INVOKE_MODEL });
    // Claude Code's Messages body as it sent it, but for what InvokeModel takes elsewhere.
    assert.equal(sent.anthropic_version, 'bedrock-2023-05-31');
    assert.equal(sent.model, undefined);
    assert.equal(sent.stream, undefined);
    const { target, headers } = await lastUpstreamBody(stack);
    assert.match(target, /\/invoke-with-response-stream$/);
    assert.match(headers.authorization, /^AWS4-HMAC-SHA256 /);
  });

  test('Vertex AI Claude upstream (passthrough): a Read tool turn', async () => {
    const run = await runClaude({ model: VERTEX_CLAUDE_MODEL });
    const { sent } = await assertAgentTurn(run, { alias: VERTEX_CLAUDE_MODEL });
    assert.equal(sent.anthropic_version, 'vertex-2023-10-16');
    assert.equal(sent.model, undefined);
    const { target, headers } = await lastUpstreamBody(stack);
    assert.match(target, /publishers\/anthropic\/models\/claude-sonnet-4-5@20250929:(stream)?[rR]awPredict$/);
    assert.match(headers.authorization, /^Bearer ya29\.mock-\d+$/);
  });

  test('Bedrock Converse upstream (translation): a Read tool turn', async () => {
    const run = await runClaude({ model: BEDROCK_MODEL });
    const { sent } = await assertAgentTurn(run, { alias: BEDROCK_MODEL });
    const result = sent.messages.at(-1).content.find((b) => b.toolResult)?.toolResult;
    assert.ok(result, JSON.stringify(sent.messages.at(-1)).slice(0, 500));
    assert.ok(sent.toolConfig.tools.some((t) => t.toolSpec.name === 'Read'));
  });
});
