import { readFileSync } from 'node:fs';
import type { ServerIdentity } from '@mcpgw/protocol';

const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

/** The gateway's `serverInfo`; `instructions` are per tenant. */
export function serverIdentity(tenantName: string): ServerIdentity {
  return {
    name: 'mcp-resource-gateway',
    title: `MCP resource gateway: ${tenantName}`,
    version: manifest.version,
    instructions:
      `Read-only resources of ${tenantName}. Call resources/list to browse descriptors (paginated; follow nextCursor), ` +
      'resources/templates/list for parameterised URIs, and resources/read with one uri to fetch its contents.',
  };
}
