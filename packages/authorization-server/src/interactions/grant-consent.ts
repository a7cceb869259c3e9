import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/**
 * Records the user's Allow as an oidc-provider Grant: the one this
 * authorization already has (a remembered consent being extended with new
 * scopes) or a new one for the account and the client, given exactly what
 * the consent prompt found missing: OpenID Connect scopes and claims, and
 * for each requested resource (RFC 8707) the requested scopes it offers.
 * Returns the grant's id, for `interactionFinished`.
 */
export async function grantConsent(provider: Provider, interaction: Interaction, accountId: string): Promise<string> {
  const clientId = String(interaction.params.client_id);
  const existing = interaction.grantId === undefined ? undefined : await provider.Grant.find(interaction.grantId);
  const grant = existing ?? new provider.Grant({ accountId, clientId });

  const { missingOIDCScope, missingOIDCClaims, missingResourceScopes } = interaction.prompt.details;
  if (Array.isArray(missingOIDCScope)) grant.addOIDCScope(missingOIDCScope as string[]);
  if (Array.isArray(missingOIDCClaims)) grant.addOIDCClaims(missingOIDCClaims as string[]);
  for (const [indicator, scopes] of Object.entries((missingResourceScopes ?? {}) as Record<string, string[]>)) {
    grant.addResourceScope(indicator, scopes);
  }
  return grant.save();
}

/** The result that resumes the interaction with the user's consent. */
export function consentResult(grantId: string): InteractionResults {
  return { consent: { grantId } };
}
