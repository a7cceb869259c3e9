import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { loadConfig, readEnv } from '@mcpgw/config';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createSourceRegistry, demoBootstrap } from '@mcpgw/gateway/testing';
import { composeSchemaValidator, interpolateCompose, interpolateDeep } from '@mcpgw/test-helpers/compose';

// infra/compose.yaml, checked without a Docker engine: it parses, every reference resolves
// (services, files, volumes, URLs), every service has a health check and a pinned image, the
// gateway's environment loads, and the pieces that must agree (Keycloak's issuer and audience,
// the proxy's upstreams, credentials created by the one-shot jobs) do.

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  restart?: string;
  read_only?: boolean;
  tmpfs?: string[];
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes: Record<string, unknown>;
}

const infra = (path: string) => fileURLToPath(new URL(`../../infra/${path}`, import.meta.url));
const read = (path: string) => readFileSync(infra(path), 'utf8');

/** What an operator passes; everything else takes the file's defaults. */
const HOST_ENV = { SECRETS_KEY: 'compose-test-secret-compose-test-secret' };
const raw = parseYaml(read('compose.yaml'), { merge: true }) as ComposeFile;
const compose = interpolateDeep(raw, HOST_ENV);
const services = compose.services;
const gateways = Object.entries(services).filter(([, s]) => s.build?.dockerfile === 'infra/Dockerfile');
const [, gateway] = gateways[0] as [string, ComposeService];
const env = gateway.environment as Record<string, string>;

/** `./x:/y:ro` → { source: './x', target: '/y' }. */
function mounts(service: ComposeService): Array<{ source: string; target: string }> {
  return (service.volumes ?? []).map((volume) => {
    const [source = '', target = ''] = volume.split(':');
    return { source, target };
  });
}
function hostFileFor(service: ComposeService, target: string): string {
  const mount = mounts(service).find((m) => m.target === target);
  expect(mount, `${target} is mounted`).toBeDefined();
  return infra(mount?.source ?? '');
}
function publishedPort(service: ComposeService, containerPort: number): number | undefined {
  const port = (service.ports ?? []).map((p) => p.split(':')).find((p) => Number(p.at(-1)) === containerPort);
  return port === undefined ? undefined : Number(port.at(-2));
}

