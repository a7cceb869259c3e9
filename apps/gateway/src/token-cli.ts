/**
 * `npm run token -- --tenant ID [--scope "a b"] [--sub X]`: prints an access
 * token from a tenant's hosted authorization server with the demo login (the
 * tenant trusts `{ "development": true }`), e.g. for curl: signed as its
 * token endpoint would sign it, with the tenant's keystore file. It mints for
 * the gateway that is running: a gateway with a demo login leaves a record
 * under DATA_DIR (its URL, and per tenant its issuer and resources), so the
 * token's `iss` and `aud` are that gateway's whatever PORT or GATEWAY_CONFIG
 * this shell has. With no gateway running it mints for the configuration this
 * environment describes, loaded as `npm start` loads it, and says so.
 *
 * `npm run token -- --operator` mints an operator token instead (the admin
 * API's operator audience, OPERATOR_ROLE in OPERATOR_ROLE_CLAIM): on a loopback
 * bind with no OPERATOR_ISSUER, beside a demo login, the gateway takes the
 * local operator issuer's tokens.
 *
 * Only the token goes to stdout (`TOKEN=$(npm run --silent token -- --tenant demo)`);
 * what it is for goes to stderr.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, isLoopbackHost, loadConfig, readEnv } from '@mcpgw/config';
import type { EnvConfig, GatewayConfig } from '@mcpgw/config';
import { ACCESS_TOKEN_TTL_SECONDS, mintAccessToken } from '@mcpgw/authorization-server';
import type { TokenTarget } from './local-issuers.js';
import { localOperatorKeystorePath, tenantKeystorePath, tokenTarget } from './local-issuers.js';
import { demoBootstrap } from './demo.js';
import { publicBaseUrl } from '@mcpgw/tenancy';
import type { RunningGateway } from './running-gateway.js';
import { findRunningGateways } from './running-gateway.js';
import { createSourceRegistry } from './source-registry.js';

const USAGE = `usage: npm run token -- --tenant ID [--admin] [--scope "a b"] [--sub SUBJECT]
       npm run token -- --operator [--sub SUBJECT]

  --tenant    a tenant whose auth.issuers include { "development": true } (the demo login)
  --admin     a token for the admin API (its adminSignIn resource and scopes) instead of the MCP endpoint
  --operator  an operator token for the whole admin API (GET /admin/v1/tenants, ...): the operator
              audience, and OPERATOR_ROLE in OPERATOR_ROLE_CLAIM. Only on a loopback bind with no
              OPERATOR_ISSUER (then the operator's own identity provider issues operator tokens):
              ADMIN_TOKEN=$(npm run --silent token -- --operator)
  --scope     space-separated scopes (default: every scope the tenant's grants and requiredScopes name,
              or with --admin its adminSignIn scopes other than OpenID Connect's)
  --sub       the token's subject (default: demo-user)

It mints for the gateway running from the same DATA_DIR (default .data in this folder);
with none running, for the gateway this environment (.env, PORT, HOST, PUBLIC_URL,
GATEWAY_CONFIG) would start.
`;

/** A mistake of the person at the terminal: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** What the CLI prints, and what the token is for. */
export interface TenantToken {
  token: string;
  issuer: string;
  resource: string;
  scope: string;
  ttlSeconds: number;
}

/**
 * Mints a token of `tenant`'s hosted issuer: `iss` that issuer, `aud` the
 * tenant's canonical resource URI, both from `target` (a running gateway's
 * record) or else from the configuration. Throws a UsageError (message for
 * the person at the terminal) when the tenant is missing or has no demo login.
 */
