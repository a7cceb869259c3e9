import { isDeepStrictEqual } from 'node:util';
import { valueAtPath } from '@mcpgw/core';
import type { StoredEntity } from './entity-rows.js';
import type { ImportedSource } from './source-import.js';
import { AUTHORIZATION_SERVER_SECRET } from './tenant-model.js';
import type { Document } from './tenant-rows.js';
import { TenantWriteRefusal } from './tenant-write-refusal.js';
import type { ControlPlaneReads } from './write-check.js';

const asDocument = (value: unknown): Document =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Document) : {};

/** Where the upstream's client secret is sent: changing one of them needs the secret written again. */
const SECRET_TARGETS = ['upstream.issuer', 'upstream.endpoints.token'] as const;

const SECRET_KEY = AUTHORIZATION_SERVER_SECRET.split('.').at(-1) as string;

/** The document without the upstream's client secret (what is stored, returned and audited). */
function withoutSecret(body: Document): { document: Document; written: unknown } {
  const upstream = asDocument(body.upstream);
  if (!Object.hasOwn(upstream, SECRET_KEY)) return { document: body, written: undefined };
  const { [SECRET_KEY]: written, ...rest } = upstream;
  return { document: { ...body, upstream: rest }, written };
}

/**
 * The admin API's importer of a tenant's authorization server settings (a
 * PUT body in the bootstrap file's shape): `upstream.clientSecret` is taken
 * out of the document and sealed (a string replaces the stored one, `null`
 * removes it, absent keeps it); the stored one is kept only while the
 * upstream it is sent to (its issuer, its token endpoint) stays the same,
 * else the write must send it again, so a secret an operator wrote never
 * goes to a server a tenant admin names; the demo login has none. The demo
 * login itself is refused to tenant admins before this runs
 * (checkEntityBody, by the tenant model). Runs inside the write's
 * transaction against the stored settings it replaces (`current`); throws
 * TenantWriteRefusal, changing nothing.
 */
export async function importAuthorizationServer(
  reads: Pick<ControlPlaneReads, 'openAuthorizationServerSecrets'>,
  tenantId: string,
  body: Document,
  current: StoredEntity | undefined,
): Promise<ImportedSource> {
  const { document, written } = withoutSecret(body);
  if (written !== undefined && written !== null && typeof written !== 'string') {
    throw new TenantWriteRefusal('validation-failed', 'The upstream client secret is a string', [
      { pointer: '/upstream/clientSecret', detail: 'a string, or null to remove the stored one' },
    ]);
  }
  if ('demo' in asDocument(document.upstream)) {
    if (typeof written === 'string') {
      throw new TenantWriteRefusal('validation-failed', 'The demo login has no client secret', [
        { pointer: '/upstream/clientSecret', detail: 'leave it out with "demo": true' },
      ]);
    }
    return { document, secrets: current?.secretNames.length === 0 ? undefined : null };
  }
  if (typeof written === 'string') return { document, secrets: { [AUTHORIZATION_SERVER_SECRET]: written } };
  if (written === null) return { document, secrets: null };
  // Omitted: keep what is stored, sealed or (written by the bootstrap file) an `$env` reference.
  const stored = current?.document;
  const reference = valueAtPath(stored, AUTHORIZATION_SERVER_SECRET);
  const sealed = current !== undefined && current.secretNames.length > 0;
  if (stored === undefined || (!sealed && reference === undefined)) return { document, secrets: undefined };
  const changed = SECRET_TARGETS.filter(
    (path) => !isDeepStrictEqual(valueAtPath(stored, path), valueAtPath(document, path)),
  );
  if (changed.length > 0) {
    throw new TenantWriteRefusal(
      'validation-failed',
      'The stored upstream client secret may only be sent where it was written for: send "upstream.clientSecret" again with this change (or null to drop it); nothing was changed',
      changed.map((path) => ({
        pointer: `/${path.replaceAll('.', '/')}`,
        detail: 'changes where the stored client secret would be sent: resend "upstream.clientSecret" with it',
      })),
    );
  }
  if (reference !== undefined) {
    return {
      document: { ...document, upstream: { ...asDocument(document.upstream), [SECRET_KEY]: reference } },
      secrets: undefined,
    };
  }
  // Proves the sealed secret still opens here before the write keeps it.
  await reads.openAuthorizationServerSecrets(tenantId);
  return { document, secrets: undefined };
}