describe('infra/compose.yaml', () => {
  it('needs SECRETS_KEY from the operator and nothing else', () => {
    expect(() => interpolateDeep(raw, {})).toThrow(/SECRETS_KEY/);
  });

  it('validates against the Compose Specification schema, which refuses unknown keys', () => {
    const validate = composeSchemaValidator();
    expect(validate(compose), JSON.stringify(validate.errors)).toBe(true);
    const misspelt = structuredClone(compose) as unknown as { services: Record<string, Record<string, unknown>> };
    misspelt.services.redis = { ...misspelt.services.redis, healtcheck: {} };
    expect(validate(misspelt)).toBe(false);
  });

  it('runs two gateway replicas from the repository Dockerfile with identical environments', () => {
    expect(gateways.map(([name]) => name)).toHaveLength(2);
    for (const [, service] of gateways) {
      expect(existsSync(infra(`${service.build?.context}/${service.build?.dockerfile}`))).toBe(true);
      expect(service.environment).toEqual(env);
    }
  });

  it('pins every image to a version tag and gives every long-running service a health check', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build !== undefined) continue;
      expect(service.image, name).toMatch(/^[\w./-]+:[\w.-]*\d[\w.-]*$/);
      expect(service.image, name).not.toMatch(/:latest$/);
      const oneShot = service.restart === 'no';
      if (oneShot) {
        // Jobs are awaited by completion, never by health.
        for (const other of Object.values(services)) {
          const condition = other.depends_on?.[name]?.condition;
          if (condition !== undefined) expect(condition, name).toBe('service_completed_successfully');
        }
      } else {
        expect(service.healthcheck?.test.length, `${name} has a healthcheck`).toBeGreaterThan(1);
      }
    }
    for (const [name, service] of gateways) {
      expect(service.healthcheck?.test.join(' '), name).toContain('/healthz');
    }
  });

  it('names only existing services in depends_on, with conditions they can meet', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [target, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(services[target], `${name} depends on ${target}`).toBeDefined();
        expect(['service_started', 'service_healthy', 'service_completed_successfully']).toContain(condition);
        if (condition === 'service_healthy') expect(services[target]?.healthcheck, target).toBeDefined();
      }
    }
  });

  it('mounts only files of the repository and declared named volumes', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const { source } of mounts(service)) {
        if (source.startsWith('.')) expect(existsSync(infra(source)), `${name}: ${source}`).toBe(true);
        else expect(Object.keys(compose.volumes), `${name}: volume ${source}`).toContain(source);
      }
    }
  });

  it('wires the gateway environment the issue names, and it loads', async () => {
    for (const key of ['PUBLIC_URL', 'REDIS_URL', 'DATABASE_URL', 'SECRETS_KEY', 'GATEWAY_CONFIG', 'DATA_DIR']) {
      expect(env[key], key).toBeTruthy();
    }
    expect(() => readEnv(env)).not.toThrow();
    // The bootstrap file, mounted where GATEWAY_CONFIG points, validates with this environment
    // (every `$env` it references is set).
    const bootstrap = hostFileFor(gateway, env.GATEWAY_CONFIG as string);
    const config = await loadConfig({
      registry: createSourceRegistry(),
      defaultBootstrap: demoBootstrap(),
      env: { ...env, GATEWAY_CONFIG: bootstrap },
    });
    expect(config.tenants.map((t) => t.id)).toEqual(['demo']);
  });

  it('takes METRICS_TOKEN from the operator’s environment, never from the file', () => {
    for (const [name, service] of Object.entries(raw.services)) {
      const value = service.environment?.METRICS_TOKEN;
      if (service.build?.dockerfile === 'infra/Dockerfile')
        expect(value, name).toMatch(/^\$\{METRICS_TOKEN(:?[-?][^}]*)?\}$/);
      else expect(value, name).toBeUndefined();
    }
    // Not set by the operator: no token, and the environment still loads (no /metrics route).
    expect(env.METRICS_TOKEN ?? '').toBe('');
    expect(readEnv(env).METRICS_TOKEN).toBeUndefined();
    const token = 'compose-scrape-token-compose-scrape-token';
    const withToken = interpolateDeep(raw, { ...HOST_ENV, METRICS_TOKEN: token });
    for (const [name] of gateways) {
      const replica = withToken.services[name]?.environment as Record<string, string>;
      expect(replica.METRICS_TOKEN, name).toBe(token);
      expect(readEnv(replica).METRICS_TOKEN, name).toBe(token);
    }
    expect(read('compose.yaml')).not.toMatch(/METRICS_TOKEN:\s*['"]?[\x21-\x7e]{32,}/);
  });

  it('marks every password development-only and takes each from the operator’s environment', () => {
    const text = read('compose.yaml');
    // Every value that holds a password or secret is a `${NAME:-dev-only-…}` default (or required).
    const secretValues = Object.values(raw.services).flatMap((service) =>
      Object.entries(service.environment ?? {}).filter(([name]) => /PASSWORD|SECRET(?!S_KEY)/.test(name)),
    );
    expect(secretValues.length).toBeGreaterThanOrEqual(7);
    for (const [name, value] of secretValues) expect(value, name).toMatch(/^\$\{[A-Z_]+:-dev-only-[\w-]+\}$/);
    // And every password inside a connection URL.
    for (const name of ['DATABASE_URL', 'WAREHOUSE_DATABASE_URL']) {
      expect(raw.services['gateway-1']?.environment?.[name], name).toMatch(/:\$\{[A-Z_]+:-dev-only-[\w-]+\}@/);
    }
    // Each overridable name is announced in a comment, as development-only.
    const overridable = [...new Set([...text.matchAll(/\$\{([A-Z_]+):-dev-only-/g)].map((match) => match[1] ?? ''))];
    expect(overridable.sort()).toEqual([
      'KEYCLOAK_ADMIN_PASSWORD',
      'KEYCLOAK_DEMO_ADMIN_PASSWORD',
      'KEYCLOAK_OPERATOR_PASSWORD',
      'MINIO_GATEWAY_SECRET',
      'MINIO_ROOT_PASSWORD',
      'POSTGRES_PASSWORD',
      'WAREHOUSE_PASSWORD',
    ]);
    const comments = text
      .split('\n')
      .filter((line) => line.trimStart().startsWith('#'))
      .join('\n');
    expect(comments).toMatch(/DEVELOPMENT ONLY/);
    for (const name of overridable) expect(comments, name).toContain(name);
    // Set from the environment, each reaches every service that uses it, and no default remains.
    const chosen = Object.fromEntries(overridable.map((name) => [name, `chosen-${name.toLowerCase()}`]));
    const overridden = interpolateDeep(raw, { ...HOST_ENV, ...chosen });
    expect(JSON.stringify(overridden)).not.toContain('dev-only-');
    const gatewayEnv = overridden.services['gateway-1']?.environment as Record<string, string>;
    expect(new URL(gatewayEnv.DATABASE_URL as string).password).toBe(chosen.POSTGRES_PASSWORD);
    expect(overridden.services.postgres?.environment?.POSTGRES_PASSWORD).toBe(chosen.POSTGRES_PASSWORD);
    expect(new URL(gatewayEnv.WAREHOUSE_DATABASE_URL as string).password).toBe(chosen.WAREHOUSE_PASSWORD);
    expect(overridden.services.keycloak?.environment?.KC_BOOTSTRAP_ADMIN_PASSWORD).toBe(chosen.KEYCLOAK_ADMIN_PASSWORD);
    expect(overridden.services.minio?.environment?.MINIO_ROOT_PASSWORD).toBe(chosen.MINIO_ROOT_PASSWORD);
    expect(overridden.services.keycloak?.environment?.KEYCLOAK_OPERATOR_PASSWORD).toBe(
      chosen.KEYCLOAK_OPERATOR_PASSWORD,
    );
    expect(overridden.services.keycloak?.environment?.KEYCLOAK_DEMO_ADMIN_PASSWORD).toBe(
      chosen.KEYCLOAK_DEMO_ADMIN_PASSWORD,
    );
    expect(gatewayEnv.S3_SECRET_ACCESS_KEY).toBe(chosen.MINIO_GATEWAY_SECRET);
  });

  it('keeps the root filesystem read-only with DATA_DIR on a per-replica volume and /tmp in memory', () => {
    const dataVolumes = gateways.map(([, service]) => mounts(service).find((m) => m.target === env.DATA_DIR)?.source);
    expect(new Set(dataVolumes).size).toBe(gateways.length);
    for (const [name, service] of gateways) {
      expect(service.read_only, name).toBe(true);
      expect(service.tmpfs, name).toContain('/tmp');
    }
  });

  it('points every backend URL at a service of the stack with the credentials it is given', () => {
    const redis = new URL(env.REDIS_URL as string);
    expect(services[redis.hostname]?.image).toMatch(/^redis:/);
    const postgres = services.postgres?.environment as Record<string, string>;
    const database = new URL(env.DATABASE_URL as string);
    expect(services[database.hostname]).toBe(services.postgres);
    expect([database.username, database.password, database.pathname]).toEqual([
      postgres.POSTGRES_USER,
      postgres.POSTGRES_PASSWORD,
      `/${postgres.POSTGRES_DB}`,
    ]);
    const warehouse = new URL(env.WAREHOUSE_DATABASE_URL as string);
    expect(services[warehouse.hostname]).toBe(services.postgres);
    expect(warehouse.password).toBe(postgres.WAREHOUSE_PASSWORD);
    const init = readFileSync(
      hostFileFor(services.postgres as ComposeService, '/docker-entrypoint-initdb.d/10-warehouse.sh'),
      'utf8',
    );
    expect(init).toContain(`CREATE ROLE ${warehouse.username} LOGIN`);
    expect(init).toContain(`CREATE DATABASE ${warehouse.pathname.slice(1)}`);
  });

  it('creates the bucket and the user the s3 source uses', () => {
    const document = parseYaml(readFileSync(hostFileFor(gateway, env.GATEWAY_CONFIG as string), 'utf8')) as {
      tenants: Array<{ sources: Array<Record<string, unknown>> }>;
    };
    const s3 = document.tenants[0]?.sources.find((s) => s.type === 's3') as { endpoint: string; bucket: string };
    expect(services[new URL(s3.endpoint).hostname]?.image).toMatch(/minio\/minio:/);
    const setup = services['minio-setup'] as ComposeService;
    const script = readFileSync(hostFileFor(setup, '/setup.sh'), 'utf8');
    expect(script).toContain(`mc mb --ignore-existing local/${s3.bucket}`);
    expect(script).toContain(`mc admin user add local ${env.S3_ACCESS_KEY_ID} "$MINIO_GATEWAY_SECRET"`);
    expect(setup.environment?.MINIO_GATEWAY_SECRET).toBe(env.S3_SECRET_ACCESS_KEY);
    expect(setup.environment?.MINIO_ROOT_PASSWORD).toBe(services.minio?.environment?.MINIO_ROOT_PASSWORD);
  });

  it('puts the proxy in front of both replicas on the PUBLIC_URL port', () => {
    const caddyfile = readFileSync(hostFileFor(services.proxy as ComposeService, '/etc/caddy/Caddyfile'), 'utf8');
    const upstreams = /reverse_proxy\s+([^{\n]+)/.exec(caddyfile)?.[1]?.trim().split(/\s+/);
    expect(upstreams?.sort()).toEqual(gateways.map(([name]) => `${name}:${env.PORT}`).sort());
    const listen = Number(/^:(\d+)\s*\{/m.exec(caddyfile)?.[1]);
    expect(publishedPort(services.proxy as ComposeService, listen)).toBe(
      Number(new URL(env.PUBLIC_URL as string).port),
    );
    expect(caddyfile).toMatch(/health_uri \/readyz/);
  });

  describe('Keycloak as the demo tenant’s identity provider', () => {
    const keycloak = services.keycloak as ComposeService;
    const realm = JSON.parse(
      readFileSync(hostFileFor(keycloak, '/opt/keycloak/data/import/demo-realm.json'), 'utf8'),
    ) as {
      realm: string;
      clients: Array<{
        clientId: string;
        defaultClientScopes: string[];
        optionalClientScopes: string[];
        publicClient: boolean;
        redirectUris: string[];
        attributes: Record<string, string>;
      }>;
      groups: Array<{ name: string }>;
      roles: { realm: Array<{ name: string }> };
      clientScopes: Array<{
        name: string;
        attributes: Record<string, string>;
        protocolMappers: Array<{ protocolMapper: string; config: Record<string, string> }>;
      }>;
      users: Array<{
        username: string;
        groups?: string[];
        realmRoles?: string[];
        credentials: Array<{ type: string; value: string }>;
      }>;
    };
    const tenant = (
      parseYaml(readFileSync(hostFileFor(gateway, env.GATEWAY_CONFIG as string), 'utf8')) as {
        tenants: Array<{
          id: string;
          auth: {
            issuers: Array<{ issuer: string; jwksUri: string; tokenTypes: string[] }>;
            requiredScopes: string[];
          };
          grants: Array<{ match: { groups?: string[] } }>;
          adminSignIn: { clientId: string; scopes: string[] };
          adminRoleBindings: Array<{ name: string; issuer?: string; groups?: string[] }>;
        }>;
      }
    ).tenants[0];
    const issuer = tenant?.auth.issuers[0];
    const client = realm.clients[0];
    const defaultScopes = realm.clientScopes.filter((s) => client?.defaultClientScopes.includes(s.name));

    it('is the issuer the tenant trusts, at the origin Keycloak is published on', () => {
      const hostname = keycloak.environment?.KC_HOSTNAME as string;
      expect(issuer?.issuer).toBe(`${hostname}/realms/${realm.realm}`);
      expect(issuer?.jwksUri).toBe(`${issuer?.issuer}/protocol/openid-connect/certs`);
      expect(publishedPort(keycloak, 8080)).toBe(Number(new URL(hostname).port));
      // Inside the gateway container that loopback origin is the forwarder's.
      const forward = /node (\/forward\/\S+) (\d+) ([\w-]+):(\d+) &/.exec(gateway.command?.join(' ') ?? '');
      expect(existsSync(hostFileFor(gateway, forward?.[1] as string))).toBe(true);
      expect(forward?.slice(2)).toEqual([new URL(hostname).port, 'keycloak', '8080']);
    });

    it("puts the tenant's canonical resource URI in access tokens only", () => {
      const audiences = defaultScopes
        .flatMap((s) => s.protocolMappers)
        .filter((m) => m.protocolMapper === 'oidc-audience-mapper');
      expect(audiences.map((m) => m.config['included.custom.audience'])).toEqual([
        `${env.PUBLIC_URL}/t/${tenant?.id}/mcp`,
      ]);
      expect(audiences[0]?.config['access.token.claim']).toBe('true');
      expect(audiences[0]?.config['id.token.claim']).toBe('false');
      // Keycloak's access tokens say `typ: JWT`.
      expect(issuer?.tokenTypes).toEqual(['at+jwt', 'jwt']);
    });

    it('grants the required scopes by default, with the subject, to a public PKCE client', () => {
      const inToken = defaultScopes.filter((s) => s.attributes['include.in.token.scope'] === 'true').map((s) => s.name);
      for (const scope of tenant?.auth.requiredScopes ?? []) expect(inToken).toContain(scope);
      const mappers = defaultScopes.flatMap((s) => s.protocolMappers.map((m) => m.protocolMapper));
      expect(mappers).toContain('oidc-sub-mapper');
      expect(client?.publicClient).toBe(true);
    });

    it('has a test user in the group a grant names', () => {
      const groups = tenant?.grants.flatMap((g) => g.match.groups ?? []) ?? [];
      const user = realm.users.find((u) => u.username === 'demo');
      expect(user?.groups?.map((g) => g.replace(/^\//, ''))).toEqual(expect.arrayContaining(groups));
    });

    const scope = (name: string) => realm.clientScopes.find((s) => s.name === name);
    const mapper = (name: string, type: string) =>
      scope(name)?.protocolMappers.find((m) => m.protocolMapper === type)?.config ?? {};
    const keycloakEnv = keycloak.environment as Record<string, string>;
    /** A realm placeholder (`${NAME}`, read from Keycloak's environment at import) as compose sets it. */
    const resolved = (value: string | undefined) => {
      const name = /^\$\{([A-Z_]+)\}$/.exec(value ?? '')?.[1];
      return name === undefined ? undefined : keycloakEnv[name];
    };

    it('has an operator user holding OPERATOR_ROLE, which the operator scope puts where the gateway reads it', () => {
      const config = readEnv(env);
      // The gateway trusts this realm for its operators, at the same origin as the tenant's issuer.
      expect(config.OPERATOR_ISSUER).toBe(issuer?.issuer);
      expect(config.OPERATOR_JWKS_URI).toBe(issuer?.jwksUri);
      expect(realm.roles.realm.map((role) => role.name)).toContain(config.OPERATOR_ROLE);
      const operator = realm.users.find((u) => u.username === 'operator');
      expect(operator?.realmRoles).toContain(config.OPERATOR_ROLE);
      // Its password is the development-only default compose hands Keycloak, unless overridden.
      expect(resolved(operator?.credentials[0]?.value)).toBe('dev-only-operator');
      // The realm role mapper's claim is the gateway's nested claim path (realm_access.roles).
      const roles = mapper('mcpgw:operator', 'oidc-usermodel-realm-role-mapper');
      expect(roles['claim.name']).toBe(config.OPERATOR_ROLE_CLAIM);
      expect(config.OPERATOR_ROLE_CLAIM).toBe('realm_access.roles');
      expect(roles['access.token.claim']).toBe('true');
      // The audience: the operator audience the gateway derives from PUBLIC_URL.
      const audience = mapper('mcpgw:operator', 'oidc-audience-mapper');
      expect(audience['included.custom.audience']).toBe(config.OPERATOR_AUDIENCE ?? `${config.PUBLIC_URL}/admin/v1`);
      expect(audience['id.token.claim']).toBe('false');
      // The client that asks for it marks its access tokens `at+jwt`, the only type operators' tokens may have.
      const admin = realm.clients.find((c) => c.optionalClientScopes.includes('mcpgw:operator'));
      expect(admin?.attributes['access.token.header.type.rfc9068']).toBe('true');
      // The MCP client cannot get an operator token.
      expect(client?.optionalClientScopes).not.toContain('mcpgw:operator');
      expect(client?.defaultClientScopes).not.toContain('mcpgw:operator');
    });

    it("has a tenant admin user whom the demo tenant's admin role binding and browser sign-in admit", () => {
      const demoAdmin = realm.users.find((u) => u.username === 'demo-admin');
      expect(resolved(demoAdmin?.credentials[0]?.value)).toBe('dev-only-demo-admin');
      expect(demoAdmin?.realmRoles ?? []).not.toContain('gateway-operator');
      const groups = (demoAdmin?.groups ?? []).map((g) => g.replace(/^\//, ''));
      for (const group of groups) expect(realm.groups.map((g) => g.name)).toContain(group);
      // A binding of the tenant names one of the user's groups, for this issuer.
      const binding = tenant?.adminRoleBindings.find((b) => (b.groups ?? []).some((g) => groups.includes(g)));
      expect(binding?.issuer ?? issuer?.issuer).toBe(issuer?.issuer);
      // The sign-in's client exists, is public (PKCE), and may call back to the tenant's callback.
      const signIn = tenant?.adminSignIn;
      const signInClient = realm.clients.find((c) => c.clientId === signIn?.clientId);
      expect(signInClient?.publicClient).toBe(true);
      expect(signInClient?.redirectUris).toContain(`${env.PUBLIC_URL}/admin/v1/tenants/${tenant?.id}/callback`);
      // The sign-in's scopes put the tenant's admin resource in the audience and the groups in the issuer's groupsClaim.
      const asked = (signIn?.scopes ?? []).filter((name) => name !== 'openid');
      expect(asked.every((name) => signInClient?.optionalClientScopes.includes(name))).toBe(true);
      const mappers = asked.flatMap((name) => scope(name)?.protocolMappers ?? []);
      expect(
        mappers
          .filter((m) => m.protocolMapper === 'oidc-audience-mapper')
          .map((m) => m.config['included.custom.audience']),
      ).toEqual([`${env.PUBLIC_URL}/admin/v1/tenants/${tenant?.id}`]);
      const groupsMapper = mappers.find((m) => m.protocolMapper === 'oidc-group-membership-mapper');
      expect(groupsMapper?.config['claim.name']).toBe(
        (tenant?.auth.issuers[0] as { groupsClaim?: string } | undefined)?.groupsClaim,
      );
      expect(groupsMapper?.config['full.path']).toBe('false');
      // The demo user reads resources but administers nothing.
      const demo = realm.users.find((u) => u.username === 'demo');
      expect((demo?.groups ?? []).map((g) => g.replace(/^\//, ''))).not.toContain(binding?.groups?.[0]);
    });
  });

  it('forwards the loopback issuer port to its target (compose/loopback-forward.mjs, run for real)', async () => {
    const upstream = createServer((req, res) => res.end(`keycloak saw ${req.url}`));
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    // A free port for the forwarder: it takes a fixed one, as in compose.
    const probe = createTcpServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const child = spawn(process.execPath, [
      infra('compose/loopback-forward.mjs'),
      String(port),
      `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    ]);
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      expect(JSON.parse(line.toString())).toMatchObject({ msg: 'loopback forwarder listening', port });
      const response = await fetch(`http://127.0.0.1:${port}/realms/demo/protocol/openid-connect/certs`);
      expect(await response.text()).toBe('keycloak saw /realms/demo/protocol/openid-connect/certs');
    } finally {
      child.kill();
      upstream.close();
    }
  });

  it('interpolates like compose', () => {
    expect(interpolateCompose('a${X:-d}b${Y-e}$${Z}', { Y: '' })).toBe('adb${Z}');
  });
});
