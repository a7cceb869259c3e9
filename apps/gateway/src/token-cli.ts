/**
 * `npm run token -- --tenant ID [--scope "a b"] [--sub X]`: prints an access
 * token from the built-in development authorization server for a tenant whose
 * configuration trusts it (`auth.issuers` holds `{ "development": true }`),
 * e.g. for curl. The configuration is loaded exactly as `npm start` loads it,
 * so the token's `iss` and `aud` are what the running gateway expects; the
 * key comes from the same keystore, so the gateway need not be running.
 *
 * Only the token goes to stdout (`TOKEN=$(npm run --silent token -- --tenant demo)`);
 * what it is for goes to stderr.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from '@mcpgw/config';
import type { GatewayConfig } from '@mcpgw/config';
import { ACCESS_TOKEN_TTL_SECONDS, mintDevAccessToken } from '@mcpgw/dev-authorization-server';
import {
  developmentIssuerUrl,
  developmentKeystorePath,
  developmentScopes,
  trustsDevelopmentIssuer,
} from './development-issuer.js';
import { demoBootstrap } from './demo.js';
import { publicBaseUrl, tenantResourceUri } from './public-url.js';
import { createSourceRegistry } from './source-registry.js';

const USAGE = `usage: npm run token -- --tenant ID [--scope "a b"] [--sub SUBJECT]

  --tenant  a tenant whose auth.issuers include { "development": true }
  --scope   space-separated scopes (default: every scope the tenant's grants and requiredScopes name)
  --sub     the token's subject (default: demo-user)
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
 * Mints a development-issuer token for `tenant` from a loaded configuration:
 * `iss` the development issuer at the gateway's public base URL, `aud` the
 * tenant's canonical resource URI. Throws a UsageError (message for the
 * person at the terminal) when the tenant is missing or does not trust the
 * development issuer.
 */
export async function mintTenantToken(
  config: GatewayConfig,
  request: { tenant: string; scope?: string | undefined; sub?: string | undefined },
): Promise<TenantToken> {
  const trusting = config.tenants.filter(trustsDevelopmentIssuer).map((tenant) => tenant.id);
  const tenant = config.tenants.find((candidate) => candidate.id === request.tenant);
  if (tenant === undefined || !trustsDevelopmentIssuer(tenant)) {
    const why =
      tenant === undefined
        ? `there is no tenant '${request.tenant}'`
        : `tenant '${tenant.id}' does not trust the development issuer`;
    const which = trusting.length === 0 ? 'no tenant does' : `tenants that do: ${trusting.join(', ')}`;
    throw new UsageError(`${why} in ${config.origin} (${which})`);
  }
  const base = publicBaseUrl(config.env);
  const issuer = developmentIssuerUrl(base);
  const resource = tenantResourceUri(base, tenant.id);
  const scope = request.scope ?? developmentScopes(tenant).join(' ');
  const token = await mintDevAccessToken({
    issuer,
    keystorePath: developmentKeystorePath(config),
    resource,
    scope,
    ...(request.sub === undefined ? {} : { subject: request.sub }),
  });
  return { token, issuer, resource, scope };
}

async function main(argv: string[]): Promise<void> {
  let values: { tenant?: string; scope?: string; sub?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        tenant: { type: 'string' },
        scope: { type: 'string' },
        sub: { type: 'string' },
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
  const minted = await mintTenantToken(config, { tenant: values.tenant, scope: values.scope, sub: values.sub });
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
