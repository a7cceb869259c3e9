import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRouteTable } from '@mcpgw/gateway/testing';
import { type AdminFixture, startAdminFixture } from './admin-fixture.js';

// The served OpenAPI 3.1 document and its reference page: every route of the
// table is in it and every operation in it is served; its structure is
// checked by the OpenAPI 3.1 rules that matter to clients (no OpenAPI
// meta-schema is available offline), and every schema in it compiles as
// JSON Schema 2020-12, the dialect it declares.

type Json = Record<string, unknown>;
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

describe('admin API OpenAPI document', () => {
  let f: AdminFixture;
  let document: Json;

  beforeAll(async () => {
    f = await startAdminFixture('pglite');
    const response = await f.call('GET', '/openapi.json');
    expect(response.status).toBe(200);
    document = response.json;
  }, 120_000);
  afterAll(async () => f?.close());

  const operations = () =>
    Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );

  it('lists every route of the table, and every operation it lists is served', async () => {
    const routes = adminRouteTable(f.base).list();
    const listed = operations().map(
      ({ path, method, op }) => `${method.toUpperCase()} ${path} ${String(op.operationId)}`,
    );
    expect(listed.sort()).toEqual(routes.map((r) => `${r.method} ${r.path} ${r.operationId}`).sort());
    for (const { path, method } of operations()) {
      const concrete = path.replace('{tenantId}', 'alpha').replace('{name}', 'notes');
      const response = await f.call(method.toUpperCase(), concrete, { headers: { 'if-match': '"0"' } });
      expect(response.text, `${method} ${path}`).not.toContain('No such admin API route');
    }
  });

  it('has the structure of an OpenAPI 3.1 document', () => {
    expect(document).toMatchObject({
      openapi: '3.1.0',
      jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
      info: { title: expect.any(String), version: expect.any(String) },
      servers: [{ url: `${f.base}/admin/v1` }],
    });
    const ids = new Set<string>();
    for (const { path, method, op } of operations()) {
      const where = `${method} ${path}`;
      expect(path.startsWith('/'), where).toBe(true);
      expect(METHODS, where).toContain(method);
      expect(ids.has(String(op.operationId)), where).toBe(false);
      ids.add(String(op.operationId));
      const params = (op.parameters as Json[] | undefined) ?? [];
      // OpenAPI 3.1 section 4.8.12.1: each template variable is a required path parameter, and only those.
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const inPath = params.filter((p) => p.in === 'path');
      expect(inPath.map((p) => p.name).sort(), where).toEqual(templated.sort());
      expect(
        inPath.every((p) => p.required === true),
        where,
      ).toBe(true);
      for (const p of params) expect(['path', 'query', 'header', 'cookie'], where).toContain(p.in);
      const responses = op.responses as Record<string, Json>;
      expect(
        Object.keys(responses).some((status) => /^2\d\d$/.test(status)),
        where,
      ).toBe(true);
      for (const [status, response] of Object.entries(responses)) {
        expect(status, where).toMatch(/^[1-5]\d\d$/);
        expect(typeof response.description, where).toBe('string');
        if (Number(status) >= 400) {
          expect(Object.keys(response.content as Json), `${where} ${status}`).toEqual(['application/problem+json']);
        }
      }
      if (op['x-access'] !== 'public') expect(op.security, where).toEqual([{ bearer: [] }]);
    }
  });

  it('holds only schemas that compile as JSON Schema 2020-12, and references that resolve', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const components = document.components as { schemas: Record<string, Json> };
    ajv.addSchema({ $id: 'https://admin.test/components', $defs: components.schemas });
    const schemas: Json[] = [];
    const visit = (value: unknown, key?: string): void => {
      if (Array.isArray(value)) value.forEach((item) => visit(item));
      else if (value !== null && typeof value === 'object') {
        if (key === 'schema') schemas.push(value as Json);
        for (const [k, item] of Object.entries(value)) visit(item, k);
      }
    };
    visit(document.paths);
    expect(schemas.length).toBeGreaterThan(40);
    const rewrite = (schema: Json): Json =>
      JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/schemas/', '"https://admin.test/components#/$defs/'),
      ) as Json;
    for (const schema of schemas) expect(() => ajv.compile(rewrite(schema))).not.toThrow();
    // The problem schema accepts what the API sends.
    const validate = ajv.getSchema('https://admin.test/components#/$defs/Problem')!;
    expect(validate({ type: 'urn:x', title: 't', status: 404, detail: 'd' })).toBe(true);
  });

  it('renders a self-contained reference page naming every operation', async () => {
    const response = await fetch(`${f.base}/admin/v1/docs`);
    const html = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    for (const { op } of operations()) expect(html).toContain(`id="${String(op.operationId)}"`);
    // Nothing loaded from elsewhere: the network may be closed.
    expect(html).not.toMatch(/<script|<link|src="http|@import|url\(/i);
  });

  /** Every example request body of an operation, with the `{name}` its description names. */
  const examplesOf = (op: Json) => {
    const media = (op.requestBody as { content: Record<string, { examples?: Record<string, Json> }> } | undefined)
      ?.content['application/json'];
    return Object.entries(media?.examples ?? {}).map(([key, example]) => ({
      key,
      name: /`\{name\}` = `([^`]+)`/.exec(String(example.description ?? ''))?.[1],
      value: example.value,
    }));
  };

  it('shows an example request body for every write', () => {
    const writes = operations().filter(({ op }) => op.requestBody !== undefined);
    expect(writes.length).toBeGreaterThan(5);
    for (const { path, method, op } of writes) {
      expect(examplesOf(op).length, `${method} ${path}`).toBeGreaterThan(0);
    }
    // Each example is valid by the body schema the document states (JSON Schema 2020-12).
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const { path, method, op } of writes) {
      const schema = (op.requestBody as { content: Record<string, { schema: Json }> }).content['application/json']!
        .schema;
      const validate = ajv.compile(schema);
      for (const example of examplesOf(op)) {
        expect(validate(example.value), `${method} ${path} ${example.key}: ${ajv.errorsText(validate.errors)}`).toBe(
          true,
        );
      }
    }
    const sourceTypes = examplesOf(operations().find(({ op }) => op.operationId === 'putSource')!.op).map(
      (example) => (example.value as { type: string; secrets?: unknown }).type,
    );
    expect(sourceTypes).toEqual(expect.arrayContaining(['postgres', 's3', 'static']));
  });

  it('has examples the API accepts as they are written', async () => {
    const operator = await f.operator();
    const byId = new Map(operations().map(({ path, method, op }) => [String(op.operationId), { path, method, op }]));
    const send = async (operationId: string, headers: Record<string, string> = {}) => {
      const { path, method, op } = byId.get(operationId)!;
      const answers = [];
      for (const example of examplesOf(op)) {
        const concrete = path.replace('{tenantId}', 'acme').replace('{name}', example.name ?? '(none)');
        answers.push({
          example,
          response: await f.call(method.toUpperCase(), concrete, { token: operator, body: example.value, headers }),
        });
      }
      return answers;
    };
    const created = await send('createTenant');
    for (const { example, response } of created) expect(response.status, `${example.key}: ${response.text}`).toBe(201);
    const etag = created[0]!.response.headers.get('etag')!;
    for (const { example, response } of await send('replaceTenantSettings', { 'if-match': etag })) {
      expect(response.status, `${example.key}: ${response.text}`).toBe(200);
    }
    for (const operationId of ['putIssuer', 'putSource', 'putGrant', 'putAdminRoleBinding', 'putAuthorizationServer']) {
      for (const { example, response } of await send(operationId)) {
        expect(response.status, `${operationId} ${example.key}: ${response.text}`).toBe(201);
      }
    }
    for (const { example, response } of await send('previewAs')) {
      if (example.key === 'token') {
        // Well formed, so refused only by verification: it is no real token of the tenant's issuer.
        expect(response.status, response.text).toBe(422);
        expect((response.json.errors as Json[]).map((error) => error.pointer)).toEqual(['/token']);
      } else {
        expect(response.status, `${example.key}: ${response.text}`).toBe(200);
      }
    }
  });

  it('renders the examples, code spans and alternatives on the reference page', async () => {
    const html = await (await fetch(`${f.base}/admin/v1/docs`)).text();
    const escapeHtml = (text: string) =>
      text
        .replaceAll('&', '&amp;')
        .replaceAll('<', '&lt;')
        .replaceAll('>', '&gt;')
        .replaceAll('"', '&quot;')
        .replaceAll("'", '&#39;');
    for (const { op } of operations()) {
      for (const example of examplesOf(op)) expect(html).toContain(escapeHtml(JSON.stringify(example.value, null, 2)));
    }
    expect(html).toContain('Example answer (200)');
    // Outside the JSON blocks, Markdown code spans are rendered, never shown as backticks.
    expect(html.replace(/<pre>[\s\S]*?<\/pre>/g, '')).not.toContain('`');
    expect(html).toContain('<code>secrets</code>');
    // The issuer body is one of two shapes: listed as such, not as a raw `anyOf` array.
    const putIssuer = html.slice(html.indexOf('id="putIssuer"'), html.indexOf('id="deleteIssuer"'));
    expect(putIssuer).toContain('One of:');
    expect(putIssuer).not.toContain('&quot;anyOf&quot;');
  });
});
