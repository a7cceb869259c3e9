import type { Markup, MarkupValue } from '@mcpgw/core';
import { markup } from '@mcpgw/core';
import type { ConsoleViewer } from './console-layout.js';
import { consolePage } from './console-layout.js';
import { tenantConsolePath } from './console-paths.js';
import type { FormProblem } from './form-problem.js';
import { writeFields } from './form-problem.js';
import { scrollRegionStart } from './scroll-region.js';

/** A client connected to the tenant's hosted authorization server, as the admin API lists it. */
export interface ConnectedClientView {
  readonly clientId: string;
  readonly kind: 'metadata-document' | 'registered';
  readonly clientName?: string | undefined;
  readonly redirectUris: readonly string[];
  readonly createdAt?: string | undefined;
  readonly lastUsedAt?: string | undefined;
}

/** What a user allowed a client, as the admin API lists it. */
export interface UserGrantView {
  readonly grantId: string;
  readonly subject: string;
  readonly clientId: string;
  readonly scopes: readonly string[];
  readonly createdAt?: string | undefined;
}

export interface ConnectedAppsPageInput {
  readonly tenantId: string;
  readonly viewer: ConsoleViewer;
  readonly clients: readonly ConnectedClientView[];
  readonly grants: readonly UserGrantView[];
  /**
   * The client this tenant's console signs its admins in with (the tenant's
   * `adminSignIn.clientId`), when it is one of the hosted server's clients:
   * revoking it signs every console admin out, so its row says so and its
   * revoke asks for a confirmation.
   */
  readonly consoleClientId?: string | undefined;
  /** What the last revoke did (its notice), or the API's refusal of it. */
  readonly notice?: string;
  readonly problem?: FormProblem;
}

/** The checkbox a revoke of the console's own client must carry (checked) to go ahead. */
export const CONFIRM_CONSOLE_CLIENT_FIELD = 'confirm-console-client';

/** The form field naming what a revoke button removes: the page's one route tells the two apart by it. */
export const CONNECTED_APPS_ACTIONS = ['revoke-client', 'revoke-grant'] as const;
export type ConnectedAppsAction = (typeof CONNECTED_APPS_ACTIONS)[number];

/**
 * Where a client sends its users back, by host: enough to tell a local tool
 * (loopback, RFC 8252 section 7.3) from a web service or an app's own scheme
 * (section 7.1) at a glance, without the full URLs' length.
 */
export function redirectHostsOf(redirectUris: readonly string[]): string[] {
  const hosts = redirectUris.map((uri) => {
    if (!URL.canParse(uri)) return uri;
    const url = new URL(uri);
    return url.host === '' ? `${url.protocol}` : url.host;
  });
  return [...new Set(hosts)];
}

const when = (iso: string | undefined): MarkupValue =>
  iso === undefined ? markup`<span class="hint">unknown</span>` : new Date(iso).toISOString();

function revokeForm(
  tenantId: string,
  csrf: string | undefined,
  action: ConnectedAppsAction,
  id: string,
  label: Markup,
  confirm?: Markup,
): Markup {
  return markup`<form class="inline" method="post" action="${tenantConsolePath(tenantId, 'connected-apps')}">
    ${writeFields(csrf)}<input type="hidden" name="action" value="${action}" /><input
      type="hidden"
      name="id"
      value="${id}"
    />${
      confirm === undefined
        ? ''
        : markup`<label class="confirm"
            ><input type="checkbox" name="${CONFIRM_CONSOLE_CLIENT_FIELD}" value="yes" required /> ${confirm}</label
          >`
    }<button class="danger" type="submit">${label}</button>
  </form>`;
}

