import { mkdir, readdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { GatewayConfig } from '@mcpgw/config';
import type { TokenTarget } from './local-issuers.js';

/**
 * What a running gateway with a demo login leaves in DATA_DIR for
 * `npm run token`: who it is and what its loopback issuers sign for. The
 * token command then mints for the gateway that is actually running, whatever
 * PORT or GATEWAY_CONFIG the shell that runs the command has.
 */
export interface RunningGateway extends TokenTarget {
  pid: number;
  /** Where it listens, as its start line printed it. */
  url: string;
  /** Its configuration's origin: a file path, or "built-in demo". */
  config: string;
}

/** One file per process, beside the loopback issuers' keys (the token command needs those too). */
function recordsDir(config: GatewayConfig): string {
  return join(config.env.DATA_DIR, 'running');
}

/** Writes this process's record; the returned function removes it (at shutdown). */
export async function recordRunningGateway(
  config: GatewayConfig,
  record: Omit<RunningGateway, 'pid'>,
): Promise<() => Promise<void>> {
  const dir = recordsDir(config);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${process.pid}.json`);
  const temporary = `${path}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ pid: process.pid, ...record }, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
  return () => unlink(path).catch(() => undefined);
}

/** The records of live processes; a record left by a process that died without cleaning up is removed. */
export async function findRunningGateways(config: GatewayConfig): Promise<RunningGateway[]> {
  const dir = recordsDir(config);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const found: RunningGateway[] = [];
  for (const name of names.filter((entry) => /^\d+\.json$/.test(entry))) {
    const path = join(dir, name);
    const record = await readFile(path, 'utf8')
      .then((text) => JSON.parse(text) as RunningGateway)
      .catch(() => undefined);
    if (
      record === undefined ||
      !Number.isSafeInteger(record.pid) ||
      typeof record.tenants !== 'object' ||
      record.tenants === null
    )
      continue;
    if (isAlive(record.pid)) found.push(record);
    else await unlink(path).catch(() => undefined);
  }
  return found.sort((a, b) => a.pid - b.pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
