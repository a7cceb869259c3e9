import type { AuthorizationServerSettings } from '@mcpgw/config';
import type { EgressGuard, Logger } from '@mcpgw/core';
import type { Configuration, FindAccount, Provider } from 'oidc-provider';
import type { GrantTypeRegistration, InteractionHandler } from '../authorization-server-options.js';
import { attachAuditTrail, auditSignInRefusal, type RecordAuditEvent } from '../audit/attach-audit-trail.js';
import { attachClientPolicy } from '../clients/attach-client-policy.js';
import { clientPolicyConfiguration } from '../clients/client-policy-configuration.js';
import { DEMO_NAME, DEMO_SUBJECT, findDemoAccount } from '../demo-account.js';
import { createAssertionKeyResolver } from '../enterprise/assertion-issuer-keys.js';
import { idJagGrantType } from '../enterprise/id-jag-grant-type.js';
import { createInteractionPages, type LoginMethod } from '../interactions/interaction-handler.js';
import { providerErrorPage } from '../interactions/provider-error-page.js';
import { mapUpstreamClaims } from '../upstream/claim-mapping.js';
import { createUpstreamSignIn } from '../upstream/upstream-sign-in.js';
import { findStoredAccount, rememberAccount } from './account-records.js';
import type { TenantModuleStores } from './tenant-module-stores.js';
import { createUpstreamLogin } from './upstream-login-adapter.js';

/** One tenant's server as the gateway is about to build it (one runtime, one revision of its settings). */
export interface TenantServerContext {
  readonly tenantId: string;
  /** The tenant's name as people know it (its pages' banner). */
  readonly tenantName: string;
  readonly issuer: string;
  readonly resources: readonly string[];
  readonly scopes: readonly string[];
  readonly settings: AuthorizationServerSettings;
  /**
   * The deployment's egress guard when a tenant admin wrote the settings (the
   * upstream and the assertion issuers are then theirs: docs/configuration.md,
   * "Egress policy"); undefined for an operator's settings.
   */
  readonly settingsEgress: EgressGuard | undefined;
  readonly logger: Logger;
}

/** What the gateway's process gives every tenant's modules. */
export interface TenantModulesDeps {
  readonly stores: TenantModuleStores;
  /** The CSRF key of a tenant's forms (ServerKeys.authorizationServerCsrf). */
  csrfKey(tenantId: string): Uint8Array;
  /**
   * The deployment's egress guard: every Client ID Metadata Document fetch
   * goes through it whoever wrote the settings, since the URLs are the
   * clients' own.
   */
  readonly egress: EgressGuard;
  /**
   * Certificates (PEM) trusted for metadata document servers instead of the
   * system's. Tests only (a test server's certificate): no configuration
   * sets it.
   */
  readonly metadataDocumentCertificates?: readonly string[];
  /**
   * Where the servers' own steps are audited (the control plane's audit log:
   * registrations, consents, grants revoked on reuse, assertion exchanges);
   * absent, nothing is audited.
   */
  readonly recordEvent?: RecordAuditEvent;
  /** The upstream sign-in's fetch when no egress guard applies (default: the global fetch); tests only. */
  readonly fetch?: typeof fetch;
}

/** The modules of one tenant's server, for createTenantAuthorizationServer. */
export interface TenantServerModules {
  readonly findAccount: FindAccount;
  readonly interactions: InteractionHandler;
  readonly clientPolicy: Partial<Configuration>;
  readonly grantTypes: readonly GrantTypeRegistration[];
  readonly attachProvider: (provider: Provider) => void;
  /** Releases what the modules hold (the assertion issuers' key fetches): the server was replaced. */
  dispose(): void;
}

/**
 * Composes the modules of one tenant's hosted authorization server
 * (docs/adr/0011) from its settings:
 * - sign-in: the demo login (loopback only) or the OpenID Connect sign-in at
 *   the tenant's upstream, its claims mapped and stored per account;
 * - consent: the pages' consent step, remembered per account and client;
 * - accounts: the demo user, or the stored accounts of the upstream and of
 *   the enterprise assertion issuers;
 * - clients: the metadata document and registration policy;
 * - the JWT bearer grant accepting ID-JAGs when `enterpriseManaged` is set,
 *   advertised in the metadata.
 * Built once per runtime: the sign-in's discovery and key caches and the
 * assertion issuers' keys live as long as the settings they came from.
 */
