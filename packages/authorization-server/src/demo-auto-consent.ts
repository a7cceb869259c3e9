import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InteractionContext, InteractionHandler } from './authorization-server-options.js';
import { DEMO_SUBJECT } from './demo-account.js';

/**
 * The demo login (`upstream: { demo: true }`, loopback only) until the
 * interaction pages replace it: answers the interaction URL the way a user
 * who always says yes would. It signs in the demo user and grants every
 * requested scope the requested resource allows, then redirects back to the
 * authorization endpoint, which redirects to the client with a code. No page
 * is shown, so a stock MCP client completes the flow unattended.
 *
 * The grant names only scopes a resource offers: asking for more yields a
 * token with fewer scopes, never an error (RFC 6749 section 3.3 lets the
 * server narrow the request).
 */
export const demoAutoConsent: InteractionHandler = {
  async interaction(context, uid) {
    const { provider, req, res, logger } = context;
    let interaction;
    try {
      interaction = await provider.interactionDetails(req, res);
    } catch (error) {
      // No (or a stale) interaction cookie: a bookmarked or replayed interaction URL.
      logger.debug({ err: error }, 'authorization server: interaction not found');
      return sendText(
        res,
        400,
        'This sign-in attempt expired or was started in another browser. Start again from your MCP client.\n',
      );
    }
    if (interaction.uid !== uid) {
      return sendText(
        res,
        400,
        'This sign-in link does not belong to the sign-in in progress. Start again from your MCP client.\n',
      );
    }
    await consent(context, interaction, req, res);
  },
};

async function consent(
  context: InteractionContext,
  interaction: Awaited<ReturnType<InteractionContext['provider']['interactionDetails']>>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { provider, logger } = context;
  const { params, prompt } = interaction;
  const clientId = String(params.client_id);
  const existing = interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId);
  const grant = existing ?? new provider.Grant({ accountId: DEMO_SUBJECT, clientId });

  const requested = typeof params.scope === 'string' ? params.scope.split(' ').filter((s) => s !== '') : [];
  // oidc-provider counts every scope it knows as an OpenID scope too (resource scopes included), and
  // wants those granted as such; they appear in no access token unless a resource allows them.
  const known = new Set(['openid', 'offline_access', ...context.scopes]);
  const oidcScopes = requested.filter((scope) => known.has(scope));
  if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
  // A consent prompt names what is still missing; a login prompt names nothing, hence the params above.
  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = prompt.details;
  if (Array.isArray(missingOIDCScope)) grant.addOIDCScope((missingOIDCScope as string[]).join(' '));
  if (Array.isArray(missingOIDCClaims)) grant.addOIDCClaims(missingOIDCClaims as string[]);
  for (const [indicator, scopes] of Object.entries((missingResourceScopes ?? {}) as Record<string, string[]>)) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }

  const indicators = params.resource === undefined ? [] : [params.resource].flat();
  for (const indicator of indicators) {
    // Unknown resources never get here: oidc-provider refused them (invalid_target) before the interaction.
    const offered = typeof indicator === 'string' ? context.resourceScopes(indicator) : undefined;
    if (offered === undefined) continue;
    const allowed = requested.filter((scope) => offered.includes(scope));
    if (allowed.length > 0) grant.addResourceScope(indicator as string, allowed.join(' '));
  }

  const grantId = await grant.save();
  logger.debug({ clientId, scope: requested.join(' '), resources: indicators }, 'authorization server: demo consent');
  await provider.interactionFinished(
    req,
    res,
    { login: { accountId: DEMO_SUBJECT }, consent: { grantId } },
    { mergeWithLastSubmission: false },
  );
}

function sendText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.end(text);
}
