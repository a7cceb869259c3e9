/**
 * `npm run token -- --tenant ID [--scope "a b"] [--sub X]`: prints an access
 * token from the built-in development authorization server for a tenant whose
 * configuration trusts it (`auth.issuers` holds `{ "development": true }`),
 * e.g. for curl. It mints for the gateway that is running: a gateway with the
 * development issuer leaves a record under DATA_DIR (its URL, issuer and
 * tenants), so the token's `iss` and `aud` are that gateway's whatever PORT or
 * GATEWAY_CONFIG this shell has. With no gateway running it mints for the
 * configuration this environment describes, loaded as `npm start` loads it,
 * and says so. The key comes from the same keystore under DATA_DIR.
 *
 * Only the token goes to stdout (`TOKEN=$(npm run --silent token -- --tenant demo)`);
 * what it is for goes to stderr.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@mcpgw/config';
import type { GatewayConfig } from '@mcpgw/config';
import { ACCESS_TOKEN_TTL_SECONDS, mintDevAccessToken } from '@mcpgw/dev-authorization-server';
import type { DevTokenTarget } from './dev-authorization-server.js';
import { devKeystorePath, devTokenTarget } from './dev-authorization-server.js';
import { demoBootstrap } from './demo.js';
import { publicBaseUrl } from './public-url.js';
import type { RunningGateway } from './running-gateway.js';
import { findRunningGateways } from './running-gateway.js';
import { createSourceRegistry } from './source-registry.js';

const USAGE = `usage: npm run token -- --tenant ID [--admin] [--scope "a b"] [--sub SUBJECT]

  --tenant  a tenant whose auth.issuers include { "development": true }
  --admin   a token for the admin API (its adminSignIn resource and scopes) instead of the MCP endpoint
  --scope   space-separated scopes (default: every scope the tenant's grants and requiredScopes name,
            or with --admin its adminSignIn scopes other than OpenID Connect's)
  --sub     the token's subject (default: demo-user)

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
}

/**
 * Mints a development-issuer token for `tenant`: `iss` the development
 * issuer, `aud` the tenant's canonical resource URI, both from `target` (a
 * running gateway's record) or else from the configuration. Throws a
 * UsageError (message for the person at the terminal) when the tenant is
 * missing or does not trust the development issuer.
 */
export async function mintTenantToken(
  config: GatewayConfig,
  request: { tenant: string; scope?: string | undefined; sub?: string | undefined; admin?: boolean | undefined },
  target: (DevTokenTarget & { describe?: string }) | undefined = devTokenTarget(config),
): Promise<TenantToken> {
  const where = target?.describe ?? config.origin;
  const entry =
    target !== undefined && Object.hasOwn(target.tenants, request.tenant) ? target.tenants[request.tenant] : undefined;
  if (target === undefined || entry === undefined) {
    const trusting = Object.keys(target?.tenants ?? {});
    const inConfig = target?.describe === undefined && config.tenants.some((tenant) => tenant.id === request.tenant);
    const why = inConfig
      ? `tenant '${request.tenant}' does not trust the development issuer`
      : `there is no tenant '${request.tenant}'`;
    const which = trusting.length === 0 ? 'no tenant does' : `tenants that do: ${trusting.join(', ')}`;
    throw new UsageError(`${why} in ${where} (${which})`);
  }
  if (request.admin === true && entry.admin === undefined) {
    throw new UsageError(`tenant '${request.tenant}' has no adminSignIn in ${where}: it has no admin API resource`);
  }
  const resource = request.admin === true ? entry.admin!.resource : (entry.resources[0] as string);
  const scope = request.scope ?? (request.admin === true ? entry.admin!.scopes : entry.scopes).join(' ');
  const token = await mintDevAccessToken({
    issuer: target.issuer,
    keystorePath: devKeystorePath(config),
    resource,
    scope,
    ...(request.sub === undefined ? {} : { subject: request.sub }),
  });
  return { token, issuer: target.issuer, resource, scope };
}

/**
 * Which gateway to mint for: the one running from this DATA_DIR; among
 * several, the one at the URL this environment configures; with none, this
 * environment's configuration. The note says which, for stderr.
 */
export function chooseTarget(
  config: GatewayConfig,
  running: readonly RunningGateway[],
): { target: (DevTokenTarget & { describe?: string }) | undefined; note: string } {
  const configured = publicBaseUrl(config.env);
  const describe = (gateway: RunningGateway) =>
    `the gateway running as pid ${gateway.pid} at ${gateway.url} (${gateway.config})`;
  if (running.length === 0) {
    return {
      target: devTokenTarget(config),
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
  let values: { tenant?: string; scope?: string; sub?: string; admin?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        tenant: { type: 'string' },
        scope: { type: 'string' },
        sub: { type: 'string' },
        admin: { type: 'boolean' },
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
  if (values.tenant === undefined || values.tenant === '') throw new UsageError('--tenant is required');
  if (values.sub === '') throw new UsageError('--sub must not be empty');

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
