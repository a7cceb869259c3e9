import { markup } from '@mcpgw/core';
import { consolePage } from './console-layout.js';
import { CONSOLE_PREFIX } from './console-paths.js';

/** Where operators sign in in the browser, and sign out. */
export const OPERATOR_SIGN_IN_PATH = `${CONSOLE_PREFIX}/operator/sign-in`;
export const OPERATOR_SIGN_OUT_PATH = `${CONSOLE_PREFIX}/operator/sign-out`;

/**
 * `/admin/operator/sign-in`: on a loopback `npm start` (no OPERATOR_ISSUER),
 * a button that signs this browser in as the local operator; elsewhere, why
 * there is none here.
 */
export function operatorSignInPage(input: { localOperator: boolean; refusal?: string }): string {
  return consolePage({
    title: 'Operator sign-in',
    main: markup`${input.refusal === undefined ? '' : markup`<p class="notice bad" role="alert">${input.refusal}</p>`}
      ${
        input.localOperator
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
            </p>`
      }
      <p><a href="${CONSOLE_PREFIX}/">Admin console</a></p>`,
  });
}
