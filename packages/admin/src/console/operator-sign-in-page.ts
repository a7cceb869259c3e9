import { markup } from '@mcpgw/core';
import { consolePage } from './console-layout.js';
import { CONSOLE_PREFIX } from './console-paths.js';

/** Where operators sign in in the browser, and sign out. */
export const OPERATOR_SIGN_IN_PATH = `${CONSOLE_PREFIX}/operator/sign-in`;
export const OPERATOR_SIGN_OUT_PATH = `${CONSOLE_PREFIX}/operator/sign-out`;
/** The operators' sign-in at OPERATOR_ISSUER: its start, and the redirect URI it comes back to. */
export const OPERATOR_LOGIN_PATH = `${CONSOLE_PREFIX}/operator/login`;
export const OPERATOR_CALLBACK_PATH = `${CONSOLE_PREFIX}/operator/callback`;

/** How operators of OPERATOR_ISSUER sign in here: its URL, and whether a console client is configured. */
export interface OperatorIssuerSignIn {
  issuer: string;
  /** OPERATOR_CONSOLE_CLIENT_ID is set: the login route runs. */
  configured: boolean;
}

/**
 * `/admin/operator/sign-in`: with OPERATOR_ISSUER and its console client, a
 * link that signs in there; with OPERATOR_ISSUER alone, the settings to add;
 * on a loopback `npm start` (no OPERATOR_ISSUER), a button that signs this
 * browser in as the local operator; elsewhere, why there is none here.
 */
export function operatorSignInPage(input: {
  localOperator: boolean;
  refusal?: string;
  issuer?: OperatorIssuerSignIn | undefined;
}): string {
  const { issuer } = input;
  const body =
    issuer !== undefined
      ? issuer.configured
        ? markup`<p>Operators of this gateway sign in at their identity provider, ${issuer.issuer}.</p>
            <p><a class="button" href="${OPERATOR_LOGIN_PATH}">Sign in with ${issuer.issuer}</a></p>`
        : markup`<p>
              Operators' tokens come from ${issuer.issuer} (OPERATOR_ISSUER), but no browser sign-in client is
              configured for it. To sign in here, register an OAuth client there whose redirect URI is this
              gateway's PUBLIC_URL followed by ${OPERATOR_CALLBACK_PATH}, then set OPERATOR_CONSOLE_CLIENT_ID (and
              OPERATOR_CONSOLE_CLIENT_SECRET for a confidential client, OPERATOR_CONSOLE_SCOPE if it needs other scopes
              than openid) and restart the gateway. Until then, call the console's pages with an operator token
              (Authorization: Bearer).
            </p>`
      : input.localOperator
        ? markup`<p>
                This gateway runs on a loopback address without an operators' identity provider (OPERATOR_ISSUER),
                so it is its own local operator issuer. Anyone on this machine may continue as the local operator:
                the gateway signs an operator token for you and keeps it in this browser's session.
              </p>
              <form method="post" action="${OPERATOR_SIGN_IN_PATH}">
                <div class="actions"><button type="submit">Continue as the local operator</button></div>
              </form>`
        : markup`<p>
              Operators of this gateway call its pages with their operator token (Authorization: Bearer). Browser
              sign-in as the local operator is offered only on a loopback address without OPERATOR_ISSUER.
            </p>`;
  return consolePage({
    title: 'Operator sign-in',
    main: markup`${input.refusal === undefined ? '' : markup`<p class="notice bad" role="alert">${input.refusal}</p>`}
      ${body}
      <p><a href="${CONSOLE_PREFIX}/">Admin console</a></p>`,
  });
}
