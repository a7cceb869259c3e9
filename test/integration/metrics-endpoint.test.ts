import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { within } from '@mcpgw/test-helpers/within';
import type { StartedGateway } from '../helpers/gateway.js';
import { buildTestApp, startGateway } from '../helpers/gateway.js';
import type { LocalIssuer } from '../helpers/local-issuer.js';
import { startLocalIssuer } from '../helpers/local-issuer.js';
import { mcpPost } from '../helpers/mcp-http.js';
import { parseExposition } from '../helpers/prometheus-text.js';

// A gateway on a real port, a few requests of every kind, then a
// scrape of /metrics that must hold every metric of the contract in docs/operations.md with the
// values those requests imply; and who may scrape.

const METRICS_TOKEN = 'scrape-token-0123456789abcdefghijklmnop';
let gateway: StartedGateway;
let jwtIssuer: LocalIssuer;
let opaqueIssuer: LocalIssuer;
const endpoint = (tenant: string) => `${gateway.baseUrl}/t/${tenant}/mcp`;

/** The metric names and types of the "Metric contract" table of docs/operations.md. */
async function contract(): Promise<Map<string, string>> {
  const doc = await readFile(new URL('../../docs/operations.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Metric contract'));
  const table = section.slice(0, section.indexOf('\n## ', 1));
  const metrics = new Map<string, string>();
  for (const line of table.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const name = /^`([a-z_:][a-z0-9_:]*)`$/.exec(cells[1] ?? '')?.[1];
    if (name !== undefined) metrics.set(name, cells[2] as string);
  }
  return metrics;
}

const scrape = async (headers: Record<string, string> = { authorization: `Bearer ${METRICS_TOKEN}` }) =>
  fetch(`${gateway.baseUrl}/metrics`, { headers });

beforeAll(async () => {
  jwtIssuer = await startLocalIssuer({ path: '/idp-jwt' });
  opaqueIssuer = await startLocalIssuer({ path: '/idp-opaque' });
  const staticSource = (id: string) => ({
    id,
    type: 'static',
    resources: [{ uri: `test://${id}/1`, name: `${id}-1`, text: `${id} one` }],
  });
  const config = {
    tenants: [
      {
        id: 'acme',
        auth: { issuers: [{ issuer: jwtIssuer.issuer, jwksUri: jwtIssuer.jwksUri }] },
        grants: [{ name: 'all', match: {}, allow: [{ source: 'docs' }] }],
        sources: [staticSource('docs')],
      },
      {
        id: 'initech',
        auth: {
          issuers: [
            {
              issuer: opaqueIssuer.issuer,
              introspection: { endpoint: opaqueIssuer.introspectionEndpoint, clientId: 'gw', clientSecret: 'x' },
            },
          ],
        },
        grants: [{ name: 'all', match: {}, allow: [{ source: 'payroll' }] }],
        sources: [staticSource('payroll')],
      },
    ],
  };
  const dir = await mkdtemp(join(tmpdir(), 'gw-metrics-'));
  await writeFile(join(dir, 'gateway.json'), JSON.stringify(config));
  gateway = await startGateway({ configPath: join(dir, 'gateway.json'), env: { METRICS_TOKEN } });
});

afterAll(async () => {
  await gateway?.close();
  await jwtIssuer?.close();
  await opaqueIssuer?.close();
});

