import type { FieldOf, FormProblem } from './form-problem.js';

/** The entities a tenant admin edits on the console, by the admin API's collection name. */
export type ConsoleCollection = 'sources' | 'grants' | 'issuers' | 'admin-role-bindings';

/** A form's submitted fields (application/x-www-form-urlencoded, HTML Living Standard 4.10.21.8). */
export type FormFields = Readonly<Record<string, string>>;

/** A form turned into the API's JSON body, or a refusal of the form itself (JSON that does not parse). */
export type BodyOfForm = { readonly body: Record<string, unknown> } | { readonly problem: FormProblem };

/** How one kind of entity is edited as a form: its document as fields and back, and where a pointer lands. */
export interface EntityForm {
  readonly collection: ConsoleCollection;
  /** The operation ids of the JSON routes the form's writes run. */
  readonly put: string;
  readonly remove: string;
  readonly list: string;
  readonly get: string;
  fieldsOf(document: Record<string, unknown>): Record<string, string>;
  bodyOf(fields: FormFields): BodyOfForm;
  readonly fieldOf: FieldOf;
}

const lines = (text: string | undefined): string[] =>
  (text ?? '')
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter((line) => line !== '');

const listText = (value: unknown): string => (Array.isArray(value) ? value.map(String).join('\n') : '');

/** The first segment of a JSON Pointer (RFC 6901 section 3), unescaped. */
const head = (pointer: string | undefined): string | undefined =>
  pointer === undefined || pointer === '' ? undefined : pointer.split('/')[1]?.replace(/~1/g, '/').replace(/~0/g, '~');

function jsonObject(text: string | undefined, fieldName: string): BodyOfForm {
  const trimmed = (text ?? '').trim();
  if (trimmed === '') return { body: {} };
  try {
    const value: unknown = JSON.parse(trimmed);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return { body: value as Record<string, unknown> };
    }
  } catch {
    // Answered below, with the field named.
  }
  return {
    problem: {
      title: 'The request content is invalid',
      status: 422,
      detail: 'Nothing was sent: a field is not a JSON object',
      errors: [{ pointer: `/${fieldName}`, detail: 'must be a JSON object, e.g. {"key": "value"}' }],
    },
  };
}

const MATCHERS = ['scopes', 'groups', 'subjects', 'clientIds', 'issuers'] as const;
const BINDING_LISTS = ['scopes', 'groups', 'subjects'] as const;

const sourceForm: EntityForm = {
  collection: 'sources',
  put: 'putSource',
  remove: 'deleteSource',
  list: 'listSources',
  get: 'getSource',
  fieldsOf(document) {
    const { type, ...options } = document;
    return { type: typeof type === 'string' ? type : '', options: JSON.stringify(options, null, 2) };
  },
  bodyOf(fields) {
    const options = jsonObject(fields.options, 'options');
    if ('problem' in options) return options;
    const secrets = Object.fromEntries(
      Object.entries(fields)
        .filter(([key, value]) => key.startsWith('secret.') && value !== '')
        .map(([key, value]) => [key.slice('secret.'.length), value]),
    );
    const body: Record<string, unknown> = { ...options.body, type: fields.type ?? '' };
    if (fields.dropSecrets === 'on') body.secrets = null;
    else if (Object.keys(secrets).length > 0) body.secrets = secrets;
    return { body };
  },
  fieldOf(entry) {
    const first = head(entry.pointer);
    if (first === undefined) return entry.location === undefined ? undefined : 'options';
    if (first === 'type') return 'type';
    if (first === 'id') return 'name';
    if (first === 'secrets') {
      const credential = entry.pointer?.split('/')[2];
      return credential === undefined ? 'secrets' : `secret.${credential}`;
    }
    return 'options';
  },
};

const grantForm: EntityForm = {
  collection: 'grants',
  put: 'putGrant',
  remove: 'deleteGrant',
  list: 'listGrants',
  get: 'getGrant',
  fieldsOf(document) {
    const match = (document.match ?? {}) as Record<string, unknown>;
    const allow = Array.isArray(document.allow) ? (document.allow as { source?: unknown; uris?: unknown }[]) : [];
    return {
      ...Object.fromEntries(MATCHERS.map((key) => [key, listText(match[key])])),
      allow: allow
        .map((entry) =>
          [String(entry.source ?? ''), ...(Array.isArray(entry.uris) ? entry.uris.map(String) : [])].join(' '),
        )
        .join('\n'),
    };
  },
  bodyOf(fields) {
    const match = Object.fromEntries(
      MATCHERS.map((key) => [key, lines(fields[key])] as const).filter(([, values]) => values.length > 0),
    );
    const allow = (fields.allow ?? '')
      .split('\n')
      .map((line) => line.trim().split(/\s+/).filter(Boolean))
      .filter((words) => words.length > 0)
      .map(([source, ...uris]) => ({ source, ...(uris.length === 0 ? {} : { uris }) }));
    return { body: { match, allow } };
  },
  fieldOf(entry) {
    const [, first, second] = (entry.pointer ?? '').split('/');
    if (first === 'match')
      return second !== undefined && (MATCHERS as readonly string[]).includes(second) ? second : 'scopes';
    if (first === 'allow') return 'allow';
    if (first === 'name') return 'name';
    return entry.location === undefined ? undefined : 'allow';
  },
};

const issuerForm: EntityForm = {
  collection: 'issuers',
  put: 'putIssuer',
  remove: 'deleteIssuer',
  list: 'listIssuers',
  get: 'getIssuer',
  fieldsOf(document) {
    const { issuer: _named, ...rest } = document;
    return { document: JSON.stringify(rest, null, 2) };
  },
  bodyOf(fields) {
    return jsonObject(fields.document, 'document');
  },
  fieldOf(entry) {
    const first = head(entry.pointer);
    if (first === 'issuer') return 'name';
    return entry.pointer === undefined && entry.location === undefined ? undefined : 'document';
  },
};

const bindingForm: EntityForm = {
  collection: 'admin-role-bindings',
  put: 'putAdminRoleBinding',
  remove: 'deleteAdminRoleBinding',
  list: 'listAdminRoleBindings',
  get: 'getAdminRoleBinding',
  fieldsOf(document) {
    return {
      issuer: typeof document.issuer === 'string' ? document.issuer : '',
      ...Object.fromEntries(BINDING_LISTS.map((key) => [key, listText(document[key])])),
    };
  },
  bodyOf(fields) {
    const issuer = (fields.issuer ?? '').trim();
    return {
      body: {
        ...(issuer === '' ? {} : { issuer }),
        ...Object.fromEntries(
          BINDING_LISTS.map((key) => [key, lines(fields[key])] as const).filter(([, values]) => values.length > 0),
        ),
      },
    };
  },
  fieldOf(entry) {
    const first = head(entry.pointer);
    if (first === undefined) return entry.pointer === '' ? 'scopes' : undefined;
    if (first === 'name') return 'name';
    return (['issuer', ...BINDING_LISTS] as readonly string[]).includes(first) ? first : undefined;
  },
};

export const ENTITY_FORMS: Readonly<Record<ConsoleCollection, EntityForm>> = {
  sources: sourceForm,
  grants: grantForm,
  issuers: issuerForm,
  'admin-role-bindings': bindingForm,
};

/** The form field a path or name parameter lands on: `name` is every entity form's name field. */
export const nameFieldOf: FieldOf = (entry) => (entry.parameter === 'name' ? 'name' : undefined);
