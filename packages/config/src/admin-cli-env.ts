/** The variables the admin command line reads besides the gateway's own: names the gateway's checks know. */
export const ADMIN_CLI_ENV_KEYS: readonly string[] = ['ADMIN_TOKEN'];

/**
 * The admin API token the admin command line sends as its bearer credential
 * (`ADMIN_TOKEN`), read here because only this package reads the
 * environment. The gateway itself never reads it.
 */
export function readAdminToken(source: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = source.ADMIN_TOKEN;
  return value === undefined || value === '' ? undefined : value;
}
