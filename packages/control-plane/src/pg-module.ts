import type pg from 'pg';
import { loadOnFirstUse } from '@mcpgw/core';

/** node-postgres, loaded with the first connection pool: a gateway that never connects to Postgres never loads it. */
export const postgresDriver = loadOnFirstUse<typeof pg>('pg', import.meta.url);
