import type { SourceFactory } from '@mcpgw/core';
import { createStaticSource } from './static-source.js';
import { staticSourceOptionsSchema, type StaticSourceOptions } from './static-source-options.js';

/**
 * The `static` source type: resources and templates declared inline in the
 * bootstrap file. Example entry:
 *
 * ```json
 * { "id": "fixtures", "type": "static",
 *   "resources": [{ "uri": "test://hello", "name": "hello", "mimeType": "text/plain", "text": "Hi" }],
 *   "templates": [{ "uriTemplate": "test://items/{id}", "name": "item",
 *                   "mimeType": "application/json", "text": "{\"id\":\"{{id}}\"}" }] }
 * ```
 */
export const staticSourceFactory: SourceFactory<StaticSourceOptions> = {
  type: 'static',
  optionsSchema: staticSourceOptionsSchema,
  create: createStaticSource,
  // Inline resources: nothing to connect to, nothing of the host's.
  model: { credentials: [], targets: [], operatorOnly: false },
  // The operator writes these URIs: each resource's, and each template's text
  // before its first expression (RFC 6570 section 2.2), which every expansion keeps.
  uriSpace: (options) => ({
    prefixes: [
      ...options.resources.map((resource) => resource.uri),
      ...options.templates.map((template) => template.uriTemplate.split('{', 1)[0]!),
    ],
    emptySegments: true,
  }),
};
