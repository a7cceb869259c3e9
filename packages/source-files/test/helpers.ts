import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GatewayError, silentLogger, type Logger, type ResourceDescriptor, type Source } from '@mcpgw/core';
import { afterEach } from 'vitest';
import { filesSourceFactory } from '../src/files-source-factory.js';
import type { FilesSourceConfig } from '../src/files-source-options.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A fresh temp folder, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mcpgw-files-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes `files` (relative path → content) below `root`, creating folders. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/** Validates `config` like the config loader, then creates the source (closed after the test). */
export async function createSource(
  config: FilesSourceConfig,
  configDir: string,
  logger: Logger = silentLogger,
): Promise<Source> {
  const result = await filesSourceFactory.optionsSchema['~standard'].validate(config);
  if (result.issues !== undefined) throw new Error(`invalid options: ${JSON.stringify(result.issues)}`);
  const source = await filesSourceFactory.create(result.value, {
    sourceId: 'docs',
    tenantId: 'acme',
    configDir,
    logger,
  });
  cleanups.push(() => source.close());
  return source;
}

/** Every descriptor, fetched page by page; fails on a page over the limit or a runaway loop. */
export async function listAll(source: Source, limit: number): Promise<{ items: ResourceDescriptor[]; pages: number }> {
  const items: ResourceDescriptor[] = [];
  let position: string | undefined;
  let pages = 0;
  do {
    const page = await source.listResources(position === undefined ? { limit } : { limit, position });
    if (page.items.length > limit) throw new Error(`page of ${page.items.length} exceeds limit ${limit}`);
    items.push(...page.items);
    position = page.nextPosition;
    pages += 1;
  } while (position !== undefined && pages < 1_000);
  return { items, pages };
}

/** The rejection of `promise`, asserted to be a GatewayError. */
export async function gatewayErrorOf(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return error;
}

/** The one text of a read result. */
export function textOf(contents: Awaited<ReturnType<Source['read']>>): string {
  const [entry, ...rest] = contents ?? [];
  if (entry === undefined || rest.length > 0 || !('text' in entry)) {
    throw new Error(`expected one text entry, got ${JSON.stringify(contents)}`);
  }
  return entry.text;
}
