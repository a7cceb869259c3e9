import type { AuthorizationServerSettings } from '@mcpgw/config';
import { authorizationServerUrls } from '@mcpgw/config';
import type { Document, StoredEntity, StoredTenant } from '@mcpgw/control-plane';
import type { EgressGuard } from '@mcpgw/core';
import { EgressRefusedError, jsonPointer } from '@mcpgw/core';
import type { ConnectedClient, UserGrant } from './authorization-records.js';
import { REDACTED } from './admin-views.js';
import { AdminProblem } from './problem.js';

/**
 * A tenant's authorization server settings as responses show them: never
 * the upstream's client secret, only whether one is stored (sealed, or the
 * bootstrap file's `$env` reference, which names a variable and holds no
 * value; a secret the file wrote in clear is shown as redacted).
 */
export function authorizationServerView(entity: StoredEntity, tenant: StoredTenant) {
  const upstream = entity.document.upstream as Document | undefined;
  const written = upstream?.clientSecret;
  const document =
    typeof written === 'string'
      ? { ...entity.document, upstream: { ...upstream, clientSecret: REDACTED } }
      : entity.document;
  return {
    document,
    clientSecretSet: entity.secretNames.length > 0 || written !== undefined,
    version: entity.version,
    updatedAt: entity.updatedAt,
    writtenBy: entity.writtenBy,
    tenantManagedBy: tenant.managedBy,
  };
}

/**
 * Refuses, for a tenant admin's write, an upstream or assertion issuer at an
 * address the egress policy refuses without a lookup (an internal address
 * literal: loopback, link-local, the cloud metadata address, private
 * ranges, unless an operator allows it in EGRESS_ALLOW): the write says so
 * now rather than the sign-in failing later. A name is judged by the guard
 * when it is fetched, as every tenant admin's destination is (DNS can
 * change after the write).
 */
export function refuseInternalDestinations(settings: AuthorizationServerSettings, egress: EgressGuard): void {
  const errors = [];
  for (const { path, url } of authorizationServerUrls(settings)) {
    if (!URL.canParse(url)) continue;
    try {
      egress.checkHost(new URL(url).hostname.replace(/^\[|\]$/g, ''));
    } catch (error) {
      if (!(error instanceof EgressRefusedError)) throw error;
      errors.push({
        pointer: jsonPointer(path),
        detail: `${error.reason}: destinations a tenant admin configures must be public`,
      });
    }
  }
  if (errors.length > 0) {
    throw new AdminProblem(
      'validation-failed',
      'The egress policy refuses these destinations; nothing was changed',
      errors,
    );
  }
}

/** A connected client as responses show it. */
export const oauthClientView = (client: ConnectedClient) => ({
  clientId: client.clientId,
  kind: client.kind,
  ...(client.clientName === undefined ? {} : { clientName: client.clientName }),
  redirectUris: [...client.redirectUris],
  ...(client.createdAt === undefined ? {} : { createdAt: client.createdAt }),
  ...(client.lastUsedAt === undefined ? {} : { lastUsedAt: client.lastUsedAt }),
});

/** A user's grant as responses (and the audit log) show it. */
export const oauthGrantView = (grant: UserGrant) => ({
  grantId: grant.grantId,
  subject: grant.accountId,
  clientId: grant.clientId,
  scopes: [...grant.scopes],
  ...(grant.resources === undefined ? {} : { resources: [...grant.resources] }),
  ...(grant.createdAt === undefined ? {} : { createdAt: grant.createdAt }),
  ...(grant.expiresAt === undefined ? {} : { expiresAt: grant.expiresAt }),
});