export async function mintTenantToken(
  config: GatewayConfig,
  request: { tenant: string; scope?: string | undefined; sub?: string | undefined; admin?: boolean | undefined },
  target: (TokenTarget & { describe?: string }) | undefined = tokenTarget(config),
): Promise<TenantToken> {
  const where = target?.describe ?? config.origin;
  const entry =
    target !== undefined && Object.hasOwn(target.tenants, request.tenant) ? target.tenants[request.tenant] : undefined;
  if (target === undefined || entry === undefined) {
    const trusting = Object.keys(target?.tenants ?? {});
    const inConfig = target?.describe === undefined && config.tenants.some((tenant) => tenant.id === request.tenant);
    const why = inConfig
      ? `tenant '${request.tenant}' does not trust the development issuer (no demo login)`
      : `there is no tenant '${request.tenant}'`;
    const which = trusting.length === 0 ? 'no tenant does' : `tenants that do: ${trusting.join(', ')}`;
    throw new UsageError(`${why} in ${where} (${which})`);
  }
  if (request.admin === true && entry.admin === undefined) {
    throw new UsageError(`tenant '${request.tenant}' has no adminSignIn in ${where}: it has no admin API resource`);
  }
  const resource = request.admin === true ? entry.admin!.resource : (entry.resources[0] as string);
  const scope = request.scope ?? (request.admin === true ? entry.admin!.scopes : entry.scopes).join(' ');
  const token = await mintAccessToken({
    issuer: entry.issuer,
    keystorePath: tenantKeystorePath(config, request.tenant),
    resource,
    scope,
    ttlSeconds: entry.ttlSeconds,
    ...(request.sub === undefined ? {} : { subject: request.sub }),
  });
  return { token, issuer: entry.issuer, resource, scope, ttlSeconds: entry.ttlSeconds };
}

/** What the CLI prints for `--operator`. */
export interface OperatorToken {
  token: string;
  issuer: string;
  audience: string;
  role: string;
  roleClaim: string;
}

/**
 * Why this environment gets no development operator token, or undefined when
 * it may: OPERATOR_ISSUER set (the operator's own identity provider issues
 * them) or a bind other machines reach (the local operator issuer is loopback only).
 */
export function operatorRefusal(env: EnvConfig): string | undefined {
  if (env.OPERATOR_ISSUER !== undefined) {
    return (
      `OPERATOR_ISSUER is set (${env.OPERATOR_ISSUER}): operator tokens come from the operator's own identity ` +
      `provider, with aud ${env.OPERATOR_AUDIENCE ?? `${publicBaseUrl(env)}/admin/v1`} and ${env.OPERATOR_ROLE} in ` +
      `"${env.OPERATOR_ROLE_CLAIM}"; the local operator issuer mints none`
    );
  }
  if (!isLoopbackHost(env.HOST)) {
    return (
      `HOST (${env.HOST}) is not a loopback address: the local operator issuer never signs operator tokens for a ` +
      'gateway other machines reach. Set OPERATOR_ISSUER to your identity provider (docs/operations.md)'
    );
  }
  return undefined;
}

/**
 * Signs an operator token with the local operator issuer of `target` (the running
 * gateway's record, else the configuration). Throws a UsageError when that
 * gateway does not take local operator tokens.
 */
export async function mintOperatorToken(
  config: GatewayConfig,
  request: { sub?: string | undefined },
  target: (TokenTarget & { describe?: string }) | undefined = tokenTarget(config),
): Promise<OperatorToken> {
  const refusal = operatorRefusal(config.env);
  if (refusal !== undefined && target?.describe === undefined) throw new UsageError(refusal);
  const where = target?.describe ?? config.origin;
  if (target === undefined) {
    throw new UsageError(
      `no tenant of ${where} signs in with the demo login (the development issuer), so there is no ` +
        'local operator issuer',
    );
  }
  if (target.operator === undefined) {
    throw new UsageError(
      `${where} does not take development operator tokens (it has OPERATOR_ISSUER, or binds to a non-loopback ` +
        "address): operator tokens come from the operator's own identity provider",
    );
  }
  const { audience, roleClaim, role } = target.operator;
  const token = await mintAccessToken({
    issuer: target.operator.issuer,
    keystorePath: localOperatorKeystorePath(config),
    resource: audience,
    scope: '',
    claims: nestedClaim(roleClaim, [role]),
    ...(request.sub === undefined ? {} : { subject: request.sub }),
  });
  return { token, issuer: target.operator.issuer, audience, role, roleClaim };
}

/** `{ a: { b: value } }` for the claim path `a.b`, as the gateway reads a dotted claim name. */
function nestedClaim(path: string, value: unknown): Record<string, unknown> {
  return path
    .split('.')
    .reduceRight<Record<string, unknown>>(
      (inner, key, index, keys) => ({ [key]: index === keys.length - 1 ? value : inner }),
      {},
    );
}

