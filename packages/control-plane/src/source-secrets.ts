import type { SecretBox } from './secret-box.js';

/**
 * A source's write-only credentials, sealed as one JSON object. The place
 * (`tenant/source`) is bound into the seal, so a sealed value copied to
 * another source or tenant does not open there.
 */
export interface SourceSecrets {
  seal(tenantId: string, name: string, values: Readonly<Record<string, string>>): string;
  open(tenantId: string, name: string, sealed: string | null): Record<string, string>;
  /** The credentials' names, for reads (never their values). */
  names(tenantId: string, name: string, sealed: string | null): string[];
}

export function createSourceSecrets(box: SecretBox): SourceSecrets {
  const place = sourceSecretsPlace;
  const open = (tenantId: string, name: string, sealed: string | null): Record<string, string> =>
    sealed === null ? {} : (JSON.parse(box.open(sealed, place(tenantId, name))) as Record<string, string>);
  return {
    seal: (tenantId, name, values) => box.seal(JSON.stringify(values), place(tenantId, name)),
    open,
    names: (tenantId, name, sealed) => Object.keys(open(tenantId, name, sealed)),
  };
}

/** What a source's sealed credentials are bound to (GCM associated data): its tenant and name. */
export function sourceSecretsPlace(tenantId: string, name: string): string {
  return `${tenantId}/${name}`;
}
