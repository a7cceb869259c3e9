import { z } from 'zod';
import type { AdminExample } from './admin-examples.js';
import type { AdminOperation, NameInBody } from './admin-operation.js';
import { problemSchema } from './admin-schemas.js';
import { ADMIN_PREFIX } from './admin-resources.js';
import { adminProblemRegistry } from './problem-registry.js';

type Json = Record<string, unknown>;

/** JSON Schema 2020-12 of a zod schema (OpenAPI 3.1 section 4.8.24 uses that dialect). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  }) as Json;
  return rest;
}

function fields(schema: z.ZodType | undefined): [string, z.ZodType][] {
  return schema instanceof z.ZodObject ? Object.entries(schema.shape as Record<string, z.ZodType>) : [];
}

/** OpenAPI 3.1 Example Objects (section 4.8.19), by name; the path name, if any, in the description. */
function examplesOf(examples: Readonly<Record<string, AdminExample>> | undefined): Json {
  if (examples === undefined) return {};
  return {
    examples: Object.fromEntries(
      Object.entries(examples).map(([key, example]) => [
        key,
        {
          summary: example.summary,
          ...(example.name === undefined
            ? {}
            : { description: `With \`{name}\` = \`${encodeURIComponent(example.name)}\`` }),
          value: example.value,
        },
      ]),
    ),
  };
}

/**
 * A body schema as the route takes it: the member that repeats the path's
 * name (AdminOperation.nameInBody) is optional, and allowed where the stored
 * shape leaves it out (a grant's `name`).
 */
function withNameFromPath(schema: Json, rule: NameInBody | undefined): Json {
  if (rule === undefined) return schema;
  const adjust = (object: Json): Json => {
    const properties = object.properties as Record<string, unknown> | undefined;
    if (properties === undefined) {
      const alternatives = (object.anyOf ?? object.oneOf) as Json[] | undefined;
      const key = object.anyOf === undefined ? 'oneOf' : 'anyOf';
      return alternatives === undefined ? object : { ...object, [key]: alternatives.map(adjust) };
    }
    if (!(rule.field in properties) && !rule.strip) return object;
    const required = ((object.required as string[] | undefined) ?? []).filter((name) => name !== rule.field);
    const { required: _required, ...rest } = object;
    return {
      ...rest,
      properties: {
        ...properties,
        [rule.field]: {
          ...((properties[rule.field] as Json | undefined) ?? { type: 'string' }),
          description: 'The name in the path; may be left out, and must be the same if given.',
        },
      },
      ...(required.length === 0 ? {} : { required }),
    };
  };
  return adjust(schema);
}

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };

/** Each problem status's title, for the generic problem responses of an operation (the API's types, not the sign-in's). */
const TITLES = new Map<number, string>(
  Object.values(adminProblemRegistry).flatMap(({ status, title, surface }) =>
    surface === 'api' ? [[status, title] as const] : [],
  ),
);

/** The problems every route of an access level can give, besides its own answers. */
function problemStatuses(route: AdminOperation): number[] {
  const statuses = [500];
  if (route.access !== 'public') statuses.push(401, 403);
  if (route.path.includes('{tenantId}')) statuses.push(404);
  if (route.query !== undefined || route.params !== undefined) statuses.push(400);
  if (route.body !== undefined) statuses.push(400, 415, 422);
  if (route.method !== 'GET') statuses.push(409, 412);
  if (route.conditional === 'if-match-required' || route.conditional === 'if-match-or-if-none-match')
    statuses.push(428);
  return [...new Set(statuses)].sort();
}

function operation(route: AdminOperation): Json {
  const parameters: Json[] = [
    ...fields(route.params).map(([name, schema]) => ({
      name,
      in: 'path',
      required: true,
      schema: jsonSchema(schema, 'input'),
    })),
    ...fields(route.query).map(([name, schema]) => ({
      name,
      in: 'query',
      required: !schema.safeParse(undefined).success,
      schema: jsonSchema(schema, 'input'),
    })),
  ];
  if (route.conditional !== undefined) {
    parameters.push({
      name: 'If-Match',
      in: 'header',
      required: false,
      description:
        route.conditional === 'if-match-optional'
          ? 'The ETag last read; the write fails with 412 if it changed since (RFC 9110 section 13.1.1).'
          : 'The ETag last read (RFC 9110 section 13.1.1); required to change or delete what exists (428 without), 412 if it changed since.',
      schema: { type: 'string' },
    });
  }
  if (route.conditional === 'if-match-or-if-none-match') {
    parameters.push({
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description: '`*`: create only, 412 if it exists (RFC 9110 section 13.1.2).',
      schema: { type: 'string', const: '*' },
    });
  }
  const responses: Json = {};
  for (const [status, spec] of Object.entries(route.responses)) {
    responses[status] = {
      description: spec.description,
      ...(spec.etag === true
        ? { headers: { ETag: { description: 'The version, for If-Match', schema: { type: 'string' } } } }
        : {}),
      ...(spec.schema === undefined && spec.mediaType === undefined
        ? {}
        : {
            content: {
              [spec.mediaType ?? 'application/json']: {
                schema: spec.schema === undefined ? { type: 'string' } : jsonSchema(spec.schema, 'output'),
                ...examplesOf(spec.examples),
              },
            },
          }),
    };
  }
  for (const status of problemStatuses(route)) {
    responses[String(status)] ??= {
      description: TITLES.get(status) ?? 'Problem',
      content: { 'application/problem+json': { schema: PROBLEM_REF } },
    };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    tags: [route.tag],
    security: route.access === 'public' ? [] : [{ bearer: [] }],
    'x-access': route.access,
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(route.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: withNameFromPath(jsonSchema(route.body, 'input'), route.nameInBody),
                ...examplesOf(route.examples),
              },
            },
          },
        }),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document of the admin API, generated from the route table
 * and its zod schemas (so it cannot drift from what the routes accept).
 */
export function openApiDocument(routes: readonly AdminOperation[], serverUrl: string): Json {
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const path = (paths[route.path] ??= {});
    path[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'MCP resource gateway admin API',
      version: '1',
      description:
        "Tenants, their issuers, sources, grants, admin role bindings and hosted authorization server (its connected clients and users' grants), their status and audit log. Errors are RFC 9457 problem details.",
    },
    servers: [{ url: `${serverUrl}${ADMIN_PREFIX}` }],
    paths,
    components: {
      schemas: { Problem: jsonSchema(problemSchema, 'output') },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            "An RFC 9068 access token: operators' from OPERATOR_ISSUER for OPERATOR_AUDIENCE; tenant admins' from one of the tenant's issuers for the tenant's admin resource.",
        },
      },
    },
  };
}
