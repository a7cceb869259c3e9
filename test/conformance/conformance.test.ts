/**
 * The official MCP conformance suite against the gateway, on both wires
 * (issue 2, "Tests in npm test"). The gateway serves gateway.config.json (tenant
 * `conformance`, anonymous, loopback only); scripts/conformance.mjs runs the
 * scenarios with the suite's Node 22 and judges them against expected-failures.yaml.
 * The script is spawned, not imported, so this test runs exactly what a person
 * runs by hand.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../helpers/gateway.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const configPath = fileURLToPath(new URL('./gateway.config.json', import.meta.url));
const script = fileURLToPath(new URL('../../scripts/conformance.mjs', import.meta.url));
/** The script bounds each scenario (30 s at worst, two at a time); this bounds the whole run. */
const RUN_LIMIT_MS = 280_000;

/** The part of `<output-dir>/summary.json` this test reads. */
interface ScenarioResult {
  wire: string;
  scenario: string;
  ok: boolean;
}
interface Summary {
  ok: boolean;
  ms: number;
  results: ScenarioResult[];
}

function runScript(url: string, outputDir: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, '--url', url, '--output-dir', outputDir], { cwd: repoRoot });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS);
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

describe('official MCP conformance suite', () => {
  let gateway: Awaited<ReturnType<typeof startGateway>> | undefined;

  beforeAll(async () => {
    gateway = await startGateway({ configPath });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('meets expectations on every scenario of both wires', async () => {
    if (!gateway) throw new Error('the gateway did not start');
    const url = `${gateway.baseUrl}/t/conformance/mcp`;
    // dns-rebinding-protection needs a loopback URL, and anonymous tenants bind only there.
    expect(new URL(url).hostname).toMatch(/^(127\.0\.0\.1|localhost|\[::1\])$/);

    const outputDir = `${repoRoot}.conformance/vitest-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    const { code, output } = await runScript(url, outputDir);
    // The script's report names each unexpected check with the suite's message,
    // the checks.json and log paths, and the command that reruns the scenario.
    expect(code, output).toBe(0);

    const summary = JSON.parse(await readFile(`${outputDir}/summary.json`, 'utf8')) as Summary;
    expect(summary.results.length, output).toBeGreaterThan(0);
    const wires = new Set(summary.results.map((r) => r.wire));
    expect([...wires].sort()).toEqual(['2025-11-25', '2026-07-28']);
    expect(
      summary.results.filter((r) => !r.ok).map((r) => `${r.wire} ${r.scenario}`),
      output,
    ).toEqual([]);
    console.log(output);
  });
});
