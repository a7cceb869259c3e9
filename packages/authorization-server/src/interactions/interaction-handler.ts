import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@mcpgw/core';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { consentPage } from '../pages/consent-page.js';
import { demoLoginPage } from '../pages/demo-login-page.js';
import { displayText } from '../pages/display-text.js';
import type { ErrorPageModel } from '../pages/error-page.js';
import { errorPage } from '../pages/error-page.js';
import { sendPage } from '../pages/send-page.js';
import type { ConsentMemory } from './consent-memory.js';
import { consentRequest } from './consent-request.js';
import { assertCsrfKey, csrfTokenFor, isCsrfTokenValid } from './csrf-token.js';
import { consentResult, grantConsent } from './grant-consent.js';
import type { InteractionRoute } from './interaction-route.js';
import { readForm } from './read-form.js';
import type { UpstreamLogin } from './upstream-login.js';
import { UpstreamLoginError } from './upstream-login.js';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/**
 * The pages of a tenant's hosted authorization server, which the core mounts
 * under the issuer: sign-in (the demo login, or a redirect to the upstream
 * identity provider and its callback) and consent.
 */
export interface InteractionPages {
  /**
   * Answers `${issuer}/interaction/{uid}` (GET: the page of the pending
   * prompt; POST: its form) and `${issuer}/callback` (GET) for `provider`,
   * the tenant's oidc-provider. Reads the request body itself, so mount it
   * where nothing has consumed the body. Never throws: a failure becomes the
   * error page (500) and a log entry.
   */
  handle(req: IncomingMessage, res: ServerResponse, route: InteractionRoute, provider: Provider): Promise<void>;
}

/** How users sign in: the loopback demo login, or the tenant's identity provider. */
export type LoginMethod =
  | {
      kind: 'demo';
      /** The demo user's account id (its `sub`). */
      accountId: string;
      /** Its display name, on the sign-in page. */
      userName: string;
    }
  | { kind: 'upstream'; upstream: UpstreamLogin };

export interface InteractionPagesOptions {
  tenant: {
    id: string;
    /** The tenant's name as people know it: in the banner of every page and on the consent page. */
    displayName: string;
  };
  /** The tenant's issuer, `${base}/t/{tenant}/oauth`: the forms post below its path. */
  issuer: string;
  login: LoginMethod;
  consentMemory: ConsentMemory;
  /** The HMAC key of the forms' CSRF tokens, at least 32 bytes, the same on every replica. */
  csrfKey: Uint8Array;
  logger: Logger;
  /**
   * Told of every upstream sign-in that did not complete, with the client it
   * was for when the interaction is still known (the audit trail records the
   * refusals among them, `auditSignInRefusal`). Must not throw.
   */
  onUpstreamFailure?: (failure: UpstreamLoginError, clientId: string | undefined) => void;
}

const EXPIRED = {
  title: 'This sign-in has expired',
  message:
    'This sign-in took too long, was already finished, or was started in another browser. Go back to the application and start again.',
  error: 'invalid_request',
} as const;

/**
 * Creates the interaction handler of one tenant's hosted server. Throws when
 * the options cannot work: a demo login on an issuer that is not on a
 * loopback address (it signs in every visitor), or a short CSRF key.
 */
