/**
 * Checks JSON-RPC response bodies against the published MCP schema of a
 * revision, so that every response the end-to-end tests see is validated
 * against the revision's schema.json. The schemas are copies of the spec's
 * schema.json kept in test/fixtures/spec, so the repo is self-contained.
 * Both files declare JSON Schema draft 2020-12, hence ajv/dist/2020.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** The revisions whose schema this repo carries. */
export type WireRevision = '2026-07-28' | '2025-11-25';

/**
 * The result type of each method the gateway serves, per revision. A result
 * of a method missing here is reported as a problem rather than passed: a test
 * that cannot tell what a result should look like must not call it valid.
 */
const RESULT_TYPES: Record<WireRevision, Readonly<Record<string, string>>> = {
  '2026-07-28': {
    'server/discover': 'DiscoverResult',
    'resources/list': 'ListResourcesResult',
    'resources/templates/list': 'ListResourceTemplatesResult',
    'resources/read': 'ReadResourceResult',
    'subscriptions/listen': 'SubscriptionsListenResult',
  },
  '2025-11-25': {
    initialize: 'InitializeResult',
    ping: 'EmptyResult',
    'resources/list': 'ListResourcesResult',
    'resources/templates/list': 'ListResourceTemplatesResult',
    'resources/read': 'ReadResourceResult',
  },
};

/**
 * Error types the schema defines for one code. Some wrap the whole response
 * (`UnsupportedProtocolVersionError`), others only the `error` member
 * (`InvalidParamsError`); `validateErrorResponse` tells them apart by whether
 * the definition has a `jsonrpc` property. Only definitions present in the
 * revision's file are used.
 */
const ERROR_TYPES: Readonly<Record<number, string>> = {
  [-32700]: 'ParseError',
  [-32600]: 'InvalidRequestError',
  [-32601]: 'MethodNotFoundError',
  [-32602]: 'InvalidParamsError',
  [-32603]: 'InternalError',
  [-32020]: 'HeaderMismatchError',
  [-32021]: 'MissingRequiredClientCapabilityError',
  [-32022]: 'UnsupportedProtocolVersionError',
};

interface CompiledRevision {
  definitions: Record<string, { properties?: Record<string, unknown> }>;
  validators: Map<string, ValidateFunction>;
  ajv: Ajv2020;
}

const compiled = new Map<WireRevision, CompiledRevision>();

function load(revision: WireRevision): CompiledRevision {
  const existing = compiled.get(revision);
  if (existing !== undefined) return existing;
  const path = new URL(`../fixtures/spec/${revision}.schema.json`, import.meta.url);
  const document = JSON.parse(readFileSync(path, 'utf8')) as { $defs: CompiledRevision['definitions'] };
  // strict: false because the spec's schema uses annotation keywords ajv does
  // not know; allErrors so a failure lists every problem at once.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, revision);
  const entry: CompiledRevision = { definitions: document.$defs, validators: new Map(), ajv };
  compiled.set(revision, entry);
  return entry;
}

/** The compiled validator of one `$defs` entry, compiled on first use and then reused. */
function validatorFor(revision: WireRevision, definition: string): ValidateFunction {
  const entry = load(revision);
  let validate = entry.validators.get(definition);
  if (validate === undefined) {
    if (!(definition in entry.definitions)) {
      throw new Error(`schema ${revision} has no definition ${definition}`);
    }
    validate = entry.ajv.getSchema(`${revision}#/$defs/${definition}`);
    if (validate === undefined) throw new Error(`ajv could not compile ${revision} ${definition}`);
    entry.validators.set(definition, validate);
  }
  return validate;
}

function describeErrors(definition: string, where: string, errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const path = `${where}${e.instancePath}` || '(root)';
    const params = JSON.stringify(e.params);
    return `${definition}: ${path} ${e.message ?? 'is invalid'} ${params}`;
  });
}

function check(revision: WireRevision, definition: string, value: unknown, where: string): string[] {
  const validate = validatorFor(revision, definition);
  return validate(value) ? [] : describeErrors(definition, where, validate.errors);
}

/** Whether the revision's schema defines a result type for `method`. */
export function resultTypeOf(revision: WireRevision, method: string): string | undefined {
  return Object.hasOwn(RESULT_TYPES[revision], method) ? RESULT_TYPES[revision][method] : undefined;
}

/**
 * Validates a JSON-RPC error response: the envelope against
 * `JSONRPCErrorResponse`, then against the specific error type the revision
 * defines for its code, if any. Returns readable problems; empty means valid.
 */
export function validateErrorResponse(revision: WireRevision, body: unknown): string[] {
  const problems = check(revision, 'JSONRPCErrorResponse', body, '');
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  const specific = typeof code === 'number' ? ERROR_TYPES[code] : undefined;
  if (specific === undefined) return problems;
  const definition = load(revision).definitions[specific];
  if (definition === undefined) return problems;
  const wrapsEnvelope = definition.properties !== undefined && 'jsonrpc' in definition.properties;
  return wrapsEnvelope
    ? [...problems, ...check(revision, specific, body, '')]
    : [...problems, ...check(revision, specific, (body as { error: unknown }).error, '/error')];
}

/**
 * Validates the body of the response to a request for `method`: a result
 * against `JSONRPCResultResponse` and the method's result type (e.g.
 * `ListResourcesResult`), an error via `validateErrorResponse`. Returns
 * readable problems; empty means valid.
 */
export function validateResponseBody(revision: WireRevision, method: string, body: unknown): string[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return [`expected one JSON-RPC response object, got ${JSON.stringify(body)}`];
  }
  if ('error' in body) return validateErrorResponse(revision, body);
  const problems = check(revision, 'JSONRPCResultResponse', body, '');
  const resultType = resultTypeOf(revision, method);
  if (resultType === undefined) {
    return [...problems, `no ${revision} result type is known for method ${method}`];
  }
  return [...problems, ...check(revision, resultType, (body as { result?: unknown }).result, '/result')];
}

/** The notification type of each method a 2026-07-28 listen stream may carry. */
const STREAM_NOTIFICATIONS: Readonly<Record<string, string>> = {
  'notifications/subscriptions/acknowledged': 'SubscriptionsAcknowledgedNotification',
  'notifications/resources/list_changed': 'ResourceListChangedNotification',
  'notifications/resources/updated': 'ResourceUpdatedNotification',
};

/**
 * Validates one message of a `subscriptions/listen` stream (2026-07-28): a
 * notification against its type, the completion against
 * `SubscriptionsListenResultResponse`. Any other method is a problem.
 */
export function validateStreamMessage(message: unknown): string[] {
  const method = (message as { method?: unknown } | null)?.method;
  if (typeof method !== 'string') return check('2026-07-28', 'SubscriptionsListenResultResponse', message, '');
  const definition = STREAM_NOTIFICATIONS[method];
  if (definition === undefined) return [`no listen-stream notification type is known for method ${method}`];
  return [...check('2026-07-28', 'JSONRPCNotification', message, ''), ...check('2026-07-28', definition, message, '')];
}
