import type { Markup, MarkupValue } from '@mcpgw/core';
import { markup } from '@mcpgw/core';

/** An admin API refusal as a page shows it: the RFC 9457 members the API sends (section 3.1, 3.2). */
export interface FormProblem {
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly errors?: readonly {
    readonly detail: string;
    readonly pointer?: string;
    readonly parameter?: string;
    readonly header?: string;
    readonly location?: string;
  }[];
}

/** Which form field a problem's entry is about, from its pointer (or parameter, header, location). */
export type FieldOf = (entry: NonNullable<FormProblem['errors']>[number]) => string | undefined;

/** A refusal split between the form's fields and what names no field of it. */
export interface PlacedProblem {
  readonly problem: FormProblem;
  readonly byField: ReadonlyMap<string, readonly string[]>;
  readonly unplaced: readonly string[];
}

/** Each of the problem's entries next to the field it names; the rest in the summary. */
export function placeProblem(problem: FormProblem, fieldOf: FieldOf): PlacedProblem {
  const byField = new Map<string, string[]>();
  const unplaced: string[] = [];
  for (const entry of problem.errors ?? []) {
    const field = fieldOf(entry);
    const where = entry.pointer ?? entry.location ?? entry.parameter ?? entry.header;
    const text = where === undefined || where === '' ? entry.detail : `${where}: ${entry.detail}`;
    if (field === undefined) unplaced.push(text);
    else byField.set(field, [...(byField.get(field) ?? []), text]);
  }
  return { problem, byField, unplaced };
}

/** The refusal's summary at the top of a form: an alert, so a screen reader announces it. */
export function problemSummary(placed: PlacedProblem | undefined): MarkupValue {
  if (placed === undefined) return undefined;
  const { problem, unplaced } = placed;
  return markup`<div class="notice bad" role="alert" id="problem">
    <p><strong>${problem.title}</strong> (${problem.status}): ${problem.detail}</p>
    ${
      unplaced.length === 0
        ? ''
        : markup`<ul>
            ${unplaced.map((text) => markup`<li>${text}</li>`)}
          </ul>`
    }
  </div>`;
}

export interface FieldInput {
  readonly name: string;
  readonly label: string;
  readonly value?: string;
  readonly hint?: string;
  readonly kind?: 'text' | 'textarea' | 'password' | 'datetime-local' | 'number';
  readonly required?: boolean;
  readonly code?: boolean;
  readonly placed?: PlacedProblem | undefined;
  readonly autocomplete?: string;
  /** Shown right under the control and named by its `aria-describedby` (a live region, say). */
  readonly after?: { readonly id: string; readonly content: MarkupValue };
}

/** A labelled field with its hint and, when the API refused it, its problem right under it. */
export function field(input: FieldInput): Markup {
  const id = `f-${input.name.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  const errors = input.placed?.byField.get(input.name) ?? [];
  const described = [
    input.hint === undefined ? '' : `${id}-hint`,
    errors.length === 0 ? '' : `${id}-error`,
    input.after?.id ?? '',
  ]
    .filter(Boolean)
    .join(' ');
  const common = markup`id="${id}"
  name="${input.name}"${input.required === true ? markup` required` : ''}${
    described === '' ? '' : markup` aria-describedby="${described}"`
  }${errors.length === 0 ? '' : markup` aria-invalid="true"`}${
    input.autocomplete === undefined ? '' : markup` autocomplete="${input.autocomplete}"`
  }`;
  const control =
    input.kind === 'textarea'
      ? markup`<textarea ${common}${input.code === true ? markup` class="code" spellcheck="false"` : ''} rows="8">
${input.value ?? ''}</textarea>`
      : markup`<input ${common} type="${input.kind ?? 'text'}" value="${input.value ?? ''}" />`;
  return markup`<div class="field">
    <label for="${id}">${input.label}</label>
    ${input.hint === undefined ? '' : markup`<p class="hint" id="${id}-hint">${input.hint}</p>`} ${control}
    ${errors.length === 0 ? '' : markup`<p class="error" id="${id}-error">${errors.join('; ')}</p>`}${input.after?.content}
  </div>`;
}

/** The hidden fields every console write carries: the session's CSRF token and, for an edit, the ETag's version. */
export function writeFields(csrfToken: string | undefined, version?: number | string): Markup {
  return markup`${csrfToken === undefined ? '' : markup`<input type="hidden" name="csrf" value="${csrfToken}" />`}${
    version === undefined ? '' : markup`<input type="hidden" name="version" value="${String(version)}" />`
  }`;
}