/**
 * Which gateway to mint for: the one running from this DATA_DIR; among
 * several, the one at the URL this environment configures; with none, this
 * environment's configuration. The note says which, for stderr.
 */
export function chooseTarget(
  config: GatewayConfig,
  running: readonly RunningGateway[],
): { target: (TokenTarget & { describe?: string }) | undefined; note: string } {
  const configured = publicBaseUrl(config.env);
  const describe = (gateway: RunningGateway) =>
    `the gateway running as pid ${gateway.pid} at ${gateway.url} (${gateway.config})`;
  if (running.length === 0) {
    return {
      target: tokenTarget(config),
      note:
        `no gateway is running from DATA_DIR ${resolve(config.env.DATA_DIR)}; using the configuration this ` +
        `environment describes: ${configured} (${config.origin}). The token works once a gateway runs with the same ` +
        'PORT, HOST, PUBLIC_URL, GATEWAY_CONFIG and DATA_DIR',
    };
  }
  const chosen = running.length === 1 ? running[0] : running.find((gateway) => gateway.url === configured);
  if (chosen === undefined) {
    throw new UsageError(
      `${running.length} gateways are running from DATA_DIR ${resolve(config.env.DATA_DIR)}: ` +
        `${running.map(describe).join('; ')}. Choose one by passing its PORT (and HOST or PUBLIC_URL), e.g. ` +
        `PORT=${new URL(running[0]?.url ?? configured).port} npm run token -- --tenant ID`,
    );
  }
  return { target: { ...chosen, describe: describe(chosen) }, note: `minting for ${describe(chosen)}` };
}

async function main(argv: string[]): Promise<void> {
  let values: {
    tenant?: string;
    scope?: string;
    sub?: string;
    admin?: boolean;
    operator?: boolean;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        tenant: { type: 'string' },
        scope: { type: 'string' },
        sub: { type: 'string' },
        admin: { type: 'boolean' },
        operator: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(USAGE);
    return;
  }
  if (values.sub === '') throw new UsageError('--sub must not be empty');
  if (values.operator === true) {
    if (values.tenant !== undefined || values.admin === true || values.scope !== undefined) {
      throw new UsageError('--operator takes no --tenant, --admin or --scope: an operator token is for every tenant');
    }
    await mainOperator(values.sub);
    return;
  }
  if (values.tenant === undefined || values.tenant === '') throw new UsageError('--tenant (or --operator) is required');

  const config = await loadConfig({ registry: createSourceRegistry(), defaultBootstrap: demoBootstrap() });
  const { target, note } = chooseTarget(config, await findRunningGateways(config));
  process.stderr.write(`# ${note}\n`);
  const minted = await mintTenantToken(
    config,
    { tenant: values.tenant, scope: values.scope, sub: values.sub, admin: values.admin },
    target,
  );
  process.stderr.write(
    `# tenant ${values.tenant}: aud ${minted.resource}, scope "${minted.scope}", issuer ${minted.issuer}, ` +
      `valid ${minted.ttlSeconds / 60} minutes\n`,
  );
  process.stdout.write(`${minted.token}\n`);
}

async function mainOperator(sub: string | undefined): Promise<void> {
  // Refused before the configuration loads: a non-loopback configuration with a demo login would not.
  const refusal = operatorRefusal(readEnv(undefined, process.cwd()));
  if (refusal !== undefined) throw new UsageError(refusal);
  const config = await loadConfig({ registry: createSourceRegistry(), defaultBootstrap: demoBootstrap() });
  const { target, note } = chooseTarget(config, await findRunningGateways(config));
  process.stderr.write(`# ${note}\n`);
  const minted = await mintOperatorToken(config, { sub }, target);
  process.stderr.write(
    `# operator: aud ${minted.audience}, ${minted.role} in "${minted.roleClaim}", issuer ${minted.issuer}, ` +
      `valid ${ACCESS_TOKEN_TTL_SECONDS / 60} minutes\n`,
  );
  process.stdout.write(`${minted.token}\n`);
}

// Run only as the entry point, so tests can import mintTenantToken.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${USAGE}`);
      process.exit(2);
    }
    process.stderr.write(
      error instanceof ConfigError ? `${error.message}\n` : `token: ${String((error as Error)?.stack ?? error)}\n`,
    );
    process.exit(1);
  });
}
