import type { Markup } from '@mcpgw/core';
import { markup } from '@mcpgw/core';

/**
 * The opening tag of a box that scrolls sideways on a narrow screen (a wide
 * table on a phone). It takes the keyboard focus and is a named region, so a
 * keyboard user can scroll it with the arrow keys and a screen reader names
 * it (WCAG 2.2, 2.1.1 Keyboard and 1.4.10 Reflow).
 */
export function scrollRegionStart(label: string): Markup {
  return markup`<div class="scroll" role="region" aria-label="${label}" tabindex="0">`;
}
