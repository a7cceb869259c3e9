import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { within } from '@mcpgw/test-helpers/within';

// The process as an operator runs it (`node apps/gateway/dist/main.js`, what
// `npm start` does after building): it starts on its embedded defaults,
// refuses an invalid bootstrap file with every problem named, and drains and
// exits cleanly on SIGTERM.

const MAIN = fileURLToPath(new URL('../../apps/gateway/dist/main.js', import.meta.url));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function startProcess(env: Record<string, string>) {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<Run>((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  void exited.then(() => clearTimeout(timer));
  const output = () => stdout;
  return { child, exited, output };
}

describe('the gateway process', () => {
  it('starts on its embedded defaults, serves the demo tenant, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-process-'));
    const run = startProcess({ PORT: String(port), DATA_DIR: dataDir });
    await within(90_000, () => expect(run.output()).toContain('gateway listening'), 'the gateway listening');
    expect(run.output()).toContain(`http://127.0.0.1:${port}/t/demo/mcp`);
    const metadata = await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/t/demo/mcp`);
    expect(await metadata.json()).toMatchObject({ resource: `http://127.0.0.1:${port}/t/demo/mcp` });
    run.child.kill('SIGTERM');
    const result = await run.exited;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('shutting down');
  }, 120_000);

  it('refuses to start on an invalid bootstrap file, naming every problem, and exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-process-'));
    const path = join(dir, 'gateway.json');
    await writeFile(
      path,
      JSON.stringify({
        tenants: [
          { id: 'acme', anonymous: true, sources: [{ id: 'docs', type: 'files', root: './nope', colour: 'red' }] },
        ],
      }),
    );
    const result = await startProcess({ GATEWAY_CONFIG: path, PORT: String(await freePort()) }).exited;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration');
    expect(result.stderr).toContain('tenants[0].sources[0]');
    expect(result.stderr).toContain('colour');
    expect(result.stdout).not.toContain('gateway listening');
  }, 120_000);

  it('refuses an anonymous tenant on a non-loopback bind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-process-'));
    const path = join(dir, 'gateway.json');
    await writeFile(
      path,
      JSON.stringify({
        tenants: [{ id: 'acme', anonymous: true, sources: [{ id: 's', type: 'static', resources: [] }] }],
      }),
    );
    const result = await startProcess({ GATEWAY_CONFIG: path, HOST: '0.0.0.0', PUBLIC_URL: 'https://mcp.example.com' })
      .exited;
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/anonymous tenants are allowed only on a loopback bind/);
  }, 120_000);
});
