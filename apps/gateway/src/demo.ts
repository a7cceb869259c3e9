import { fileURLToPath } from 'node:url';

/**
 * The bootstrap document used when GATEWAY_CONFIG is unset: one anonymous
 * tenant, `demo`, serving the bundled employee handbook so a newcomer can
 * point an MCP client at http://127.0.0.1:8080/t/demo/mcp right away.
 */
export function demoBootstrap(): { document: unknown; configDir: string } {
  return {
    // apps/gateway/, whether this runs from src/ (tests) or dist/ (npm start).
    configDir: fileURLToPath(new URL('..', import.meta.url)),
    document: {
      tenants: [
        {
          id: 'demo',
          name: 'Demo (Northwind Labs employee handbook)',
          anonymous: true,
          sources: [{ id: 'handbook', type: 'files', root: 'demo/handbook' }],
        },
      ],
    },
  };
}
