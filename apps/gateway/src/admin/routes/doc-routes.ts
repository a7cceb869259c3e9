import type { AdminRoute } from '../admin-route.js';
import { defineAdminRoute } from '../admin-route.js';
import { docsPage, openApiDocument } from '@mcpgw/admin';

/** The API describes itself: the OpenAPI 3.1 document and its rendered reference, both public. */
export const docRoutes = (serverUrl: string): readonly AdminRoute[] => [
  defineAdminRoute({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This API as an OpenAPI 3.1 document',
    tag: 'Reference',
    access: 'public',
    responses: { 200: { description: 'The OpenAPI document', mediaType: 'application/json' } },
    async handler({ deps }) {
      return { status: 200, body: openApiDocument(deps.routes(), serverUrl) };
    },
  }),
  defineAdminRoute({
    method: 'GET',
    path: '/docs',
    operationId: 'getReferencePage',
    summary: 'This API as a reference page (self-contained HTML)',
    tag: 'Reference',
    access: 'public',
    responses: { 200: { description: 'The page', mediaType: 'text/html' } },
    async handler({ deps }) {
      return {
        status: 200,
        body: docsPage(openApiDocument(deps.routes(), serverUrl)),
        mediaType: 'text/html; charset=utf-8',
      };
    },
  }),
];
