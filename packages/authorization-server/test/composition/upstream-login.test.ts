/**
 * The glue between the pages and the upstream module (composition/): a
 * sign-in at an Entra-like provider stores the mapped claims of the account
 * in the real store (PGlite), an account recorded under another upstream is
 * not found, and a refused sign-in reaches the pages as an UpstreamLoginError
 * naming its interaction, with the public message only.
 */
import { authorizationServerSchema } from '@mcpgw/config';
import { silentLogger } from '@mcpgw/core';
import { startEntraLikeProvider, type EntraLikeProvider } from '@mcpgw/test-helpers/entra-like-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findStoredAccount, rememberAccount } from '../../src/composition/account-records.js';
import { storedTenantStores } from '../../src/composition/stored-tenant-stores.js';
import { createUpstreamLogin } from '../../src/composition/upstream-login-adapter.js';
import type { TenantModuleStores } from '../../src/composition/tenant-module-stores.js';
import { UpstreamLoginError } from '../../src/interactions/upstream-login.js';
import { createAuthorizationServerStorage } from '../../src/store/authorization-server-storage.js';
import { createUpstreamSignIn, type OpenIdUpstreamSettings } from '../../src/upstream/upstream-sign-in.js';
import { createTenant, SQL_ENGINES, type SqlUnderTest } from '../storage-engines.js';

const CALLBACK = 'http://127.0.0.1:8080/t/acme/oauth/callback';
const CLIENT = { clientId: 'mcp-gateway', clientSecret: 'upstream secret', redirectUris: [CALLBACK] };

let sql: SqlUnderTest;
let stores: TenantModuleStores;
let tenantId: string;
let upstream: EntraLikeProvider;

beforeAll(async () => {
  sql = await SQL_ENGINES.pglite();
  stores = storedTenantStores(createAuthorizationServerStorage({ db: sql.db }));
  tenantId = await createTenant(sql.db, 'acme');
  upstream = await startEntraLikeProvider({
    clients: [CLIENT],
    interactive: true,
    user: { subject: 'pairwise-ada', name: 'Ada', email: 'ada@example.com', groups: ['engineering', 'staff'] },
  });
});

afterAll(async () => {
  await upstream?.close();
  await sql?.close();
});

function loginFor() {
  const settings = authorizationServerSchema.parse({
    upstream: { issuer: upstream.issuer, clientId: CLIENT.clientId, clientSecret: CLIENT.clientSecret },
  });
  const upstreamSettings = settings.upstream as OpenIdUpstreamSettings;
  return createUpstreamLogin({
    tenantId,
    pending: stores.pendingSignIns(tenantId),
    signIn: (pending) =>
      createUpstreamSignIn({ upstream: upstreamSettings, redirectUri: CALLBACK, pending, claims: settings.claims }),
    claims: settings.claims,
    accounts: stores.accounts,
    logger: silentLogger,
  });
}

describe('the upstream login of a tenant', () => {
  it('signs in, stores the mapped claims under the upstream issuer, and finds the account by them', async () => {
    const login = loginFor();
    const location = await login.start({ interactionUid: 'uid-1', tenantId });
    expect(new URL(location).searchParams.has('resource')).toBe(false);
    const back = await upstream.signIn(location);
    expect(`${back.origin}${back.pathname}`).toBe(CALLBACK);
    await expect(login.finish(back.searchParams)).resolves.toEqual({
      interactionUid: 'uid-1',
      accountId: 'pairwise-ada',
    });

    const find = findStoredAccount(stores.accounts, tenantId, [upstream.issuer], silentLogger);
    const account = await find({} as never, 'pairwise-ada');
    expect(await account?.claims('access_token', '', {}, [])).toEqual({
      sub: 'pairwise-ada',
      name: 'Ada',
      email: 'ada@example.com',
      groups: ['engineering', 'staff'],
    });
  });

  it('does not find an account recorded under an upstream the tenant no longer uses', async () => {
    await rememberAccount(stores.accounts, tenantId, {
      accountId: 'someone',
      upstreamIssuer: 'https://former-idp.example.com',
      claims: { groups: ['admins'] },
    });
    const find = findStoredAccount(stores.accounts, tenantId, [upstream.issuer], silentLogger);
    expect(await find({} as never, 'someone')).toBeUndefined();
    expect(await find({} as never, 'never-signed-in')).toBeUndefined();
  });

  it('turns a cancelled sign-in into access_denied for its interaction, and a replayed callback into an expired one', async () => {
    const login = loginFor();
    const location = await login.start({ interactionUid: 'uid-2', tenantId });
    const back = await upstream.signIn(location, { cancel: true });
    const refused = await login.finish(back.searchParams).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UpstreamLoginError);
    expect(refused).toMatchObject({ error: 'access_denied', interactionUid: 'uid-2' });
    expect((refused as UpstreamLoginError).description).toMatch(/refused the sign-in/);

    // The state was used: the same callback again names no interaction.
    const replayed = await login.finish(back.searchParams).catch((error: unknown) => error);
    expect(replayed).toMatchObject({ error: 'invalid_request', interactionUid: undefined });
  });
});
