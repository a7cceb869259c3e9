import { createRequire } from 'node:module';
import type * as Http from 'node:http';

/**
 * `node:http`, required as CommonJS rather than imported. An ES import of a
 * builtin builds its module namespace from every export, and on Node 22 and
 * later `node:http` exports `WebSocket`, `CloseEvent` and `MessageEvent` as
 * lazy getters over Node's bundled undici: reading them for the namespace
 * loads all of undici (about 15 MB resident, measured in
 * docs/performance.md, "Idle memory"), which the gateway never uses. A
 * `require` returns the module object and leaves its getters unread, as
 * Fastify's own `require('node:http')` does. Every runtime use of
 * `node:http` in the gateway's ES modules goes through this (an eslint rule
 * says so); type-only imports are erased and cost nothing.
 */
export const nodeHttp: typeof Http = createRequire(import.meta.url)('node:http') as typeof Http;
