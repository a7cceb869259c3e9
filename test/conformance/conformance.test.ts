/**
 * The official MCP conformance suite against the gateway, on both wires, as
 * part of `npm test`. The gateway serves gateway.config.json: tenant
 * `conformance`, which trusts the development issuer. The token comes
 * from `mintTenantToken`, exactly what `npm run token -- --tenant conformance`
 * prints; scripts/conformance.mjs puts its bearer-adding proxy in front of the
 * gateway (the suite cannot send Authorization), runs the scenarios with the
 * suite's Node 22 and judges them against expected-failures.yaml. The script is
 * spawned, not imported, so this test runs exactly what a person runs by hand.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTenantToken } from '@mcpgw/gateway/testing';
import { startGateway } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const configPath = fileURLToPath(new URL('./gateway.config.json', import.meta.url));
const script = fileURLToPath(new URL('../../scripts/conformance.mjs', import.meta.url));
/** The script bounds each scenario (30 s at worst, two at a time); this bounds the whole run. */
const RUN_LIMIT_MS = 280_000;
/** A refused run stops at the script's preflight, before any scenario. */
const REFUSED_LIMIT_MS = 20_000;

/** The part of `<output-dir>/summary.json` this test reads. */
interface ScenarioResult {
  wire: string;
  scenario: string;
  ok: boolean;
  checksFile?: string;
}
/** The part of the suite's checks.json this test reads. */
interface Check {
  id: string;
  status: string;
  details?: { hostHeader?: string; statusCode?: number; body?: { error?: { message?: string } } };
}
interface Summary {
  url: string;
  viaBearerProxy: boolean;
  ok: boolean;
  ms: number;
  results: ScenarioResult[];
}

function runScript(
  args: string[],
  options: { env?: Record<string, string>; limitMs?: number } = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    // CONFORMANCE_BEARER only where a test sets it: the runner's own must not leak in.
    const env = { ...process.env, CONFORMANCE_BEARER: '', ...options.env };
    const child = spawn(process.execPath, [script, ...args], { cwd: repoRoot, env });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.limitMs ?? RUN_LIMIT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const outputDirFor = (name: string) =>
  `${repoRoot}.conformance/vitest-${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`;

describe('official MCP conformance suite', () => {
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;
  let url = '';

  beforeAll(async () => {
    gateway = await startGateway({ configPath });
    url = `${gateway.baseUrl}/t/conformance/mcp`;
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('meets expectations on every scenario of both wires, with a development-issuer token', async () => {
    if (!gateway) throw new Error('the gateway did not start');
    // dns-rebinding-protection needs a loopback URL, and so does the development issuer.
    expect(new URL(url).hostname).toMatch(/^(127\.0\.0\.1|localhost|\[::1\])$/);
    const { token, resource, scope } = await mintTenantToken(gateway.config, { tenant: 'conformance' });
    expect(resource).toBe(url);
    expect(scope).toBe('mcp:read');

    const outputDir = outputDirFor('bearer');
    const { code, output } = await runScript(['--url', url, '--bearer', token, '--output-dir', outputDir]);
    // The script's report names each unexpected check with the suite's message,
    // the checks.json and log paths, and the command that reruns the scenario.
    expect(code, output).toBe(0);
    expect(output).not.toContain(token);

    const summaryText = await readFile(`${outputDir}/summary.json`, 'utf8');
    expect(summaryText).not.toContain(token);
    const summary = JSON.parse(summaryText) as Summary;
    expect(summary).toMatchObject({ url, viaBearerProxy: true, ok: true });
    expect(summary.results.length, output).toBe(15);
    const wires = new Set(summary.results.map((r) => r.wire));
    expect([...wires].sort()).toEqual(['2025-11-25', '2026-07-28']);
    expect(
      summary.results.filter((r) => !r.ok).map((r) => `${r.wire} ${r.scenario}`),
      output,
    ).toEqual([]);

    // The proxy passes the suite's Host through: the gateway's own guard, not
    // the proxy, refuses the rebinding probe's `Host: evil.example.com`.
    const rebinding = summary.results.filter((r) => r.scenario === 'dns-rebinding-protection');
    expect(rebinding.map((r) => r.wire).sort()).toEqual(['2025-11-25', '2026-07-28']);
    for (const result of rebinding) {
      const checks = JSON.parse(await readFile(result.checksFile ?? '', 'utf8')) as Check[];
      const refused = checks.find((c) => c.id === 'localhost-host-rebinding-rejected');
      expect(refused?.details).toMatchObject({ hostHeader: 'evil.example.com', statusCode: 403 });
      expect(refused?.details?.body?.error?.message).toMatch(/Host header/);
    }
    console.log(output);
  });

  it('is refused without a token: the tenant answers 401 and the script stops before any scenario', async () => {
    const plain = await mcpPost(url, 'resources/list');
    expect(plain.status).toBe(401);
    expect(plain.headers.get('www-authenticate')).toMatch(/^Bearer .*resource_metadata="/);
    expect(plain.body).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });

    const { code, output } = await runScript(['--url', url, '--output-dir', outputDirFor('no-token')], {
      limitMs: REFUSED_LIMIT_MS,
    });
    expect(code, output).toBe(2);
    expect(output).toMatch(/refused a request without a token \(HTTP 401/);
    expect(output).toContain('--bearer');
  });

  it('reports a token the tenant refuses (from CONFORMANCE_BEARER) without printing it', async () => {
    if (!gateway) throw new Error('the gateway did not start');
    // A real development-issuer token, but for another audience: it reaches the
    // gateway through the proxy (hence invalid_token, not a bare challenge).
    const { token } = await mintTenantToken(
      { ...gateway.config, env: { ...gateway.config.env, PUBLIC_URL: 'http://127.0.0.1:1' } },
      { tenant: 'conformance' },
    );
    const { code, output } = await runScript(['--url', url, '--output-dir', outputDirFor('bad-token')], {
      env: { CONFORMANCE_BEARER: token },
      limitMs: REFUSED_LIMIT_MS,
    });
    expect(code, output).toBe(2);
    expect(output).toMatch(/refused the bearer token \(HTTP 401.*error="invalid_token"/);
    expect(output).not.toContain(token);
  });
});
