import type * as UndiciModule from 'undici';
import { loadOnFirstUse } from '@mcpgw/core';

/** undici (its own copy, not Node's internal one: 2 to 4 MB resident, a fifth of a second to load on a small machine), loaded when a guarded fetch first runs. */
export const undici = loadOnFirstUse<typeof UndiciModule>('undici', import.meta.url);
