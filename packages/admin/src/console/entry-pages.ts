import type { ConsoleViewer } from './console-layout.js';
import { consolePage } from './console-layout.js';
import { CONSOLE_PREFIX, tenantConsolePath } from './console-paths.js';
import type { FormProblem } from './form-problem.js';
import { markup } from '@mcpgw/core';

/** `/`: what this server is, and where to go. */
export function homePage(input: { mcpEndpointExample: string }): string {
  return consolePage({
    title: 'MCP resource gateway',
    main: markup`<p>
        This server publishes organisations' data as MCP resources: each tenant has its own endpoint
        (<code>${input.mcpEndpointExample}</code>), its own sources and its own identity provider.
      </p>
      <ul>
        <li>
          <a href="${CONSOLE_PREFIX}/">Admin console</a>: tenant admins sign in with their tenant's identity provider.
        </li>
        <li>
          <a href="/admin/v1/docs">Admin API reference</a> (<a href="/admin/v1/openapi.json">OpenAPI document</a>).
        </li>
      </ul>`,
  });
}

/** `/admin/`: sign in to a tenant's console (no tenant is named: the page never says which exist). */
export function consoleIndexPage(input: { viewer?: ConsoleViewer; operator?: boolean }): string {
  return consolePage({
    title: 'Admin console',
    ...(input.viewer === undefined ? {} : { viewer: input.viewer }),
    main: markup`${input.operator === true ? markup`<p><a href="${CONSOLE_PREFIX}/tenants">Every tenant</a> (operators).</p>` : ''}
      <form class="stack" method="get" action="${CONSOLE_PREFIX}/sign-in">
        <div class="field">
          <label for="f-tenant">Your tenant's id</label>
          <p class="hint" id="f-tenant-hint">You sign in with your tenant's own identity provider.</p>
          <input id="f-tenant" name="tenant" required aria-describedby="f-tenant-hint" autocomplete="organization" />
        </div>
        <div class="actions"><button type="submit">Sign in</button></div>
      </form>
      <p>
        Operators: <a href="${CONSOLE_PREFIX}/operator/sign-in">sign in as an operator</a>, then open
        <a href="${CONSOLE_PREFIX}/tenants">every tenant</a>.
      </p>
      <p><a href="/admin/v1/docs">Admin API reference</a></p>`,
  });
}

/** A tenant page without a session: a real link that signs in and comes back here. */
export function signedOutPage(input: { tenantId: string; signInHref: string; reason?: string }): string {
  return consolePage({
    title: 'Sign in',
    main: markup`${input.reason === undefined ? '' : markup`<p class="notice warn" role="status">${input.reason}</p>`}
      <p>
        The console of tenant <code>${input.tenantId}</code> needs you signed in with the tenant's identity provider.
      </p>
      <p><a class="button" href="${input.signInHref}">Sign in to ${input.tenantId}</a></p>
      <p><a href="${tenantConsolePath(input.tenantId)}">Back</a> · <a href="${CONSOLE_PREFIX}/">Admin console</a></p>`,
  });
}

/** A refusal that is the whole answer (no such tenant, not allowed): the API's problem, as a page. */
export function problemPage(problem: FormProblem, viewer?: ConsoleViewer): string {
  return consolePage({
    title: problem.title,
    ...(viewer === undefined ? {} : { viewer }),
    main: markup`<p role="alert">${problem.detail}</p>
      <p><a href="${CONSOLE_PREFIX}/">Admin console</a></p>`,
  });
}
