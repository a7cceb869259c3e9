import type { Html } from './html.js';
import { html } from './html.js';
import type { JsonChange } from './json-diff.js';

const shown = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value));

/** Changed leaves side by side, the removed value struck and the added one marked. */
export function changesTable(changes: readonly JsonChange[], labels: { before: string; after: string }): Html {
  return html`<div class="scroll">
    <table>
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">${labels.before}</th>
          <th scope="col">${labels.after}</th>
        </tr>
      </thead>
      <tbody>
        ${changes.map(
          (change) =>
            html`<tr>
              <td><code>${change.pointer === '' ? '(whole)' : change.pointer}</code></td>
              <td>
                ${
                  change.before === undefined
                    ? html`<span class="hint">absent</span>`
                    : html`<del>${shown(change.before)}</del>`
                }
              </td>
              <td>
                ${
                  change.after === undefined
                    ? html`<span class="hint">absent</span>`
                    : html`<ins>${shown(change.after)}</ins>`
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
