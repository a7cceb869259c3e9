import type { SecretBox } from './secret-box.js';

/**
 * An entity's write-only credentials (a source's, or the upstream client
 * secret of a tenant's authorization server), sealed as one JSON object.
 * The place (tenant and entity) is bound into the seal, so a sealed value
 * copied to another source, kind or tenant does not open there.
 */
export interface EntitySecrets {
  seal(tenantId: string, name: string, values: Readonly<Record<string, string>>): string;
  open(tenantId: string, name: string, sealed: string | null): Record<string, string>;
  /** The credentials' names, for reads (never their values). */
  names(tenantId: string, name: string, sealed: string | null): string[];
}

/** A source's credentials. */
export type SourceSecrets = EntitySecrets;

function createEntitySecrets(box: SecretBox, place: (tenantId: string, name: string) => string): EntitySecrets {
  const open = (tenantId: string, name: string, sealed: string | null): Record<string, string> =>
    sealed === null ? {} : (JSON.parse(box.open(sealed, place(tenantId, name))) as Record<string, string>);
  return {
    seal: (tenantId, name, values) => box.seal(JSON.stringify(values), place(tenantId, name)),
    open,
    names: (tenantId, name, sealed) => Object.keys(open(tenantId, name, sealed)),
  };
}

export function createSourceSecrets(box: SecretBox): SourceSecrets {
  return createEntitySecrets(box, sourceSecretsPlace);
}

/** The upstream client secret of a tenant's hosted authorization server. */
export function createAuthorizationServerSecrets(box: SecretBox): EntitySecrets {
  return createEntitySecrets(box, authorizationServerSecretsPlace);
}

/** What a source's sealed credentials are bound to (GCM associated data): its tenant and name. */
export function sourceSecretsPlace(tenantId: string, name: string): string {
  return `${tenantId}/${name}`;
}

/**
 * What an authorization server's sealed secret is bound to: its tenant, and
 * a name no source can have (`.` is not in a slug), so it never opens as a
 * source's credentials nor theirs as it.
 */
export function authorizationServerSecretsPlace(tenantId: string, name: string): string {
  return `${tenantId}/.authorization-server.${name}`;
}
