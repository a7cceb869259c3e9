import type { z } from 'zod';
import type { entityViewSchema } from '../admin-schemas.js';
import type { PreviewWarning } from '../preview-schema.js';
import type { ConsoleViewer } from './console-layout.js';
import { consolePage } from './console-layout.js';
import { tenantConsolePath } from './console-paths.js';
import type { ConsoleCollection } from './entity-forms.js';
import type { PlacedProblem } from './form-problem.js';
import { field, problemSummary, writeFields } from './form-problem.js';
import type { Markup, MarkupValue } from '@mcpgw/core';
import { markup } from '@mcpgw/core';
import type { JsonChange } from './json-diff.js';
import { changesTable } from './changes-table.js';
import { scrollRegionStart } from './scroll-region.js';
import type { GrantCaller } from './grant-callers.js';
import { grantCallersCell } from './grant-callers.js';
import type { ClaimsCheck } from './claims-check.js';
import { claimsCheckSection, claimsMatchCell } from './claims-check.js';

export type EntityView = z.infer<typeof entityViewSchema>;

/** The form being shown: a new entity, or an edit of one at the version the page read. */
export interface EntityEditing {
  readonly name?: string;
  readonly values: Readonly<Record<string, string>>;
  readonly version?: number;
  /** The document as the form was loaded (JSON), so a stale write can show what changed since. */
  readonly base?: string;
  readonly placed?: PlacedProblem;
  /** Set after a 412: the stored entity now, and what changed between the loaded and the stored document. */
  readonly stale?: { readonly current: EntityView | undefined; readonly changes: readonly JsonChange[] };
}

export interface EntityPageInput {
  readonly tenantId: string;
  readonly collection: ConsoleCollection;
  readonly viewer: ConsoleViewer;
  readonly items: readonly EntityView[];
  readonly editing: EntityEditing;
  /** A message about the last action (saved, deleted, a connection test's result). */
  readonly notice?: MarkupValue;
  /** Sources: the types this gateway serves and each one's credential option paths. */
  readonly sourceTypes?: ReadonlyMap<string, readonly string[]>;
  /** Grants: the pattern check's warnings for the serving grants. */
  readonly warnings?: readonly PreviewWarning[];
  /** Grants: per grant name, the callers the access activity saw it match lately (callersByGrant). */
  readonly recentCallers?: ReadonlyMap<string, readonly GrantCaller[]>;
  /** Grants: the "Check claims" form as posted, and the caller it previewed. */
  readonly claimsCheck?: ClaimsCheck;
}

const TITLES: Readonly<Record<ConsoleCollection, { title: string; one: string }>> = {
  sources: { title: 'Sources', one: 'source' },
  grants: { title: 'Grants', one: 'grant' },
  issuers: { title: 'Issuers', one: 'issuer' },
  'admin-role-bindings': { title: 'Admin role bindings', one: 'admin role binding' },
};

function summaryOf(collection: ConsoleCollection, item: EntityView): MarkupValue {
  const doc = item.document;
  switch (collection) {
    case 'sources':
      return markup`<code>${String(doc.type)}</code>${
        (item.secretNames ?? []).length === 0
          ? ''
          : markup`<br /><span class="hint">credentials stored: ${(item.secretNames ?? []).join(', ')}</span>`
      }`;
    case 'grants': {
      const allow = (doc.allow as { source: string; uris?: string[] }[] | undefined) ?? [];
      return markup`<span>when ${JSON.stringify(doc.match ?? {})}</span><br /><span
          >sees
          ${allow.map(
            (entry, index) =>
              markup`${index === 0 ? '' : '; '}<code>${entry.source}</code>${entry.uris === undefined ? ' (all)' : markup` ${entry.uris.join(' ')}`}`,
          )}</span
        >`;
    }
    default:
      return markup`<code>${JSON.stringify(doc)}</code>`;
  }
}

function row(input: EntityPageInput, item: EntityView): Markup {
  const base = tenantConsolePath(input.tenantId, input.collection);
  const csrf = input.viewer.csrfToken;
  return markup`<tr>
    <th scope="row">${item.name}</th>
    <td>${summaryOf(input.collection, item)}</td>
    ${
      input.recentCallers === undefined
        ? ''
        : markup`<td>${grantCallersCell(input.tenantId, input.recentCallers.get(item.name))}</td>`
    }
    ${input.collection === 'grants' ? claimsMatchCell(input.claimsCheck, item.document.match) : ''}
    <td>${new Date(item.updatedAt).toISOString()}<br /><span class="hint">version ${item.version}</span></td>
    <td>
      <div class="actions">
        <a href="${base}?edit=${encodeURIComponent(item.name)}#edit">Edit<span class="skip"> ${item.name}</span></a>
        ${
          input.collection === 'sources'
            ? markup`<form class="inline" method="post" action="${base}/test">
                ${writeFields(csrf)}<input type="hidden" name="name" value="${item.name}" /><button
                  class="secondary"
                  type="submit"
                >
                  Test connection<span class="skip"> of ${item.name}</span>
                </button>
              </form>`
            : ''
        }
        <form class="inline" method="post" action="${base}/delete">
          ${writeFields(csrf, item.version)}<input type="hidden" name="name" value="${item.name}" /><button
            class="danger"
            type="submit"
          >
            Delete<span class="skip"> ${item.name}</span>
          </button>
        </form>
      </div>
    </td>
  </tr>`;
}

