import { freePort } from '@mcpgw/test-helpers/free-port';
import type { TestApp } from '@mcpgw/test-helpers/gateway';
import { buildTestApp } from '@mcpgw/test-helpers/gateway';
import { demoBootstrap } from '../src/demo.js';
import type { Jar } from './admin-sign-in-harness.js';
import { SECRET, cookieHeader, store } from './admin-sign-in-harness.js';

/** The one static resource of tenant acme's one source. */
export interface AcmeResource {
  source: string;
  uri: string;
  name: string;
  text: string;
}

/** A listening gateway of the console tests, and a browser's GET against it. */
export interface ConsoleTestGateway {
  built: TestApp;
  baseUrl: string;
  /** A GET as the signed-in browser holding `jar`: status, HTML, and the response (its cookies kept in `jar`). */
  page(jar: Jar, path: string): Promise<{ status: number; html: string; response: Response }>;
}

/**
 * The real gateway (buildApp over PGlite) on a free loopback port with the
 * demo's tenants plus `acme`: a development issuer, one static source with
 * one resource, a grant of all of it, and admin sign-in through that issuer
 * for holders of `mcpgw:admin`. Two tenants, so a test can try to cross.
 */
export async function startConsoleTestGateway(resource: AcmeResource): Promise<ConsoleTestGateway> {
  const port = await freePort();
  const demo = demoBootstrap();
  const tenants = (demo.document as { tenants: Record<string, unknown>[] }).tenants;
  const acme = {
    id: 'acme',
    auth: { issuers: [{ development: true }] },
    sources: [
      {
        id: resource.source,
        type: 'static',
        resources: [{ uri: resource.uri, name: resource.name, text: resource.text }],
      },
    ],
    grants: [{ name: 'all', match: {}, allow: [{ source: resource.source }] }],
    adminSignIn: { clientId: 'mcpgw-admin-acme', scopes: ['openid', 'mcpgw:admin'] },
    adminRoleBindings: [{ name: 'acme-admins', scopes: ['mcpgw:admin'] }],
  };
  const built = await buildTestApp({
    bootstrap: { ...demo, document: { tenants: [...tenants, acme] } },
    env: { HOST: '127.0.0.1', PORT: String(port), SECRETS_KEY: SECRET },
    admin: {},
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await built.app.listen({ host: '127.0.0.1', port });
  return {
    built,
    baseUrl,
    async page(jar, path) {
      const response = await fetch(new URL(path, baseUrl), {
        redirect: 'manual',
        headers: { cookie: cookieHeader(jar) },
      });
      store(jar, response);
      return { status: response.status, html: await response.text(), response };
    },
  };
}
