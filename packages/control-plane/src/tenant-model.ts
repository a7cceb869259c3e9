import type { SourceModel } from '@mcpgw/core';
import { valueAtPath } from '@mcpgw/core';
import type { EntityWriter, TenantEntityKind } from './entity-rows.js';
import type { Document } from './tenant-rows.js';

/**
 * The typed tenant model: for every field of a tenant, who may set it and
 * whether it is a credential. The tenant's own settings and its entity kinds
 * are described here once; the bootstrap file (an operator's) and the admin
 * API (an operator's or a tenant admin's) are two importers that write
 * through it, and a tenant admin's write that sets an operator's field is
 * refused whichever way it comes.
 */

/** Who may set a field: platform operators only, or a tenant's admins too. */
export type FieldSetter = EntityWriter;

/** One field's rule. */
export interface FieldRule {
  readonly setBy: FieldSetter;
  /** Written only under `secrets` (sealed, never returned), never among the options. */
  readonly credential: boolean;
  /** For an operator's field: why, as a refusal to a tenant admin says it. */
  readonly operatorsOnly?: string;
}

/** What a tenant holds: its own settings, or one of its entity kinds. */
export type TenantPart = 'settings' | TenantEntityKind;

const TENANT_ADMIN: FieldRule = { setBy: 'tenant-admin', credential: false };
const CREDENTIAL: FieldRule = { setBy: 'tenant-admin', credential: true };
const operatorField = (operatorsOnly: string): FieldRule => ({ setBy: 'operator', credential: false, operatorsOnly });

/**
 * The tenant's own settings (bootstrap file: everything of a tenant but its
 * issuers, sources, grants and admin role bindings): its name, whether it is
 * anonymous, its auth settings, limits and browser sign-in. An operator's:
 * they decide who the tenant is and what it may cost the platform.
 */
export const SETTINGS_FIELDS: Readonly<Record<string, FieldRule>> = {
  name: operatorField("Only platform operators may change a tenant's settings"),
  anonymous: operatorField("Only platform operators may change a tenant's settings"),
  auth: operatorField("Only platform operators may change a tenant's settings"),
  limits: operatorField("Only platform operators may change a tenant's settings"),
  adminSignIn: operatorField("Only platform operators may change a tenant's settings"),
};

/** The rule of a settings key the table does not name: an operator's, as every setting is. */
const OTHER_SETTING = operatorField("Only platform operators may change a tenant's settings");

/**
 * The rule of the field at `path` (dotted) of one part of a tenant. For a
 * source, its type's model (SourceFactory.model) decides: its credential
 * paths are credentials, and an operator-only type is an operator's to
 * choose. The development issuer is the platform's own (loopback only), not
 * a tenant's to trust, and so is the authorization server's demo login.
 * Everything else of an entity is a tenant admin's.
 */
export function fieldRule(
  part: TenantPart,
  path: string,
  document: Document,
  sourceModel: SourceModel | undefined,
): FieldRule {
  switch (part) {
    case 'settings':
      return SETTINGS_FIELDS[path.split('.')[0] as string] ?? OTHER_SETTING;
    case 'issuer':
      return path === 'development' && document.development === true
        ? operatorField('Only platform operators may trust the development issuer')
        : TENANT_ADMIN;
    case 'source':
      if (path === 'type' && sourceModel?.operatorOnly === true) {
        return operatorField(`Only platform operators may configure "${String(document.type)}" sources`);
      }
      if (sourceModel?.operatorPaths?.includes(path) === true) {
        return operatorField(
          `Only platform operators may set or change "${path}" of a "${String(document.type)}" source`,
        );
      }
      return sourceModel?.credentials.includes(path) === true ? CREDENTIAL : TENANT_ADMIN;
    case 'authorization-server':
      if (path === AUTHORIZATION_SERVER_DEMO) {
        return operatorField(
          'Only platform operators may turn on the demo login (every visitor signs in as the demo user)',
        );
      }
      return path === AUTHORIZATION_SERVER_SECRET ? CREDENTIAL : TENANT_ADMIN;
    case 'grant':
    case 'admin-role-binding':
      return TENANT_ADMIN;
  }
}

/**
 * The tenant's hosted authorization server is the first setting a tenant
 * admin sets: who signs its users in and which connectors may register is
 * the tenant's own business, as its issuers are. Two fields are not: the
 * upstream's client secret is a credential (sealed, never returned), and the
 * demo login (every visitor is the demo user) is an operator's, loopback only.
 */
export const AUTHORIZATION_SERVER_SECRET = 'upstream.clientSecret';
export const AUTHORIZATION_SERVER_DEMO = 'upstream.demo';

/** One field a document sets, with its rule. */
export interface SetField {
  readonly path: string;
  readonly rule: FieldRule;
}

/**
 * The fields a document of `part` sets: each top-level key, and for a
 * source each credential and operator path of its type that holds a value.
 */
export function fieldsSet(part: TenantPart, document: Document, sourceModel: SourceModel | undefined): SetField[] {
  const paths = new Set(Object.keys(document));
  if (part === 'authorization-server') {
    for (const path of [AUTHORIZATION_SERVER_DEMO, AUTHORIZATION_SERVER_SECRET]) {
      if (valueAtPath(document, path) !== undefined) paths.add(path);
    }
  }
  if (part === 'source') {
    for (const path of [...(sourceModel?.credentials ?? []), ...(sourceModel?.operatorPaths ?? [])]) {
      if (valueAtPath(document, path) !== undefined) paths.add(path);
    }
  }
  return [...paths].map((path) => ({ path, rule: fieldRule(part, path, document, sourceModel) }));
}

/** The first field of `document` only an operator may set, for a write by `writer`; undefined when it may write all. */
export function operatorFieldSet(
  writer: EntityWriter,
  part: TenantPart,
  document: Document,
  sourceModel: SourceModel | undefined,
): SetField | undefined {
  if (writer === 'operator') return undefined;
  return fieldsSet(part, document, sourceModel).find((field) => field.rule.setBy === 'operator');
}