function sourceFields(input: EntityPageInput, editing: EntityEditing): MarkupValue {
  const types = input.sourceTypes ?? new Map();
  const type = editing.values.type ?? '';
  const errors = editing.placed?.byField.get('type') ?? [];
  const credentials = [...(types.get(type) ?? [])];
  return markup`<div class="field">
      <label for="f-type">Type</label>
      <select
        id="f-type"
        name="type"
        ${errors.length === 0 ? '' : markup` aria-invalid="true" aria-describedby="f-type-error"`}
      >
        ${[...types.keys()].map(
          (name) => markup`<option${name === type ? markup` selected` : ''}>${name}</option>`,
        )}</select
      >${errors.length === 0 ? '' : markup`<p class="error" id="f-type-error">${errors.join('; ')}</p>`}
    </div>
    ${field({ name: 'options', label: 'Options (JSON, without credentials)', kind: 'textarea', code: true, value: editing.values.options ?? '{}', hint: 'The bootstrap file\'s source entry without "id", "type" and credentials, e.g. {"resources": [...]} for static or {"connection": {...}, "schemas": ["public"]} for postgres.', placed: editing.placed })}
    <fieldset>
      <legend>Credentials (write-only)</legend>
      <p class="hint">
        Never shown again once saved. Leave empty to keep what is
        stored.${credentials.length === 0 ? markup` The type <code>${type || '(none)'}</code> takes none.` : ''}
      </p>
      ${editing.placed?.byField.has('secrets') === true ? markup`<p class="error">${editing.placed.byField.get('secrets')!.join('; ')}</p>` : ''}
      ${credentials.map((path) => field({ name: `secret.${path}`, label: path, kind: 'password', autocomplete: 'new-password', placed: editing.placed }))}
      <div class="field">
        <label
          ><input type="checkbox" name="dropSecrets" ${editing.values.dropSecrets === 'on' ? markup` checked` : ''} />
          Remove the stored credentials</label
        >
      </div>
    </fieldset>`;
}

function kindFields(input: EntityPageInput, editing: EntityEditing): MarkupValue {
  const { placed, values } = editing;
  switch (input.collection) {
    case 'sources':
      return sourceFields(input, editing);
    case 'grants':
      return markup`<fieldset>
          <legend>Who (every filled list must match; any value within one)</legend>
          ${['scopes', 'groups', 'subjects', 'clientIds', 'issuers'].map((name) =>
            field({
              name,
              label: name === 'clientIds' ? 'Client ids' : name[0]!.toUpperCase() + name.slice(1),
              kind: 'textarea',
              value: values[name] ?? '',
              hint: 'One per line; empty: any.',
              placed,
            }),
          )}
        </fieldset>
        ${field({ name: 'allow', label: 'Sees', kind: 'textarea', code: true, value: values.allow ?? '', hint: 'One line per source: the source id, then URI patterns separated by spaces (* within a segment, ** across); the id alone allows the whole source.', placed, after: grantCheckRegion(input.tenantId) })}`;
    case 'issuers':
      return field({
        name: 'document',
        label: 'Issuer settings (JSON)',
        kind: 'textarea',
        code: true,
        value: values.document ?? '{}',
        hint: 'As the bootstrap file\'s issuer entry, e.g. {"jwksUri": "https://idp.example/jwks"} or {"discovery": true}; the name is the issuer URL.',
        placed,
      });
    case 'admin-role-bindings':
      return markup`${field({ name: 'issuer', label: 'Issuer (optional)', value: values.issuer ?? '', hint: 'Only tokens of this issuer; empty: any issuer of the tenant.', placed })}
      ${['scopes', 'groups', 'subjects'].map((name) => field({ name, label: name[0]!.toUpperCase() + name.slice(1), kind: 'textarea', value: values[name] ?? '', hint: 'One per line; any value of any list admits.', placed }))}`;
  }
}

