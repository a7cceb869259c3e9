import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBuilt, MAIN, type Exit } from '../../apps/gateway/test/gateway-process.js';
import { freePort } from '@mcpgw/test-helpers/free-port';
import { createTestDatabase, postgresUrl, requirePostgres } from '@mcpgw/test-helpers/postgres';
import { stringify } from 'yaml';

// The built gateway, started as an operator starts it, failing to start for a reason the operator
// fixes with one setting: it exits non-zero with one line that names the setting, never a stack.

const SECRETS_KEY = 'start-failure-secret-start-failure-secret';
const PRODUCTION_TENANT = {
  id: 'acme',
  auth: { issuers: [{ issuer: 'https://idp.example.com/', discovery: true }] },
  sources: [{ id: 'welcome', type: 'static', resources: [] }],
};
/** A line of a JavaScript stack trace. */
const STACK_LINE = /^\s+at /m;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gw-start-failures-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function start(env: Record<string, string>): Promise<Exit> {
  const gateway = runBuilt(MAIN, [], { env: { DATA_DIR: join(dir, randomUUID()), LOG_LEVEL: 'warn', ...env } });
  return gateway.exited;
}

/** What the process printed on stderr, with the line a person reads first. */
function failureOf(exit: Exit): string {
  expect(exit.code, `exit code; stderr: ${exit.stderr}`).not.toBe(0);
  expect(exit.code).not.toBeNull();
  expect(exit.stdout).not.toContain('gateway listening');
  expect(exit.stderr).not.toMatch(STACK_LINE);
  return exit.stderr.trim();
}

describe('a gateway that cannot start says which setting to change', () => {
  it('PORT in use: one line naming PORT, HOST and what to do', async () => {
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const port = (holder.address() as { port: number }).port;
    // A real Postgres, so the start reaches listen without first initialising an embedded store.
    const database = await createTestDatabase('port-in-use');
    try {
      const stderr = failureOf(await start({ PORT: String(port), DATABASE_URL: database.url, SECRETS_KEY }));
      expect(stderr).toBe(
        `PORT ${port} is in use on HOST 127.0.0.1: another process listens there; set PORT to a free port`,
      );
    } finally {
      holder.close();
      await database.drop();
    }
  }, 120_000);

  it('DATABASE_URL to a closed port: one line naming DATABASE_URL, the password redacted', async () => {
    const port = await freePort();
    const url = `postgres://gateway:hunter2-not-printed@127.0.0.1:${port}/gateway`;
    const exit = await start({ PORT: String(await freePort()), DATABASE_URL: url, SECRETS_KEY });
    const stderr = failureOf(exit);
    expect(stderr).toBe(
      `DATABASE_URL (the control plane) postgres://gateway:***@127.0.0.1:${port}/gateway: connection refused: no Postgres listens there`,
    );
    expect(exit.stdout + exit.stderr).not.toContain('hunter2');
  }, 120_000);

  it('DATABASE_URL naming a database the server lacks: one line saying so', async () => {
    await requirePostgres();
    const url = new URL(postgresUrl());
    url.pathname = `/gw_missing_${randomUUID().replaceAll('-', '')}`;
    const stderr = failureOf(
      await start({ PORT: String(await freePort()), DATABASE_URL: url.toString(), SECRETS_KEY }),
    );
    expect(stderr).toMatch(
      /^DATABASE_URL \(the control plane\) postgres:\/\/\S+: no such database \(database "gw_missing_\w+" does not exist\)$/,
    );
  }, 120_000);

  it('a non-loopback HOST without DATABASE_URL: refused, naming SINGLE_REPLICA', async () => {
    // A tenant fit for a non-loopback bind, so the environment's refusal is the only problem.
    const bootstrap = join(dir, 'gateway.yaml');
    await writeFile(bootstrap, stringify({ tenants: [PRODUCTION_TENANT] }));
    const stderr = failureOf(
      await start({
        HOST: '0.0.0.0',
        PORT: String(await freePort()),
        PUBLIC_URL: 'https://mcp.example.com',
        GATEWAY_CONFIG: bootstrap,
      }),
    );
    expect(stderr).toMatch(
      /^Invalid configuration \(environment\):\n {2}- env\.DATABASE_URL: required when HOST \(0\.0\.0\.0\) is not a loopback address/,
    );
    expect(stderr).toContain('Set SINGLE_REPLICA=true to run one replica that way on purpose');
    expect(stderr.split('\n')).toHaveLength(2);
  }, 120_000);

  it('a misspelt setting: refused with the setting it probably meant', async () => {
    const stderr = failureOf(
      await start({ PORT: String(await freePort()), OPERATOR_ISUER: 'https://idp.example.com/' }),
    );
    expect(stderr.split('\n')).toEqual([
      'Invalid configuration (environment):',
      '  - env.OPERATOR_ISUER: OPERATOR_ISUER is not a setting of this gateway; did you mean OPERATOR_ISSUER?',
    ]);
  }, 120_000);
});
