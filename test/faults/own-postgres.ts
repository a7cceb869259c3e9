import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@mcpgw/test-helpers/free-port';

const run = promisify(execFile);

/**
 * A Postgres server of the test's own (`initdb` into a temporary folder, on a
 * spare loopback port), so stopping it affects no other test. Trust
 * authentication, 127.0.0.1 only, fsync off: it holds nothing worth keeping.
 */
export interface OwnPostgresServer {
  /** postgres://postgres@127.0.0.1:{port}/postgres */
  readonly url: string;
  /** `pg_ctl stop -m fast`: sessions are ended, the port refuses from then on. */
  stop(): Promise<void>;
  /** `pg_ctl start` on the same folder and port; resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it (if running) and removes its folder. */
  close(): Promise<void>;
}

/** The binaries of the newest Postgres under /usr/lib/postgresql (Debian's layout), or PG_BIN. */
function postgresBin(): string {
  if (process.env.PG_BIN !== undefined && process.env.PG_BIN !== '') return process.env.PG_BIN;
  const versions = readdirSync('/usr/lib/postgresql')
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  if (versions[0] === undefined) throw new Error('no Postgres binaries under /usr/lib/postgresql: set PG_BIN');
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

export async function startOwnPostgres(): Promise<OwnPostgresServer> {
  const bin = postgresBin();
  const folder = await mkdtemp(join(tmpdir(), 'gw-own-postgres-'));
  // initdb and pg_ctl refuse to run as root: as root, run them as the postgres account.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(folder, Number(stdout.trim()), Number(gid.trim()));
  }
  const tool = (name: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, name), ...args]) : run(join(bin, name), args);
  const data = join(folder, 'data');
  await tool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const serverOptions = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off`;
  let running = false;
  const start = async () => {
    await tool('pg_ctl', ['-D', data, '-o', serverOptions, '-l', join(folder, 'log'), '-w', 'start']);
    running = true;
  };
  const stop = async () => {
    await tool('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
    running = false;
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async close() {
      if (running) await stop().catch(() => undefined);
      await rm(folder, { recursive: true, force: true });
    },
  };
}