describe('GET /metrics after real traffic', () => {
  it('exposes every contract metric, with the values the traffic implies and bounded labels', async () => {
    const jwt = await jwtIssuer.token({ aud: endpoint('acme') });
    const auth = { authorization: `Bearer ${jwt}` };
    expect((await mcpPost(endpoint('acme'), 'resources/list', {}, auth)).status).toBe(200);
    expect((await mcpPost(endpoint('acme'), 'resources/list', {}, auth)).status).toBe(200);
    const missing = await mcpPost(endpoint('acme'), 'resources/read', { uri: 'test://docs/nope' }, auth);
    expect(missing.body).toMatchObject({ error: { code: -32602 } });
    expect((await mcpPost(endpoint('acme'), 'resources/list')).status).toBe(401);
    expect((await mcpPost(endpoint('acme'), 'made/up', {}, auth)).body).toMatchObject({ error: { code: -32601 } });
    expect((await mcpPost(endpoint('no-such-tenant'), 'resources/list')).status).toBe(404);
    opaqueIssuer.opaqueTokens.set('opaque-active', {
      active: true,
      sub: 'bob',
      aud: endpoint('initech'),
      exp: Math.floor(Date.now() / 1000) + 300,
    });
    const opaque = (token: string) => ({ authorization: `Bearer ${token}` });
    expect((await mcpPost(endpoint('initech'), 'resources/list', {}, opaque('opaque-active'))).status).toBe(200);
    expect((await mcpPost(endpoint('initech'), 'resources/list', {}, opaque('opaque-inactive'))).status).toBe(401);

    // The health monitor probes once at listen; wait for its first round to reach the gauge.
    let text = { body: '', type: null as string | null };
    await within(
      10_000,
      async () => {
        const response = await scrape();
        expect(response.status).toBe(200);
        const body = await response.text();
        expect(body).toMatch(/mcpgw_source_up\{tenant="initech",source="payroll"\} 1/);
        text = { body, type: response.headers.get('content-type') };
      },
      "the health monitor's first round on the gauge",
    );
    expect(text.type).toMatch(/^text\/plain; version=0\.0\.4/);
    const metrics = parseExposition(text.body);

    for (const [name, type] of await contract()) {
      expect(metrics.types.get(name), name).toBe(type);
      const series = type === 'histogram' ? `${name}_count` : name;
      expect(metrics.find(series).length, `${name} has a sample`).toBeGreaterThan(0);
    }

    const requests = (labels: Record<string, string>) => metrics.value('mcpgw_requests_total', labels);
    expect(requests({ tenant: 'acme', method: 'resources/list', outcome: 'ok' })).toBe(2);
    expect(requests({ tenant: 'acme', method: 'resources/read', outcome: '-32602' })).toBe(1);
    expect(requests({ tenant: 'acme', method: 'resources/list', outcome: 'http_401' })).toBe(1);
    // A method no MCP revision has is `other`; a tenant no configuration has is `unknown`.
    expect(requests({ tenant: 'acme', method: 'other', outcome: '-32601' })).toBe(1);
    expect(requests({ tenant: 'unknown', method: 'resources/list', outcome: 'http_404' })).toBe(1);
    expect(requests({ tenant: 'initech', outcome: 'ok' })).toBe(1);
    expect(requests({ tenant: 'initech', outcome: 'http_401' })).toBe(1);
    expect(metrics.value('mcpgw_request_duration_seconds_count', { tenant: 'acme', method: 'resources/list' })).toBe(3);
    const sum = metrics.value('mcpgw_request_duration_seconds_sum');
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(30);

    // The second list of acme is a result-cache hit; the first a miss, which reached the backend.
    expect(metrics.value('mcpgw_cache_operations_total', { layer: 'result', result: 'hit' })).toBeGreaterThanOrEqual(1);
    expect(metrics.value('mcpgw_cache_operations_total', { layer: 'catalog', result: 'miss' })).toBeGreaterThanOrEqual(
      1,
    );
    expect(metrics.find('mcpgw_cache_operations_total')).toHaveLength(8);
    expect(metrics.value('mcpgw_backend_duration_seconds_count', { source_type: 'static' })).toBeGreaterThanOrEqual(2);
    expect(metrics.value('mcpgw_backend_errors_total', { source_type: 'static' })).toBe(0);
    expect(metrics.value('mcpgw_source_up', { tenant: 'acme', source: 'docs' })).toBe(1);
    expect(metrics.value('mcpgw_redis_circuit_open')).toBe(0);
    expect(metrics.value('mcpgw_jwks_fetches_total', { outcome: 'ok' })).toBe(1);
    expect(metrics.value('mcpgw_jwks_fetches_total', { outcome: 'error' })).toBe(0);
    expect(metrics.value('mcpgw_introspection_requests_total', { outcome: 'active' })).toBe(1);
    expect(metrics.value('mcpgw_introspection_requests_total', { outcome: 'inactive' })).toBe(1);
    expect(metrics.value('mcpgw_listen_streams')).toBe(0);
    expect(metrics.find('mcpgw_rate_limited_total').map((s) => s.labels.scope)).toEqual(['ip', 'tenant', 'principal']);
    expect(metrics.value('mcpgw_shed_total')).toBe(0);
    expect(metrics.value('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

    // Never a URI, a subject or a token in a label value.
    for (const sample of metrics.samples.filter((s) => s.name.startsWith('mcpgw_'))) {
      for (const value of Object.values(sample.labels)) {
        expect(value).not.toMatch(/test:\/\/|alice|bob|opaque|nope|no-such-tenant|made\/up/);
        expect(value).not.toContain(jwt.slice(0, 20));
      }
    }
  });
});

describe('who may scrape', () => {
  it('requires the bearer token, compared exactly; a wrong or missing one is 401 with a challenge', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: `Bearer ${METRICS_TOKEN}x` },
      { authorization: `Bearer ${METRICS_TOKEN.slice(0, -1)}` },
      { authorization: `Basic ${METRICS_TOKEN}` },
      { authorization: METRICS_TOKEN },
    ]) {
      const response = await scrape(headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await response.text()).not.toContain('mcpgw_');
    }
    // RFC 7235 §2.1: the scheme is case-insensitive.
    expect((await scrape({ authorization: `bearer ${METRICS_TOKEN}` })).status).toBe(200);
  });

  it('with the token, answers a scrape by address (Prometheus does not send PUBLIC_URL as Host)', async () => {
    const response = await gateway.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { host: '10.1.2.3:8080', authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(response.statusCode).toBe(200);
    // The MCP endpoint keeps its Host check.
    const mcp = await gateway.app.inject({ method: 'POST', url: '/t/acme/mcp', headers: { host: '10.1.2.3:8080' } });
    expect(mcp.statusCode).toBe(403);
  });

  it('without METRICS_TOKEN: open on a loopback bind, absent (404) off loopback', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gw-metrics-'));
    const issuer = { issuer: 'https://idp.example.com', jwksUri: 'https://idp.example.com/jwks' };
    const tenant = {
      id: 'acme',
      auth: { issuers: [issuer] },
      sources: [{ id: 'docs', type: 'static', resources: [] }],
    };
    await writeFile(join(dir, 'gateway.json'), JSON.stringify({ tenants: [tenant] }));
    const build = (env: Record<string, string>) =>
      buildTestApp({ env: { GATEWAY_CONFIG: join(dir, 'gateway.json'), ...env } });
    const loopback = await build({ HOST: '127.0.0.1', PORT: '8080' });
    try {
      const response = await loopback.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { host: '127.0.0.1:8080' },
      });
      expect(response.statusCode).toBe(200);
      expect(response.body).toContain('mcpgw_requests_total');
    } finally {
      await loopback.close();
    }
    const exposed = await build({
      HOST: '0.0.0.0',
      PORT: '8080',
      PUBLIC_URL: 'https://mcp.example.com',
      SINGLE_REPLICA: 'true',
    });
    try {
      const response = await exposed.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { host: 'mcp.example.com' },
      });
      expect(response.statusCode).toBe(404);
    } finally {
      await exposed.close();
    }
  });
});
