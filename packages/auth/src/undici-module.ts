import type * as UndiciModule from 'undici';
import { loadOnFirstUse } from '@mcpgw/core';

/** undici (its own copy, about 10 MB resident, not Node's internal one), loaded when a guarded fetch first runs. */
export const undici = loadOnFirstUse<typeof UndiciModule>('undici', import.meta.url);