function clientsTable(input: ConnectedAppsPageInput): Markup {
  if (input.clients.length === 0) return markup`<p>No client has connected yet.</p>`;
  const csrf = input.viewer.csrfToken;
  return markup`${scrollRegionStart('Clients')}
      <table>
        <caption class="skip">
          Clients
        </caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Client id</th>
            <th scope="col">Redirect hosts</th>
            <th scope="col">Created (UTC)</th>
            <th scope="col">Last used (UTC)</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${input.clients.map((client) => {
            const name = client.clientName ?? client.clientId;
            const isConsole = client.clientId === input.consoleClientId;
            return markup`<tr>
              <th scope="row">
                ${client.clientName ?? markup`<span class="hint">unnamed</span>`}<br /><span class="hint"
                  >${client.kind === 'registered' ? 'registered' : 'metadata document'}</span
                >${isConsole ? markup`<br /><strong class="warn">This console's own sign-in client</strong>` : ''}
              </th>
              <td><code>${client.clientId}</code></td>
              <td>
                ${redirectHostsOf(client.redirectUris).map((host) => markup`<code>${host}</code> `)}
              </td>
              <td>${when(client.createdAt)}</td>
              <td>${when(client.lastUsedAt)}</td>
              <td>
                ${revokeForm(
                  input.tenantId,
                  csrf,
                  'revoke-client',
                  client.clientId,
                  markup`Revoke<span class="skip"> ${name}</span>`,
                  isConsole ? markup`Revoking it signs every admin of this console out` : undefined,
                )}
              </td>
            </tr>`;
          })}
        </tbody>
      </table>
    </div>`;
}

function grantsTable(input: ConnectedAppsPageInput): Markup {
  if (input.grants.length === 0) return markup`<p>No user has allowed a client anything yet.</p>`;
  const csrf = input.viewer.csrfToken;
  const names = new Map(input.clients.map((client) => [client.clientId, client.clientName]));
  return markup`${scrollRegionStart('Users’ grants')}
      <table>
        <caption class="skip">
          Users’ grants
        </caption>
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col">Client</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created (UTC)</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${input.grants.map(
            (grant) => markup`<tr>
              <th scope="row"><code>${grant.subject}</code></th>
              <td>
                ${names.get(grant.clientId) ?? ''}
                <code>${grant.clientId}</code>
              </td>
              <td>${grant.scopes.map((scope) => markup`<code>${scope}</code> `)}</td>
              <td>${when(grant.createdAt)}</td>
              <td>
                ${revokeForm(
                  input.tenantId,
                  csrf,
                  'revoke-grant',
                  grant.grantId,
                  markup`Revoke<span class="skip"> the grant of ${grant.subject} to ${grant.clientId}</span>`,
                )}
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}

function messageOf(input: ConnectedAppsPageInput): MarkupValue {
  if (input.problem !== undefined) {
    const { problem } = input;
    return markup`<div class="notice bad" role="alert">
      <p><strong>${problem.title}</strong> (${problem.status}): ${problem.detail}</p>
    </div>`;
  }
  if (input.notice !== undefined) {
    return markup`<div role="status"><p class="notice good">${input.notice}</p></div>`;
  }
  return undefined;
}

/**
 * Who is connected to the tenant's hosted authorization server and what its
 * users allowed them, with a revoke button on each: a client's revoke removes
 * it with its grants and their tokens, a grant's ends its refresh tokens.
 */
export function connectedAppsPage(input: ConnectedAppsPageInput): string {
  return consolePage({
    title: 'Connected apps',
    tenant: { id: input.tenantId, page: 'connected-apps' },
    viewer: input.viewer,
    main: markup`${messageOf(input)}
      <p class="hint">
        The clients of this tenant's authorization server and what its users allowed them. Revoking a client
        removes it with its grants and every token issued under them (a registered client must register again; a
        metadata-document client may connect again). Revoking a grant ends its refresh tokens; an access token
        already issued lasts until it expires.
      </p>
      <h2>Clients</h2>
      ${clientsTable(input)}
      <h2>Users’ grants</h2>
      ${grantsTable(input)}`,
  });
}