export function createInteractionPages(options: InteractionPagesOptions): InteractionPages {
  const { tenant, login, consentMemory, csrfKey } = options;
  assertCsrfKey(csrfKey);
  const issuerPath = new URL(options.issuer).pathname.replace(/\/$/, '');
  if (login.kind === 'demo' && !isLoopbackHostname(new URL(options.issuer).hostname)) {
    throw new Error(
      `authorization server of tenant ${tenant.id}: the demo login signs in every visitor, so it runs only on a loopback issuer, not ${options.issuer}`,
    );
  }
  const logger = options.logger.child({ tenant: tenant.id, component: 'authorization-server-interactions' });

  const sendError = (res: ServerResponse, status: number, model: Omit<ErrorPageModel, 'tenantName'>) =>
    sendPage(res, status, errorPage({ tenantName: tenant.displayName, ...model }));

  const formAction = (uid: string) => `${issuerPath}/interaction/${encodeURIComponent(uid)}`;

  /** The pending interaction of this browser, or undefined once the error page has been sent. */
  async function pendingInteraction(
    provider: Provider,
    req: IncomingMessage,
    res: ServerResponse,
    uid: string,
  ): Promise<Interaction | undefined> {
    let interaction: Interaction;
    try {
      interaction = await provider.interactionDetails(req, res);
    } catch (error) {
      // No interaction cookie, or one whose interaction expired: a bookmarked, replayed or foreign URL.
      // Anything else (the store failing) is the server's failure, not an expired sign-in.
      // (By name: the error classes are values of oidc-provider, which only the core imports.)
      if (!(error instanceof Error && error.name === 'SessionNotFound')) throw error;
      logger.debug({ err: error }, 'authorization server: no pending interaction');
      sendError(res, 400, EXPIRED);
      return undefined;
    }
    if (interaction.uid !== uid) {
      sendError(res, 400, EXPIRED);
      return undefined;
    }
    return interaction;
  }

  /**
   * The login result, with the consent this account already gave this client
   * when one is remembered and still stands: oidc-provider then asks for
   * consent only for scopes beyond it (its `loadExistingGrant` takes
   * `result.consent.grantId`).
   */
  async function loginResult(provider: Provider, accountId: string, clientId: string): Promise<InteractionResults> {
    const grantId = await consentMemory.find(accountId, clientId);
    const grant = grantId === undefined ? undefined : await provider.Grant.find(grantId);
    const stands = grant !== undefined && grant.accountId === accountId && grant.clientId === clientId;
    return { login: { accountId }, ...(stands ? { consent: { grantId } } : {}) };
  }

  async function showPrompt(provider: Provider, res: ServerResponse, interaction: Interaction): Promise<void> {
    const { uid, prompt, params } = interaction;
    const csrfToken = csrfTokenFor(csrfKey, uid);
    if (prompt.name === 'login') {
      if (login.kind === 'demo') {
        return sendPage(
          res,
          200,
          demoLoginPage({
            tenantName: tenant.displayName,
            userName: login.userName,
            formAction: formAction(uid),
            csrfToken,
          }),
        );
      }
      let location: string;
      try {
        location = await login.upstream.start({ interactionUid: uid, tenantId: tenant.id });
      } catch (error) {
        if (!(error instanceof UpstreamLoginError)) throw error;
        return upstreamFailed(res, provider, error);
      }
      return redirect(res, location);
    }
    if (prompt.name === 'consent') {
      const client = await provider.Client.find(String(params.client_id));
      if (client === undefined) {
        return sendError(res, 400, {
          title: 'This application is no longer registered',
          message: 'The application that sent you here is not registered any more. Go back to it and connect again.',
          error: 'invalid_client',
        });
      }
      const request = consentRequest(interaction, client);
      return sendPage(
        res,
        200,
        consentPage({ tenantName: tenant.displayName, ...request, formAction: formAction(uid), csrfToken }),
      );
    }
    logger.error({ prompt: prompt.name }, 'authorization server: an interaction prompt this server has no page for');
    return sendError(res, 500, {
      title: 'This sign-in cannot go on',
      message: 'The server asked for a step it has no page for. Go back to the application and try again later.',
      error: 'server_error',
    });
  }

  async function takeForm(req: IncomingMessage, res: ServerResponse, uid: string, provider: Provider): Promise<void> {
    const form = await readForm(req);
    if (form === 'unsupported-media-type' || form === 'too-large') {
      res.setHeader('Connection', 'close');
      return sendError(res, form === 'too-large' ? 413 : 415, {
        title: 'This form could not be read',
        message: 'The answer did not come from this page. Go back to the application and start again.',
        error: 'invalid_request',
      });
    }
    // Before anything is read or written: a forged or stale form changes nothing (RFC 6749 section 10.12).
    if (!isCsrfTokenValid(csrfKey, uid, form.get('csrf'))) {
      logger.info({ uid }, 'authorization server: interaction form refused, CSRF token missing or wrong');
      return sendError(res, 403, {
        title: 'This answer was refused',
        message:
          'The answer did not come from the page this server showed you, so nothing was changed. Go back to the application and start again.',
        error: 'invalid_request',
        description: 'the form token is missing or wrong',
      });
    }
    const interaction = await pendingInteraction(provider, req, res, uid);
    if (interaction === undefined) return;
    const clientId = String(interaction.params.client_id);
    const decision = form.get('decision');

    if (decision === 'deny') {
      logger.debug({ clientId, prompt: interaction.prompt.name }, 'authorization server: the user denied the request');
      // RFC 6749 section 4.1.2.1: "The resource owner or authorization server denied the request."
      return provider.interactionFinished(
        req,
        res,
        { error: 'access_denied', error_description: 'the user denied the request' },
        { mergeWithLastSubmission: false },
      );
    }
    if (decision === 'login' && interaction.prompt.name === 'login' && login.kind === 'demo') {
      const result = await loginResult(provider, login.accountId, clientId);
      return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
    }
    if (decision === 'allow' && interaction.prompt.name === 'consent') {
      const accountId = interaction.session?.accountId;
      if (accountId === undefined) return sendError(res, 400, EXPIRED);
      const grantId = await grantConsent(provider, interaction, accountId);
      await consentMemory.remember(accountId, clientId, grantId);
      logger.debug({ clientId }, 'authorization server: the user allowed the request');
      return provider.interactionFinished(req, res, consentResult(grantId), { mergeWithLastSubmission: true });
    }
    return sendError(res, 400, {
      title: 'This answer does not fit this step',
      message:
        'The page you answered is not the current step of this sign-in. Go back to the application and start again.',
      error: 'invalid_request',
    });
  }

  /**
   * `${issuer}/callback`: the upstream sends the browser back here. The
   * interaction cookie is scoped to the interaction's path, so the result is
   * stored on the interaction the upstream's state names, and the browser is
   * sent on to its `returnTo`; oidc-provider resumes there only in the
   * browser holding that interaction's resume cookie, so a callback replayed
   * in another browser resumes nothing.
   */
  async function callback(req: IncomingMessage, res: ServerResponse, provider: Provider): Promise<void> {
    if (login.kind !== 'upstream') {
      return sendError(res, 404, {
        title: 'Nothing to see here',
        message: 'This server signs users in without an identity provider, so it expects no callback.',
        error: 'invalid_request',
      });
    }
    const query = new URL(req.url ?? '/', 'http://callback.invalid').searchParams;
    let signedIn: { interactionUid: string; accountId: string };
    try {
      signedIn = await login.upstream.finish(query);
    } catch (error) {
      if (!(error instanceof UpstreamLoginError)) throw error;
      return upstreamFailed(res, provider, error);
    }
    const interaction = await provider.Interaction.find(signedIn.interactionUid);
    if (interaction === undefined || interaction.prompt.name !== 'login') return sendError(res, 400, EXPIRED);
    const result = await loginResult(provider, signedIn.accountId, String(interaction.params.client_id));
    await storeResult(interaction, { ...interaction.lastSubmission, ...result });
    return redirect(res, interaction.returnTo);
  }

  async function upstreamFailed(res: ServerResponse, provider: Provider, failure: UpstreamLoginError): Promise<void> {
    logger.info(
      { error: failure.error, description: failure.description },
      'authorization server: the sign-in at the identity provider did not complete',
    );
    const found =
      failure.interactionUid === undefined ? undefined : await provider.Interaction.find(failure.interactionUid);
    // Only a sign-in still waiting for its login is answered; a finished one is left as it is.
    const interaction = found?.prompt.name === 'login' ? found : undefined;
    options.onUpstreamFailure?.(failure, found === undefined ? undefined : String(found.params.client_id));
    if (interaction !== undefined) {
      // The application hears the same answer as a Deny; the user reads why first.
      await storeResult(interaction, {
        error: 'access_denied',
        error_description: 'the sign-in at the identity provider did not complete',
      });
    }
    return sendError(res, failure.error === 'access_denied' ? 403 : 502, {
      title: 'Your sign-in did not complete',
      message:
        failure.error === 'access_denied'
          ? `Your organization's identity provider did not sign you in to ${tenant.displayName}: the sign-in was cancelled or refused.`
          : `Your organization's identity provider answered in a way this server cannot accept, so you are not signed in to ${tenant.displayName}. Try again later; if it keeps happening, tell your administrator.`,
      error: failure.error,
      description: failure.description === undefined ? undefined : displayText(failure.description, 300),
      returnTo:
        interaction === undefined ? undefined : { href: interaction.returnTo, label: 'Return to the application' },
    });
  }

  return {
    async handle(req, res, route, provider) {
      try {
        if (route.kind === 'callback') {
          if (req.method !== 'GET') return methodNotAllowed(res, 'GET');
          return await callback(req, res, provider);
        }
        if (req.method === 'GET') {
          const interaction = await pendingInteraction(provider, req, res, route.uid);
          if (interaction !== undefined) await showPrompt(provider, res, interaction);
          return;
        }
        if (req.method === 'POST') return await takeForm(req, res, route.uid, provider);
        return methodNotAllowed(res, 'GET, POST');
      } catch (error) {
        logger.error({ err: error, route: route.kind }, 'authorization server: interaction failed');
        if (res.headersSent) {
          res.destroy();
          return;
        }
        sendError(res, 500, {
          title: 'Something went wrong',
          message: 'The server could not finish this step. Go back to the application and try again.',
          error: 'server_error',
        });
      }
    },
  };
}

/** Like oidc-provider's `interactionResult`, for the callback, which has no interaction cookie. */
async function storeResult(interaction: Interaction, result: InteractionResults): Promise<void> {
  interaction.result = result;
  const remaining = interaction.exp - Math.floor(Date.now() / 1000);
  // An interaction that expired between the lookup and now: the resume will say so.
  if (remaining > 0) await interaction.save(remaining);
}

function redirect(res: ServerResponse, location: string): void {
  res.statusCode = 303;
  res.setHeader('Location', location);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Length', '0');
  res.end();
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  res.statusCode = 405;
  res.setHeader('Allow', allow);
  res.setHeader('Content-Length', '0');
  res.end();
}

/** `localhost`, 127.0.0.0/8 and `[::1]`, as `URL.hostname` spells them. */
function isLoopbackHostname(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
