import { displayText } from './display-text.js';
import type { Markup } from './markup.js';
import { markup } from './markup.js';
import { pageLayout } from './page-layout.js';
import { scopeDescription } from './scope-descriptions.js';

/** How many characters of a client's self-chosen name the page shows. */
const CLIENT_NAME_MAX = 80;

export interface ConsentPageModel {
  tenantName: string;
  client: {
    /** `client_name` as the client registered or published it: self-asserted, never verified. */
    name?: string | undefined;
    id: string;
    /** The host of the redirect URI the answer goes to: what tells a person where they are sent. */
    redirectHost: string;
  };
  /** The scopes being asked for now, in request order. */
  scopes: readonly string[];
  /** The resources (RFC 8707) the token will be for: the tenant's MCP endpoint. */
  resources: readonly string[];
  /** Where the form posts: the interaction's own URL. */
  formAction: string;
  csrfToken: string;
}

/**
 * The consent page (OAuth 2.1 section 4.1.1, RFC 6819 section 5.2.4.1: the
 * server asks the resource owner before it issues a code). It names the
 * client by its name and its id, the host it sends the browser back to, the
 * tenant, each scope and the resource, and offers Allow and Deny as the two
 * buttons of one form: a plain POST, no script. The client's name is its own
 * claim (RFC 7591 section 5 warns it may be misleading), so the page says so
 * and puts the redirect host beside it.
 */
export function consentPage(model: ConsentPageModel): Markup {
  const name = model.client.name === undefined ? '' : displayText(model.client.name, CLIENT_NAME_MAX);
  const who = name === '' ? 'An application' : name;
  const title = name === '' ? 'Allow this application?' : `Allow ${name}?`;
  return pageLayout({
    title,
    tenantName: model.tenantName,
    body: markup`<p><strong><bdi>${who}</bdi></strong> wants to use your <strong>${model.tenantName}</strong> account.</p>
<h2>It will be able to</h2>
${scopeList(model.scopes)}
<h2>About this application</h2>
<dl>
<dt>Name it gives itself</dt><dd>${name === '' ? markup`<span class="muted">none given</span>` : markup`<bdi>${name}</bdi>`}</dd>
<dt>Client ID</dt><dd><code>${model.client.id}</code></dd>
<dt>Sends you back to</dt><dd><code>${model.client.redirectHost}</code></dd>
${model.resources.length === 0 ? '' : markup`<dt>Access to</dt>${model.resources.map((resource) => markup`<dd><code>${resource}</code></dd>`)}`}
</dl>
<p class="note">Allow only if you started this from an application you trust and it sends you back where you expect. You can withdraw this permission later.</p>
<form method="post" action="${model.formAction}">
<input type="hidden" name="csrf" value="${model.csrfToken}">
<div class="actions">
<button type="submit" class="primary" name="decision" value="allow">Allow</button>
<button type="submit" class="secondary" name="decision" value="deny">Deny</button>
</div>
</form>`,
  });
}

function scopeList(scopes: readonly string[]): Markup {
  if (scopes.length === 0) return markup`<p>Act on your behalf, with no particular permission.</p>`;
  return markup`<ul class="scopes">
${scopes.map((scope) => {
  const description = scopeDescription(scope);
  return description === undefined
    ? markup`<li><code>${scope}</code></li>`
    : markup`<li>${description} <span class="muted">(<code>${scope}</code>)</span></li>`;
})}
</ul>`;
}
