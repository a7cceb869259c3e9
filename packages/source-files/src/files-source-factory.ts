import type { SourceFactory } from '@mcpgw/core';
import { fileUriPrefix } from './file-uri.js';
import { createFilesSource } from './files-source.js';
import { filesSourceOptionsSchema, type FilesSourceOptions } from './files-source-options.js';

/**
 * The `files` source type: a folder on disk as resources. Example entry:
 *
 * ```json
 * { "id": "handbook", "type": "files", "root": "./handbook", "maxFileBytes": 1048576 }
 * ```
 */
export const filesSourceFactory: SourceFactory<FilesSourceOptions> = {
  type: 'files',
  optionsSchema: filesSourceOptionsSchema,
  create: createFilesSource,
  // It reads the gateway's own file system, which is the platform's, not a tenant's.
  model: { credentials: [], targets: [], operatorOnly: true },
  // Folder and file names are never empty, so no URI has `//` after the prefix.
  uriSpace: (_options, sourceId) => ({ prefixes: [fileUriPrefix(sourceId)], emptySegments: false }),
};
