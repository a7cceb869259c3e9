import { describe, expect, it } from 'vitest';
import { ConfigError } from '../src/config-error.js';
import { ENV_KEYS, readEnv } from '../src/env.js';
import { osaDistance } from '../src/stray-env-names.js';

// The environment's own rules beyond each value: a deployment other machines reach shares its
// control-plane store (or says it runs alone), and a variable that looks meant for the gateway
// but is none of its settings stops it, named with the setting it probably meant.

const OFF_LOOPBACK = { HOST: '0.0.0.0', PUBLIC_URL: 'https://mcp.example.com' };

function issuesOf(env: Record<string, string>): Array<{ path: string; message: string }> {
  try {
    readEnv(env);
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return [...(error as ConfigError).issues];
  }
}

describe('a non-loopback bind and the control-plane store', () => {
  it('refuses the embedded store off loopback, saying why and naming SINGLE_REPLICA', () => {
    const issues = issuesOf(OFF_LOOPBACK);
    expect(issues).toEqual([{ path: 'env.DATABASE_URL', message: expect.stringContaining('SINGLE_REPLICA=true') }]);
    expect(issues[0]?.message).toMatch(/every replica shares one control-plane store/);
    expect(issues[0]?.message).toMatch(/PGlite under DATA_DIR, this replica's own/);
  });

  it('starts with a shared database, or alone on purpose, and on loopback as before', () => {
    expect(readEnv({ ...OFF_LOOPBACK, DATABASE_URL: 'postgres://gw@db:5432/gw' }).SINGLE_REPLICA).toBe(false);
    expect(readEnv({ ...OFF_LOOPBACK, SINGLE_REPLICA: 'true' }).SINGLE_REPLICA).toBe(true);
    expect(readEnv({}).SINGLE_REPLICA).toBe(false);
    expect(issuesOf({ ...OFF_LOOPBACK, SINGLE_REPLICA: 'false' })).toHaveLength(1);
  });

  it('takes only true or false', () => {
    expect(issuesOf({ ...OFF_LOOPBACK, SINGLE_REPLICA: 'yes' })).toEqual([
      { path: 'env.SINGLE_REPLICA', message: 'must be true or false' },
    ]);
  });

  it('reports the refusal together with every other problem of the environment', () => {
    const issues = issuesOf({ HOST: '0.0.0.0', PORT: 'eighty', OPERATOR_ISUER: 'https://idp.example.com' });
    expect(issues.map((issue) => issue.path).sort()).toEqual([
      'env.DATABASE_URL',
      'env.OPERATOR_ISUER',
      'env.PORT',
      'env.PUBLIC_URL',
    ]);
  });
});

describe('variables that are not settings of the gateway', () => {
  it('names a misspelt setting with the one it probably meant', () => {
    expect(issuesOf({ OPERATOR_ISUER: 'https://idp.example.com' })).toEqual([
      {
        path: 'env.OPERATOR_ISUER',
        message: 'OPERATOR_ISUER is not a setting of this gateway; did you mean OPERATOR_ISSUER?',
      },
    ]);
    expect(issuesOf({ PROT: '8080' })[0]?.message).toMatch(/did you mean PORT\?$/);
    expect(issuesOf({ DATABASE_URI: 'postgres://db/gw' })[0]?.message).toMatch(/did you mean DATABASE_URL\?$/);
    expect(issuesOf({ log_level: 'debug' })[0]?.message).toMatch(/did you mean LOG_LEVEL\?$/);
    // Empty is unset, for a misspelt name as for a setting: it changes nothing.
    expect(issuesOf({ OPERATOR_ISUER: '' })).toEqual([]);
  });

  it('catches a swap of two neighbouring letters in every key the schema has', () => {
    for (const key of ENV_KEYS) {
      const i = [...key].findIndex((char, at) => at > 0 && key[at + 1] !== undefined && key[at + 1] !== char);
      const typo = `${key.slice(0, i)}${key[i + 1]}${key[i]}${key.slice(i + 2)}`;
      expect(
        issuesOf({ [typo]: '1' }).map((issue) => issue.message),
        typo,
      ).toEqual([`${typo} is not a setting of this gateway; did you mean ${key}?`]);
    }
  });

  it('lists the settings under a prefix only the gateway uses', () => {
    const [issue] = issuesOf({ OPERATOR_JWKS: 'https://idp.example.com/jwks' });
    expect(issue?.path).toBe('env.OPERATOR_JWKS');
    expect(issue?.message).toMatch(/^OPERATOR_JWKS is not a setting of this gateway; its settings starting OPERATOR_ /);
    expect(issue?.message).toContain('OPERATOR_JWKS_URI');
    for (const name of ['LISTEN_TIMEOUT_MS', 'SHED_ALWAYS', 'RATE_LIMIT_PER_HOUR', 'METRICS_PATH', 'GATEWAY_PORT']) {
      expect(
        issuesOf({ [name]: '1' }).map((i) => i.path),
        name,
      ).toEqual([`env.${name}`]);
    }
  });

  it('leaves the platform’s, libraries’ and near-but-different names alone', () => {
    const platform = {
      HOME: '/home/node',
      HOSTNAME: 'mcp-gateway-5d9f7c-x2x7q',
      PATH: '/usr/bin',
      PWD: '/app',
      CI: 'true',
      NODE_ENV: 'production',
      NODE_OPTIONS: '--max-old-space-size=400',
      npm_config_cache: '/tmp/npm',
      npm_lifecycle_event: 'start',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=a',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod',
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_PORT: 'tcp://10.96.0.1:443',
      // What kubelet derives from a Service named "gateway" in the same namespace.
      GATEWAY_SERVICE_HOST: '10.96.4.20',
      GATEWAY_SERVICE_PORT: '80',
      GATEWAY_SERVICE_PORT_HTTP: '80',
      GATEWAY_PORT: 'tcp://10.96.4.20:80',
      GATEWAY_PORT_80_TCP: 'tcp://10.96.4.20:80',
      GATEWAY_PORT_80_TCP_ADDR: '10.96.4.20',
      GATEWAY_PORT_80_TCP_PORT: '80',
      GATEWAY_PORT_80_TCP_PROTO: 'tcp',
      // Other software's variables under words our keys share.
      REDIS_HOST: 'redis',
      DATABASE_HOST: 'db',
      LOG_FORMAT: 'json',
      ADMIN_EMAIL: 'ops@example.com',
      // The admin command line's token.
      ADMIN_TOKEN: 'token',
    };
    expect(issuesOf(platform)).toEqual([]);
  });

  it('measures optimal string alignment distance', () => {
    expect(osaDistance('HOME', 'HOST')).toBe(2);
    expect(osaDistance('OPERATOR_ISUER', 'OPERATOR_ISSUER')).toBe(1);
    expect(osaDistance('PROT', 'PORT')).toBe(1);
    expect(osaDistance('CA', 'ABC')).toBe(3);
    expect(osaDistance('', 'PORT')).toBe(4);
  });
});
