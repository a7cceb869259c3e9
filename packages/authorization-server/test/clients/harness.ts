/**
 * A real oidc-provider with the clients policy (clientPolicyConfiguration +
 * attachClientPolicy) on a loopback HTTP server. Its storage is
 * oidc-provider's own in-memory adapter (MemoryAdapter, used when no
 * `adapter` is configured); the registered-client store is an in-memory
 * double counting the registrations the provider announces, standing in for
 * the store's SQL one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { createEgressGuard, type Logger } from '@mcpgw/core';
import { authorizationServerSchema, type ClientPolicy } from '@mcpgw/config';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { attachClientPolicy, clientPolicyConfiguration, type RegisteredClientStore } from '../../src/index.js';

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string | undefined;
}

export function recordingLogger(entries: LogEntry[] = []): Logger & { entries: LogEntry[] } {
  const at = (level: LogEntry['level']) => (obj: object, msg?: string) => {
    entries.push({ level, obj: obj as Record<string, unknown>, msg });
  };
  return {
    entries,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => recordingLogger(entries),
  };
}

/**
 * What the test resolver answers: the document server's names resolve to
 * 127.0.0.1 (the guard allows those names, as an operator would allow a
 * destination), the others to the internal addresses under test. Nothing
 * ever connects to those: the guard refuses them at lookup.
 */
export const TEST_ADDRESSES: Record<string, string> = {
  'client.example.test': '127.0.0.1',
  'other.example.test': '127.0.0.1',
  'claude.ai': '127.0.0.1',
  'loopback.example.test': '127.0.0.1',
  'metadata.example.test': '169.254.169.254',
  'link-local.example.test': '169.254.10.20',
  'private.example.test': '10.20.30.40',
};
export const ALLOWED_TEST_HOSTS = ['client.example.test', 'other.example.test', 'claude.ai'];

export function testEgressGuard() {
  return createEgressGuard({
    allow: ALLOWED_TEST_HOSTS,
    resolve: ((hostname: string, _options: unknown, callback: (...args: unknown[]) => void) => {
      const address = TEST_ADDRESSES[hostname];
      if (address === undefined) {
        process.nextTick(() =>
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })),
        );
        return;
      }
      const all: LookupAddress[] = [{ address, family: 4 }];
      process.nextTick(() => callback(null, all));
    }) as never,
  });
}

/** The clients policy as the tenant setting parses it (defaults filled in). */
export function clientPolicy(clients: unknown = {}): ClientPolicy {
  return authorizationServerSchema.parse({ upstream: { demo: true }, clients }).clients;
}

/** The in-memory registered-client store double. */
export function memoryRegisteredClients() {
  const used = new Map<string, Date>();
  const store: RegisteredClientStore & { used: Map<string, Date>; watch(provider: Provider): void } = {
    used,
    count: async () => used.size,
    touch: async (clientId, at) => {
      if (used.has(clientId)) used.set(clientId, at);
    },
    deleteUnusedSince: async (cutoff) => {
      let deleted = 0;
      for (const [id, at] of used) if (at < cutoff && used.delete(id)) deleted += 1;
      return deleted;
    },
    watch(target) {
      target.on('registration_create.success', (_ctx, client) => used.set(client.clientId, new Date()));
    },
  };
  return store;
}

export interface RunningProvider {
  issuer: string;
  provider: Provider;
  logger: ReturnType<typeof recordingLogger>;
  registeredClients: ReturnType<typeof memoryRegisteredClients>;
  close(): Promise<void>;
}

export async function startProvider(
  policy: ClientPolicy,
  options: { trustedCertificates?: string[]; fetchTimeoutMs?: number; now?: () => number } = {},
): Promise<RunningProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const logger = recordingLogger();
  const registeredClients = memoryRegisteredClients();
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const clientConfiguration = clientPolicyConfiguration(policy, {
    egressGuard: testEgressGuard(),
    registeredClients,
    logger,
    ...options,
  });
  const provider = new Provider(issuer, {
    ...clientConfiguration,
    features: { ...clientConfiguration.features, devInteractions: { enabled: false } },
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig' }] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    // The error page as JSON, so the test reads what a person would see (the pages module renders the real one).
    renderError: (ctx, out) => {
      ctx.type = 'application/json';
      ctx.body = out;
    },
    responseTypes: ['code'],
    scopes: ['openid', 'offline_access', 'resources:read'],
  });
  registeredClients.watch(provider);
  attachClientPolicy(provider, { registeredClients, logger, ...(options.now ? { now: options.now } : {}) });
  const callback = provider.callback();
  server.on('request', (request, response) => {
    if (request.url?.startsWith('/interaction/')) {
      signInAndConsent(provider, request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error));
      });
      return;
    }
    callback(request, response);
  });
  return {
    issuer,
    provider,
    logger,
    registeredClients,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The interaction, done at once: every visitor is `user-1` and consents to
 * what the client asked (the pages module does the real sign-in and consent).
 */
async function signInAndConsent(provider: Provider, request: IncomingMessage, response: ServerResponse) {
  const details = await provider.interactionDetails(request, response);
  const grant = new provider.Grant({ accountId: 'user-1', clientId: String(details.params.client_id) });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  const location = await provider.interactionResult(request, response, {
    login: { accountId: 'user-1' },
    consent: { grantId },
  });
  response.writeHead(303, { location }).end();
}

/** An S256 PKCE pair (RFC 7636 section 4). */
export function pkcePair() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * Starts an authorization request (RFC 6749 section 4.1.1 with PKCE) the
 * way a browser would, without following the redirect: accepted, the
 * provider sends the browser to its interaction (303); refused, it answers
 * the error as JSON.
 */
export async function authorize(
  running: RunningProvider,
  clientId: string,
  redirectUri: string,
): Promise<{ status: number; location: string | null; body: Record<string, unknown> | undefined }> {
  const url = new URL(`${running.issuer}/auth`);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: pkcePair().challenge,
    code_challenge_method: 'S256',
    state: 'state-1',
  }).toString();
  const response = await fetch(url, { redirect: 'manual', headers: { accept: 'application/json' } });
  const text = await response.text();
  return {
    status: response.status,
    location: response.headers.get('location'),
    body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
}

/** An RFC 7591 registration request. */
export async function register(running: RunningProvider, metadata: Record<string, unknown>) {
  const response = await fetch(`${running.issuer}/reg`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(metadata),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
}
