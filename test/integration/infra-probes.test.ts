import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runBuilt, MAIN, type RunningProcess } from '../../apps/gateway/test/gateway-process.js';
import { parseDockerfile } from '@mcpgw/test-helpers/dockerfile';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { renderChart } from '@mcpgw/test-helpers/helm';
import { redisUrl } from '@mcpgw/test-helpers/redis';

// The shipped health checks, sent exactly as each orchestrator sends them to the
// built gateway started with the environment the chart renders (a non-loopback bind
// with PUBLIC_URL set): kubelet's HTTP probes (the pod's address as Host, its own
// User-Agent, no Origin), and the Dockerfile's and compose's HEALTHCHECK commands.

const execFileAsync = promisify(execFile);
const CHART = fileURLToPath(new URL('../../infra/helm/mcp-gateway', import.meta.url));
const DOCKERFILE = fileURLToPath(new URL('../../infra/Dockerfile', import.meta.url));
const COMPOSE = fileURLToPath(new URL('../../infra/compose.yaml', import.meta.url));
const SECRETS_KEY = 'probe-test-secret-probe-test-secret-probe';
/** A pod address as kubelet would use it; the request itself goes to loopback. */
const POD_IP = '10.244.3.17';

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are read structurally */
type Manifest = Record<string, any>;

interface ProbeAnswer {
  status: number;
  body: string;
}

/** One HTTP probe as kubelet sends it (pkg/probe/http: Host is the pod IP and port, User-Agent kube-probe). */
function kubeletProbe(port: number, path: string): Promise<ProbeAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        setHost: false,
        headers: { host: `${POD_IP}:${port}`, 'user-agent': 'kube-probe/1.31', accept: '*/*', connection: 'close' },
        timeout: 2_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('probe timed out')));
    req.on('error', reject);
    req.end();
  });
}

describe('the shipped health checks against the gateway as the chart runs it', () => {
  let dir: string;
  let gateway: RunningProcess;
  let port: number;
  let deployment: Manifest;

  beforeAll(async () => {
    const rendered = await renderChart(CHART, { name: 'mcp-gateway', namespace: 'default' });
    const manifests = rendered.flatMap((template) => template.manifests) as Manifest[];
    deployment = manifests.find((manifest) => manifest.kind === 'Deployment') as Manifest;
    const configMap = manifests.find((manifest) => manifest.kind === 'ConfigMap') as Manifest;
    const container = deployment.spec.template.spec.containers[0];
    const chartEnv = Object.fromEntries(
      (container.env as Manifest[]).filter((e) => 'value' in e).map((e) => [e.name as string, String(e.value)]),
    );
    expect(chartEnv.HOST, 'the chart binds every interface').toBe('0.0.0.0');
    expect(chartEnv.PUBLIC_URL, 'the chart names a public URL, so the Host guard is on').toMatch(/^https:/);

    dir = await mkdtemp(join(tmpdir(), 'gw-probes-'));
    const bootstrap = join(dir, 'gateway.yaml');
    await writeFile(bootstrap, configMap.data['gateway.yaml']);
    port = await freePort();
    gateway = runBuilt(MAIN, [], {
      env: {
        ...chartEnv,
        // What the pod gets from its volumes and Secret, placed on this machine.
        PORT: String(port),
        GATEWAY_CONFIG: bootstrap,
        DATA_DIR: join(dir, 'data'),
        REDIS_URL: redisUrl(),
        SECRETS_KEY,
      },
    });
    await gateway.waitForOutput('gateway listening');
  }, 120_000);

  afterAll(async () => {
    gateway?.child.kill('SIGTERM');
    await gateway?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['livenessProbe', 'readinessProbe', 'startupProbe'])(
    '%s: kubelet, probing by the pod address, gets 200',
    async (probeName) => {
      const container = deployment.spec.template.spec.containers[0];
      const probe = container[probeName].httpGet as { path: string; port: string | number };
      const named = (container.ports as Manifest[]).find(
        (p) => p.name === probe.port || p.containerPort === probe.port,
      );
      expect(named, `the probe's port "${probe.port}" is a container port`).toBeDefined();
      const answer = await kubeletProbe(port, probe.path);
      expect(answer, `${probeName} ${probe.path}: ${answer.body}`).toMatchObject({ status: 200 });
    },
  );

  it('still refuses the same address on the MCP endpoint (the guard is on)', async () => {
    const answer = await kubeletProbe(port, '/.well-known/oauth-protected-resource/t/example/mcp');
    expect(answer.status).toBe(403);
  });

  it("the Dockerfile's HEALTHCHECK command exits 0", async () => {
    const runtime = parseDockerfile(readFileSync(DOCKERFILE, 'utf8')).at(-1);
    const line = runtime?.instructions.find((instruction) => instruction.keyword === 'HEALTHCHECK')?.args ?? '';
    const [node, ...args] = JSON.parse(line.slice(line.indexOf('CMD ') + 4)) as string[];
    expect(node).toBe('node');
    const run = await execFileAsync(process.execPath, args, { env: { PORT: String(port) }, timeout: 5_000 }).then(
      () => 0,
      (error: { code?: number }) => error.code ?? -1,
    );
    expect(run).toBe(0);
  });

  it("compose's health check command exits 0 (its fixed port mapped to this gateway's)", async () => {
    const compose = parseYaml(readFileSync(COMPOSE, 'utf8'), { merge: true }) as Manifest;
    const test = compose.services['gateway-1'].healthcheck.test as string[];
    expect(test.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    const script = (test[3] as string).replace('127.0.0.1:8080', `127.0.0.1:${port}`);
    expect(script, 'compose asks the liveness route on loopback').toContain(`http://127.0.0.1:${port}/healthz`);
    const run = await execFileAsync(process.execPath, ['-e', script], { timeout: 5_000 }).then(
      () => 0,
      (error: { code?: number }) => error.code ?? -1,
    );
    expect(run).toBe(0);
  });
});
