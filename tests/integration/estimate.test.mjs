// `sluice estimate` and `sluice check-prices` from the outside: the binary prices a workload with
// the catalogue built into it (no source tree needed) or with --prices FILE, prints exact
// decimals, says so for an unaccounted model, and check-prices reports catalogue mistakes with
// file:line.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, describe, test } from 'node:test';

import { makeTempDir, removeTempDir, repoRoot, runBinary, sluiceBin } from '../support/harness.mjs';

const dir = makeTempDir('sluice-estimate-');
after(() => removeTempDir(dir));

const catalogue = `catalogue: itest
date: "2026-11-30"
versions:
  - id: old
    effective_from: 2026-01-01T00:00:00Z
    prices:
      - { adapter: openai, model: my-model, input: 1, output: 2 }
  - id: new
    effective_from: 2026-12-01T10:00:00Z
    prices:
      - { adapter: openai, model: my-model, input: 3, cache_read: 0.3, output: 4 }
`;
const cataloguePath = path.join(dir, 'prices.yaml');
writeFileSync(cataloguePath, catalogue);

describe('sluice estimate', () => {
  test('prices a default-catalogue model per call, per day and per month', async () => {
    const r = await runBinary(sluiceBin, [
      'estimate', '--model', 'gpt-4.1', '--input-tokens', '1000', '--output-tokens', '500',
      '--calls-per-day', '1000', '--at', '2026-12-15T12:00:00Z',
    ], { env: { PATH: process.env.PATH } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /model: +gpt-4\.1 \(adapter kind openai\)/);
    assert.match(r.stdout, /prices: +sluice-default/);
    assert.match(r.stdout, /price version: +2026-11-30/);
    // 1000 x $2 + 500 x $8 per million tokens.
    assert.match(r.stdout, /per call: +0\.006 USD\n/);
    assert.match(r.stdout, /per day: +6 USD \(1000 calls\)/);
    assert.match(r.stdout, /per month: +180 USD \(30 days\)/);
  });

  test('the version is the one in effect at --at, to the millisecond', async () => {
    const args = (at) => [
      'estimate', '--prices', cataloguePath, '--model', 'my-model', '--provider-kind', 'openai',
      '--input-tokens', '1000000', '--cache-read-tokens', '500000', '--output-tokens', '0',
      '--at', at,
    ];
    const before = await runBinary(sluiceBin, args('2026-12-01T09:59:59.999Z'));
    assert.equal(before.code, 0, before.stderr);
    assert.match(before.stdout, /price version: +old/);
    // No cache_read rate in `old`: the cached half is charged at the input rate.
    assert.match(before.stdout, /per call: +1 USD/);
    assert.match(before.stdout, /input_rate:no_cache_read_rate/);
    const after = await runBinary(sluiceBin, args('2026-12-01T10:00:00Z'));
    assert.equal(after.code, 0, after.stderr);
    assert.match(after.stdout, /price version: +new/);
    assert.match(after.stdout, /per call: +1\.65 USD/); // 500000 x 3 + 500000 x 0.3
  });

  test('an unaccounted model is said to be unaccounted, with exit status 2', async () => {
    const r = await runBinary(sluiceBin, [
      'estimate', '--model', 'no-such-model-9', '--input-tokens', '10', '--output-tokens', '10',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stdout, /no-such-model-9 is UNACCOUNTED/);
    assert.match(r.stdout, /not as zero/);
    assert.doesNotMatch(r.stdout, /per call:/);
  });

  test('bad arguments are refused', async () => {
    const r = await runBinary(sluiceBin, [
      'estimate', '--model', 'gpt-4.1', '--input-tokens', '10', '--output-tokens', '1',
      '--cache-read-tokens', '11',
    ]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /cannot be larger/);
    const at = await runBinary(sluiceBin, [
      'estimate', '--model', 'gpt-4.1', '--input-tokens', '10', '--output-tokens', '1', '--at', 'tomorrow',
    ]);
    assert.equal(at.code, 1);
    assert.match(at.stderr, /--at: invalid RFC 3339/);
  });
});

describe('sluice check-prices', () => {
  test('accepts a valid catalogue and lists its versions', async () => {
    const r = await runBinary(sluiceBin, ['check-prices', cataloguePath]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^OK: .*prices\.yaml: itest \(2026-11-30; 2 versions, latest new\)/);
    assert.match(r.stdout, /version old from 2026-01-01T00:00:00Z: 1 price entry/);
    assert.match(r.stdout, /version new from 2026-12-01T10:00:00Z: 1 price entry/);
  });

  test('reports a mistake with file, line and field', async () => {
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, catalogue.replace('input: 3,', 'input: 3.0000001,'));
    const r = await runBinary(sluiceBin, ['check-prices', bad]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /bad\.yaml:11:\d+: versions\[1\]\.prices\[0\]\.input: more than 6 decimal places/);
  });

  test('the shipped default catalogue validates', async () => {
    const r = await runBinary(sluiceBin, ['check-prices', path.join(repoRoot, 'prices', 'default.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /sluice-default/);
  });
});
