import type { Markup } from '@mcpgw/core';
import { markup } from '@mcpgw/core';
import type { JsonChange } from './json-diff.js';
import { scrollRegionStart } from './scroll-region.js';

const shown = (value: unknown): string => (value === undefined ? '' : JSON.stringify(value));

/** Changed leaves side by side, the removed value struck and the added one marked. */
export function changesTable(changes: readonly JsonChange[], labels: { before: string; after: string }): Markup {
  return markup`${scrollRegionStart('What changed')}
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
            markup`<tr>
              <td><code>${change.pointer === '' ? '(whole)' : change.pointer}</code></td>
              <td>
                ${
                  change.before === undefined
                    ? markup`<span class="hint">absent</span>`
                    : markup`<del>${shown(change.before)}</del>`
                }
              </td>
              <td>
                ${
                  change.after === undefined
                    ? markup`<span class="hint">absent</span>`
                    : markup`<ins>${shown(change.after)}</ins>`
                }
              </td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}