export function createTenantModules(context: TenantServerContext, deps: TenantModulesDeps): TenantServerModules {
  const { tenantId, settings, logger } = context;
  const { stores } = deps;
  const upstream = settings.upstream;
  const demo = 'demo' in upstream;

  const login: LoginMethod = demo
    ? { kind: 'demo', accountId: DEMO_SUBJECT, userName: DEMO_NAME }
    : {
        kind: 'upstream',
        upstream: createUpstreamLogin({
          tenantId,
          pending: stores.pendingSignIns(tenantId),
          signIn: (pending) =>
            createUpstreamSignIn({
              upstream,
              redirectUri: `${context.issuer.replace(/\/$/, '')}/callback`,
              pending,
              claims: settings.claims,
              ...(context.settingsEgress === undefined ? {} : { egress: context.settingsEgress }),
              ...(deps.fetch === undefined ? {} : { fetch: deps.fetch }),
            }),
          claims: settings.claims,
          accounts: stores.accounts,
          logger,
        }),
      };
  const pages = createInteractionPages({
    tenant: { id: tenantId, displayName: context.tenantName },
    issuer: context.issuer,
    login,
    consentMemory: stores.consentMemory(tenantId),
    csrfKey: deps.csrfKey(tenantId),
    logger,
    ...(deps.recordEvent === undefined
      ? {}
      : {
          onUpstreamFailure: auditSignInRefusal({
            tenantId,
            issuer: context.issuer,
            record: deps.recordEvent,
            logger,
          }),
        }),
  });
  const interactions: InteractionHandler = {
    interaction: (ctx, uid) => pages.handle(ctx.req, ctx.res, { kind: 'interaction', uid }, ctx.provider),
    callback: (ctx) => pages.handle(ctx.req, ctx.res, { kind: 'callback' }, ctx.provider),
  };

  const enterprise = settings.enterpriseManaged;
  const assertionIssuers = enterprise?.issuers.map((entry) => entry.issuer) ?? [];
  // The demo user, or an account an assertion issuer vouched for; else the upstream's and the assertion issuers'.
  const storedAccount = findStoredAccount(
    stores.accounts,
    tenantId,
    demo ? assertionIssuers : [upstream.issuer, ...assertionIssuers],
    logger,
  );
  const findAccount: FindAccount = demo
    ? async (ctx, accountId, token) => findDemoAccount(ctx, accountId) ?? (await storedAccount(ctx, accountId, token))
    : storedAccount;

  const registeredClients = stores.registeredClients(tenantId);
  const policy = clientPolicyConfiguration(settings.clients, {
    egressGuard: deps.egress,
    registeredClients,
    logger,
    jwtBearerGrant: enterprise !== undefined,
    ...(deps.metadataDocumentCertificates === undefined
      ? {}
      : { trustedCertificates: deps.metadataDocumentCertificates }),
  });

  const grantTypes: GrantTypeRegistration[] = [];
  let discovery: Record<string, unknown> = {};
  let closeKeys = (): void => undefined;
  if (enterprise !== undefined) {
    const keys = createAssertionKeyResolver(enterprise.issuers, {
      ...(context.settingsEgress === undefined ? {} : { egress: context.settingsEgress }),
      logger,
    });
    closeKeys = () => keys.close();
    const grant = idJagGrantType(settings, {
      issuer: context.issuer,
      resources: context.resources,
      scopes: context.scopes,
      keys,
      mapClaims: mapUpstreamClaims,
      accounts: {
        remember: (account) =>
          rememberAccount(stores.accounts, tenantId, {
            accountId: account.accountId,
            upstreamIssuer: account.issuer,
            claims: account.claims,
          }),
      },
      replay: stores.assertionReplay(tenantId),
      logger,
    });
    grantTypes.push(grant);
    discovery = { ...grant.discovery };
  }

  return {
    findAccount,
    interactions,
    clientPolicy: {
      ...policy,
      ...(Object.keys(discovery).length === 0 ? {} : { discovery }),
      renderError: providerErrorPage(context.tenantName),
    },
    grantTypes,
    attachProvider: (provider) => {
      attachClientPolicy(provider, { registeredClients, logger });
      if (deps.recordEvent !== undefined) {
        attachAuditTrail(provider, { tenantId, issuer: context.issuer, record: deps.recordEvent, logger });
      }
    },
    dispose: closeKeys,
  };
}