/**
 * Where the console's script (console-script.ts) says, as "Sees" is typed,
 * what a save would refuse and which patterns match nothing: a polite live
 * region, empty until then (and for good without the script).
 */
const grantCheckRegion = (tenantId: string) => ({
  id: 'f-allow-check',
  content: markup`<div
    id="f-allow-check"
    class="check"
    aria-live="polite"
    data-for="f-allow"
    data-grant-check="${tenantConsolePath(tenantId, 'grants')}/check"
  ></div>`,
});

function staleNotice(editing: EntityEditing): MarkupValue {
  if (editing.stale === undefined) return undefined;
  const { current, changes } = editing.stale;
  return markup`<div class="notice warn" role="alert" id="stale">
    <p>
      <strong>Someone changed this since you opened it.</strong> ${
        current === undefined
          ? 'It has been deleted meanwhile; saving creates it again.'
          : markup`It is now at version ${current.version}. What changed since you loaded it:`
      }
    </p>
    ${changes.length === 0 ? '' : changesTable(changes, { before: 'When you loaded it', after: 'Stored now' })}
    <p>Your edits are still in the form below. Saving again applies them over the stored version.</p>
  </div>`;
}

function form(input: EntityPageInput): Markup {
  const { editing } = input;
  const { one } = TITLES[input.collection];
  const editingExisting = editing.version !== undefined;
  const action = tenantConsolePath(input.tenantId, input.collection);
  return markup`<section id="edit" aria-labelledby="edit-title">
    <h2 id="edit-title">${editingExisting ? markup`Edit ${one} <code>${editing.name ?? ''}</code>` : `Add a ${one}`}</h2>
    ${staleNotice(editing)}${editing.stale === undefined ? problemSummary(editing.placed) : ''}
    <form class="stack" method="post" action="${action}">
      ${writeFields(input.viewer.csrfToken, editing.version)}
      ${editing.base === undefined ? '' : markup`<input type="hidden" name="base" value="${editing.base}" />`}
      ${
        editingExisting
          ? markup`<input type="hidden" name="name" value="${editing.name ?? ''}" />`
          : field({
              name: 'name',
              label: input.collection === 'issuers' ? 'Issuer URL (or "development")' : 'Name',
              value: editing.name ?? '',
              required: true,
              placed: editing.placed,
            })
      }
      ${kindFields(input, editing)}
      <div class="actions">
        <button type="submit">
          ${editing.stale === undefined ? (editingExisting ? 'Save' : `Add ${one}`) : 'Reapply my change'}</button
        >${editingExisting ? markup`<a href="${action}">Cancel</a>` : ''}
      </div>
    </form>
  </section>`;
}

function warningsOf(warnings: readonly PreviewWarning[] | undefined): MarkupValue {
  if (warnings === undefined) return undefined;
  if (warnings.length === 0) {
    return markup`<p class="notice good">Pattern check: every grant pattern matches something its source lists.</p>`;
  }
  return markup`<section class="notice warn" aria-labelledby="warnings-title">
    <h2 id="warnings-title">Pattern check</h2>
    <ul>
      ${warnings.map(
        (warning) =>
          markup`<li>
            <strong>${warning.grant}</strong> on <code>${warning.source}</code>${
              warning.pattern === undefined ? '' : markup` (<code>${warning.pattern}</code>)`
            }:
            ${warning.message} <span class="hint">[${warning.kind}]</span>
          </li>`,
      )}
    </ul>
  </section>`;
}

/** A tenant's issuers, sources, grants or admin role bindings: the list, each one's actions, and the form. */
export function entityPage(input: EntityPageInput): string {
  const { title } = TITLES[input.collection];
  return consolePage({
    title,
    tenant: { id: input.tenantId, page: input.collection },
    viewer: input.viewer,
    script: input.collection === 'grants',
    main: markup`${input.notice === undefined ? '' : markup`<div role="status">${input.notice}</div>`}
    ${input.collection === 'grants' ? warningsOf(input.warnings) : ''}
    ${
      input.collection === 'grants' && input.items.length > 0
        ? claimsCheckSection(input.tenantId, input.viewer.csrfToken, input.claimsCheck)
        : ''
    }
    ${
      input.items.length === 0
        ? markup`<p>None yet.</p>`
        : markup`${scrollRegionStart(title)}
            <table>
              <caption class="skip">
                ${title}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">What</th>
                  ${input.recentCallers === undefined ? '' : markup`<th scope="col">Recent callers</th>`}
                  ${input.claimsCheck?.result === undefined ? '' : markup`<th scope="col">Pasted claims</th>`}
                  <th scope="col">Last change</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                ${input.items.map((item) => row(input, item))}
              </tbody>
            </table>
          </div>`
    }
    ${form(input)}`,
  });
}
