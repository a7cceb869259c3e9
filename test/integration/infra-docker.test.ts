import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { run as lintDockerfile } from 'dockerfilelint';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDockerfile, type DockerStage } from '@mcpgw/test-helpers/dockerfile';

// infra/Dockerfile, checked where no Docker engine runs (docs/operations.md, "What was verified
// where"): a lint, the properties the issue asks of the image, and the HEALTHCHECK command run
// for real against a local HTTP server.

const DOCKERFILE = readFileSync(new URL('../../infra/Dockerfile', import.meta.url), 'utf8');
const DOCKERIGNORE = readFileSync(new URL('../../infra/Dockerfile.dockerignore', import.meta.url), 'utf8');
const GATEWAY_PACKAGE = JSON.parse(
  readFileSync(new URL('../../apps/gateway/package.json', import.meta.url), 'utf8'),
) as { main: string };
const stages = parseDockerfile(DOCKERFILE);
const runtime = stages.at(-1) as DockerStage;
const execFileAsync = promisify(execFile);

function args(stage: DockerStage, keyword: string): string[] {
  return stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
}

describe('infra/Dockerfile', () => {
  it('passes dockerfilelint without findings', () => {
    expect(lintDockerfile('infra/Dockerfile', DOCKERFILE)).toEqual([]);
  });

  it('builds in stages on one pinned Node LTS major (even major, 24 or later)', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) {
      const match = /^node:(\d+)-[a-z]+-slim$/.exec(stage.image);
      expect(match, `${stage.image} pins a Node major on a slim Debian base`).not.toBeNull();
      const major = Number(match?.[1]);
      expect(major % 2, 'even Node majors are the LTS lines').toBe(0);
      expect(major).toBeGreaterThanOrEqual(24);
    }
    expect(new Set(stages.map((s) => s.image)).size).toBe(1);
  });

  it('ships only built output and production dependencies in the final stage', () => {
    const copies = args(runtime, 'COPY');
    // Nothing from the build context: every COPY takes a previous stage's output.
    for (const copy of copies) expect(copy).toMatch(/^--from=\S+ /);
    expect(copies).toEqual(['--from=deps /app ./']);
    // deps installs production dependencies only, lays the build's dist folders over them and
    // strips sources, tests and build configuration.
    const deps = stages.find((s) => s.name === 'deps') as DockerStage;
    const depsRuns = args(deps, 'RUN').join(' ');
    expect(depsRuns).toMatch(/npm ci --omit=dev/);
    expect(args(deps, 'COPY')).toContain('--from=build /out/ ./');
    for (const name of ['src', 'test', "'tsconfig*.json'"]) expect(depsRuns).toContain(`-name ${name}`);
    const build = stages.find((s) => s.name === 'build') as DockerStage;
    expect(args(build, 'RUN').join(' ')).toMatch(/-name dist -type d -exec cp -R --parents \{\} \/out\//);
    // And the context never carries local builds or modules in.
    for (const pattern of ['**/node_modules', '**/dist', '.git', '.env']) {
      expect(DOCKERIGNORE.split('\n')).toContain(pattern);
    }
  });

  it('runs as a numeric non-root user with DATA_DIR on a declared volume', () => {
    const user = args(runtime, 'USER').at(-1) ?? '';
    expect(user).toMatch(/^\d+(:\d+)?$/);
    expect(Number(user.split(':')[0])).toBeGreaterThan(0);
    const env = args(runtime, 'ENV').join(' ');
    expect(env).toMatch(/DATA_DIR=\/data\b/);
    expect(env).toMatch(/HOST=0\.0\.0\.0\b/);
    expect(args(runtime, 'VOLUME').join(' ')).toContain('"/data"');
  });

  it('keeps the entry point of apps/gateway', () => {
    expect(JSON.parse(args(runtime, 'CMD').at(-1) ?? 'null')).toEqual([
      'node',
      `apps/gateway/${GATEWAY_PACKAGE.main.replace(/^\.\//, '')}`,
    ]);
  });

  describe('HEALTHCHECK', () => {
    const healthcheck = args(runtime, 'HEALTHCHECK').at(-1) ?? '';
    const command = JSON.parse(healthcheck.slice(healthcheck.indexOf('CMD ') + 4)) as string[];
    let close: (() => void) | undefined;
    afterEach(() => close?.());

    async function probe(status: number | 'refused'): Promise<{ code: number; paths: string[] }> {
      const paths: string[] = [];
      const server = createServer((req, res) => {
        paths.push(req.url ?? '');
        res.writeHead(status === 'refused' ? 500 : status).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      if (status === 'refused') await new Promise((resolve) => server.close(resolve));
      else close = () => server.close();
      const [file, ...rest] = command;
      expect(file).toBe('node');
      const code = await execFileAsync(process.execPath, rest, { env: { PORT: String(port) }, timeout: 5_000 }).then(
        () => 0,
        (error: { code?: number }) => error.code ?? -1,
      );
      return { code, paths };
    }

    it('asks the liveness route on PORT and succeeds on 200', async () => {
      expect(healthcheck).toMatch(/--interval=\d+s/);
      expect(healthcheck).toMatch(/--timeout=\d+s/);
      expect(await probe(200)).toEqual({ code: 0, paths: ['/healthz'] });
    });

    it('fails on an error status and when nothing listens', async () => {
      expect((await probe(503)).code).toBe(1);
      expect((await probe('refused')).code).toBe(1);
    });
  });
});
