import { fileURLToPath } from 'node:url';

/**
 * The bootstrap document used when GATEWAY_CONFIG is unset: one tenant,
 * `demo`, serving the bundled employee handbook, protected by its hosted
 * authorization server with the demo login (docs/authorization-server.md), so
 * a newcomer can point an MCP client at http://127.0.0.1:8080/t/demo/mcp right
 * away and go through real OAuth: a sign-in page and a consent page.
 */
export function demoBootstrap(): { document: unknown; configDir: string } {
  return {
    // apps/gateway/, whether this runs from src/ (tests) or dist/ (npm start).
    configDir: fileURLToPath(new URL('..', import.meta.url)),
    document: {
      tenants: [
        {
          id: 'demo',
          name: 'Demo: Brindlewood Instruments employee handbook',
          // The hosted authorization server with the demo login (loopback only):
          // a stock MCP client runs the whole OAuth flow against it (the user
          // presses "Continue as the demo user", then "Allow"), and
          // `npm run token -- --tenant demo` prints a token for curl.
          auth: { issuers: [{ development: true }], requiredScopes: ['mcp:read'] },
          grants: [{ name: 'handbook-readers', match: { scopes: ['mcp:read'] }, allow: [{ source: 'handbook' }] }],
          sources: [{ id: 'handbook', type: 'files', root: 'demo/handbook' }],
          // Browser sign-in of the demo admin (docs/admin-sign-in.md): open
          // http://127.0.0.1:8080/admin/tenants/demo/sign-in (the console, docs/admin-console.md).
          adminSignIn: { clientId: 'mcpgw-admin-demo', scopes: ['openid', 'mcpgw:admin'] },
          // Whoever holds mcpgw:admin for the demo's admin resource manages the demo tenant.
          adminRoleBindings: [{ name: 'demo-admins', scopes: ['mcpgw:admin'] }],
        },
      ],
    },
  };
}
