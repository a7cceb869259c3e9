import type { SourceFactory } from '@mcpgw/core';
import type { StoredAuthorizationServerPart, StoredTenantModel } from './stored-tenant.js';
import { AUTHORIZATION_SERVER_SECRET } from './tenant-model.js';
import type { Document } from './tenant-rows.js';

const asDocument = (value: unknown): Document =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Document) : {};

/** Keys that would reach an object's prototype rather than the object. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Sets `value` at a dotted path of `target` ("credentials.secretAccessKey"),
 * copying objects on the way (the input is never changed through them):
 * sealed credentials are stored flat and land wherever the source type's
 * options expect them. Own data properties only, never a prototype.
 */
export function setPath(target: Document, path: string, value: string): void {
  const keys = path.split('.');
  if (keys.some((key) => PROTOTYPE_KEYS.has(key))) throw new Error('not an option path');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const child = Object.hasOwn(node, key) ? node[key] : undefined;
    node[key] = child !== null && typeof child === 'object' && !Array.isArray(child) ? { ...(child as Document) } : {};
    node = node[key] as Document;
  }
  node[keys.at(-1) as string] = value;
}

/**
 * The credentials among `secrets` that a source of `type` may be given:
 * those at its declared credential paths. Others (stored before the model
 * bound them, or for another type) are never merged into what is served.
 */
export function credentialsOf(
  registry: ReadonlyMap<string, SourceFactory>,
  type: unknown,
  secrets: Readonly<Record<string, string>>,
): Record<string, string> {
  const declared = new Set(registry.get(String(type))?.model.credentials ?? []);
  return Object.fromEntries(Object.entries(secrets).filter(([path]) => declared.has(path)));
}

/**
 * A source as the gateway serves it, in the bootstrap file's shape: its
 * stored document with its sealed credentials merged in at the paths its
 * type declares as credentials (and nowhere else: a credential never changes
 * the type or any other option). Holds credentials: never for a response or
 * a log line.
 */
export function servedSourceEntry(
  registry: ReadonlyMap<string, SourceFactory>,
  name: string,
  document: Document,
  secrets: Readonly<Record<string, string>>,
): Document {
  const { id: _written, ...options } = document;
  const entry: Document = { id: name, ...options };
  for (const [path, value] of Object.entries(credentialsOf(registry, document.type, secrets))) {
    setPath(entry, path, value);
  }
  return entry;
}

/**
 * The authorization server settings as served: the stored document with its
 * sealed client secret at `upstream.clientSecret` (an OpenID Connect
 * upstream only). A secret the document holds itself (the bootstrap file's
 * `$env` reference) wins: the file is what an operator declared last. Holds
 * credentials: never for a response or a log line.
 */
export function servedAuthorizationServerEntry(part: StoredAuthorizationServerPart): Document {
  const upstream = asDocument(part.document.upstream);
  const secret = part.secrets[AUTHORIZATION_SERVER_SECRET];
  if (secret === undefined || 'demo' in upstream || Object.hasOwn(upstream, 'clientSecret')) return part.document;
  return { ...part.document, upstream: { ...upstream, clientSecret: secret } };
}

/**
 * The one way from a stored tenant to what is served: the tenant in the
 * bootstrap file's shape, sources' credentials merged in at their type's
 * credential paths and the authorization server's client secret at its own, for `GatewayConfig.validateTenant` (which checks it by
 * the file's rules and gives the runtime configuration). Every replica's
 * sync, bootstrap-only serving and every admin API write's check go through
 * here, so what a write is checked against is what replicas serve. Holds
 * credentials: never for a response or a log line.
 */
export function servedTenantEntry(tenant: StoredTenantModel, registry: ReadonlyMap<string, SourceFactory>): Document {
  const { auth, ...settings } = tenant.settings;
  const entry: Document = {
    ...settings,
    id: tenant.id,
    grants: tenant.grants.map(({ name, document }) => ({ name, ...document })),
    sources: tenant.sources.map(({ name, document, secrets }) => servedSourceEntry(registry, name, document, secrets)),
    adminRoleBindings: tenant.adminRoleBindings.map(({ name, document }) => ({ name, ...document })),
  };
  if (tenant.authorizationServer !== undefined) {
    entry.authorizationServer = servedAuthorizationServerEntry(tenant.authorizationServer);
  }
  if (auth !== undefined || tenant.issuers.length > 0) {
    entry.auth = { ...asDocument(auth), issuers: tenant.issuers.map(({ document }) => document) };
  }
  return entry;
}
