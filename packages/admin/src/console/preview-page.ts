import type { PreviewResponse } from '../preview-schema.js';
import type { ConsoleViewer } from './console-layout.js';
import { consolePage } from './console-layout.js';
import { tenantConsolePath } from './console-paths.js';
import type { PlacedProblem } from './form-problem.js';
import { field, problemSummary, writeFields } from './form-problem.js';
import type { Markup, MarkupValue } from '@mcpgw/core';
import { markup } from '@mcpgw/core';

/** One side of the preview form: what was typed, and what the API answered or refused. */
export interface PreviewSide {
  readonly values: Readonly<Record<string, string>>;
  readonly result?: PreviewResponse;
  readonly placed?: PlacedProblem;
}

function sideForm(prefix: 'a' | 'b', label: string, side: PreviewSide): Markup {
  const name = (field: string) => `${prefix}.${field}`;
  return markup`<fieldset>
    <legend>${label}</legend>
    ${problemSummary(side.placed)}
    ${field({ name: name('claims'), label: 'Claims (JSON)', kind: 'textarea', code: true, value: side.values[name('claims')] ?? '', hint: 'e.g. {"sub": "alice", "scope": "docs:read"}. Leave empty to paste a token instead.', placed: side.placed })}
    ${field({ name: name('issuer'), label: 'Issuer for the claims (optional)', value: side.values[name('issuer')] ?? '', hint: 'Required when the tenant trusts several issuers.', placed: side.placed })}
    ${field({ name: name('token'), label: 'Or an access token', kind: 'textarea', code: true, value: side.values[name('token')] ?? '', hint: 'Verified exactly as an MCP request would verify it.', placed: side.placed })}
  </fieldset>`;
}

function resultOf(result: PreviewResponse | undefined, other: PreviewResponse | undefined, label: string): MarkupValue {
  if (result === undefined) return undefined;
  const otherUris = new Set(other?.resources.items.map((item) => item.uri) ?? []);
  return markup`<section aria-label="${label} result">
    <h3>${label}</h3>
    <p>
      ${result.admitted ? markup`<span class="ok">admitted</span>` : markup`<span class="bad">refused (403)</span>`}${
        result.missingScopes === undefined || result.missingScopes.length === 0
          ? ''
          : markup`: missing scopes ${result.missingScopes.join(', ')}`
      }
      at revision
      ${result.revision}${result.upToDate === false ? markup` <span class="warn">(not up to date: preview again)</span>` : ''}
    </p>
    ${result.principal === undefined ? '' : markup`<p>Caller <code>${result.principal.subject}</code> of <code>${result.principal.issuer}</code>${result.principal.clientId === undefined ? '' : markup`, client <code>${result.principal.clientId}</code>`}; fingerprint <code>${result.principalFingerprint ?? ''}</code></p>`}
    <p>
      Grants matched:
      ${result.grants.matched.length === 0 ? 'none' : result.grants.matched.map((grant) => grant.name).join(', ')}
    </p>
    ${backendIdentitiesOf(result)}
    <ul class="resources">
      ${result.resources.items.map(
        (item) =>
          markup`<li${other !== undefined && !otherUris.has(item.uri) ? markup` class="only"` : ''}><code>${item.uri}</code>${
            other !== undefined && !otherUris.has(item.uri) ? markup` <strong>(only ${label})</strong>` : ''
          }</li>`,
      )}
    </ul>
    ${result.resources.items.length === 0 ? markup`<p>No resources.</p>` : ''}
    ${result.resources.hasMore ? markup`<p class="hint">More on later pages.</p>` : ''}
    ${
      result.warnings.length === 0
        ? ''
        : markup`<ul>
            ${result.warnings.map((warning) => markup`<li class="warn">${warning.grant}: ${warning.message}</li>`)}
          </ul>`
    }
  </section>`;
}

/**
 * What each source that answers under the caller's own backend identity
 * would act as (a database role and its settings, an STS role with its
 * session name and tags), as the preview names it: never a credential.
 */
function backendIdentitiesOf(result: PreviewResponse): MarkupValue {
  const identities = result.backendIdentities ?? [];
  if (identities.length === 0) return undefined;
  return markup`<p>Backend identity:</p>
    <dl class="backend-identities">
      ${identities.map(
        ({ source, identity }) =>
          markup`<dt>Source <code>${source}</code></dt>
            ${Object.entries(identity).map(
              ([name, value]) =>
                markup`<dd>${name}: <code>${typeof value === 'string' ? value : JSON.stringify(value)}</code></dd>`,
            )}`,
      )}
    </dl>`;
}

/** "Preview as": one or two callers (claims or a token) in, their resource sets out, the difference marked. */
export function previewPage(input: {
  tenantId: string;
  viewer: ConsoleViewer;
  a: PreviewSide;
  b: PreviewSide;
}): string {
  const { a, b } = input;
  const compare = a.result !== undefined && b.result !== undefined;
  return consolePage({
    title: 'Preview as',
    tenant: { id: input.tenantId, page: 'preview' },
    viewer: input.viewer,
    main: markup`<p>
        What an MCP caller would see: give claims or paste a token. Fill the second caller to compare the two side by
        side.
      </p>
      <form class="stack" method="post" action="${tenantConsolePath(input.tenantId, 'preview')}">
        ${writeFields(input.viewer.csrfToken)}
        <div class="columns">${sideForm('a', 'Caller A', a)}${sideForm('b', 'Caller B (optional)', b)}</div>
        <div class="actions"><button type="submit">Preview</button></div>
      </form>
      ${
        a.result === undefined && b.result === undefined
          ? ''
          : markup`<h2>Result</h2>
              <div class="columns">
                ${resultOf(a.result, compare ? b.result : undefined, 'Caller A')}${resultOf(b.result, compare ? a.result : undefined, 'Caller B')}
              </div>`
      }`,
  });
}
