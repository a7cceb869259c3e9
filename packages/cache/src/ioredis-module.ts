import type * as IoredisModule from 'ioredis';
import { loadOnFirstUse } from '@mcpgw/core';

/** ioredis, loaded with the first Redis connection: a gateway without `REDIS_URL` never loads it. */
export const ioredis = loadOnFirstUse<typeof IoredisModule>('ioredis', import.meta.url);
