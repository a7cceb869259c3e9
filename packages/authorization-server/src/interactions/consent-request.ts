import type Provider from 'oidc-provider';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;
type Client = NonNullable<Awaited<ReturnType<Provider['Client']['find']>>>;

/** What the consent page shows about a pending authorization. */
export interface ConsentRequest {
  client: { name: string | undefined; id: string; redirectHost: string };
  scopes: string[];
  resources: string[];
}

/**
 * Reads what the consent page names from the interaction oidc-provider
 * stored: the client (its self-chosen `client_name`, its id), the host of
 * the redirect URI the answer will go to (the request's, or the client's
 * only one when the request omitted it, OAuth 2.1 section 4.1.1), the
 * scopes still to be granted and the resources.
 *
 * oidc-provider lists a scope it knows both as an OpenID Connect scope and
 * per resource that offers it; the page names each once.
 */
export function consentRequest(interaction: Interaction, client: Client): ConsentRequest {
  const { params, prompt } = interaction;
  const { missingOIDCScope, missingResourceScopes } = prompt.details;
  const requested = typeof params.scope === 'string' ? params.scope.split(' ').filter((scope) => scope !== '') : [];
  const missing = new Set<string>([
    ...(Array.isArray(missingOIDCScope) ? (missingOIDCScope as string[]) : []),
    ...Object.values((missingResourceScopes ?? {}) as Record<string, string[]>).flat(),
  ]);
  // Request order first (what the client asked, as it asked), then anything the prompt adds.
  const scopes = [...new Set([...requested.filter((scope) => missing.has(scope)), ...missing])];

  const redirectUri = typeof params.redirect_uri === 'string' ? params.redirect_uri : client.redirectUris?.[0];
  const resources = params.resource === undefined ? [] : [params.resource].flat().filter((r) => typeof r === 'string');
  return {
    client: { name: client.clientName, id: client.clientId, redirectHost: hostOf(redirectUri) },
    scopes,
    resources,
  };
}

// A custom-scheme redirect (RFC 8252 section 7.1) has no host: its scheme is what identifies the app.
function hostOf(uri: string | undefined): string {
  if (uri === undefined || !URL.canParse(uri)) return 'unknown';
  const url = new URL(uri);
  return url.host === '' ? `${url.protocol}` : url.host;
}
