import type { Markup } from './markup.js';
import { markup } from './markup.js';
import { pageLayout } from './page-layout.js';

export interface DemoLoginPageModel {
  tenantName: string;
  /** The demo user's display name. */
  userName: string;
  formAction: string;
  csrfToken: string;
}

/**
 * The sign-in of the demo tenant's hosted server (`upstream: { demo: true }`,
 * loopback only): no identity provider, no password, one button. Cancel
 * answers the client with `access_denied` like Deny on the consent page.
 */
export function demoLoginPage(model: DemoLoginPageModel): Markup {
  return pageLayout({
    title: 'Sign in',
    tenantName: model.tenantName,
    body: markup`<p>This is the local demo: there is no identity provider and no password. Anyone who reaches this computer's loopback address signs in as <strong>${model.userName}</strong>.</p>
<form method="post" action="${model.formAction}">
<input type="hidden" name="csrf" value="${model.csrfToken}">
<div class="actions">
<button type="submit" class="primary" name="decision" value="login">Continue as the demo user</button>
<button type="submit" class="secondary" name="decision" value="deny">Cancel</button>
</div>
</form>`,
  });
}
