import { initialSchema } from './0001-initial.js';
import { auditFilters } from './0002-audit-filters.js';
import { entityWritersSchema } from './0003-entity-writers.js';
import { adminSessions } from './0004-admin-sessions.js';
import { authorizationServerSettings } from './0005-authorization-server-settings.js';
import { authorizationServer } from './0006-authorization-server.js';
import { signingKeySuccessors } from './0007-signing-key-successors.js';
import { operatorSessions } from './0008-operator-sessions.js';

/** One forward-only schema step. Applied steps are never edited: add a new one. */
export interface Migration {
  /** 1, 2, 3, … without gaps; the order they apply in. */
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Every migration this gateway knows, oldest first. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial', sql: initialSchema },
  { version: 2, name: 'audit-filters', sql: auditFilters },
  { version: 3, name: 'entity-writers', sql: entityWritersSchema },
  { version: 4, name: 'admin-sessions', sql: adminSessions },
  { version: 5, name: 'authorization-server-settings', sql: authorizationServerSettings },
  { version: 6, name: 'authorization-server', sql: authorizationServer },
  { version: 7, name: 'signing-key-successors', sql: signingKeySuccessors },
  { version: 8, name: 'operator-sessions', sql: operatorSessions },
];
