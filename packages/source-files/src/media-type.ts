import { extname } from 'node:path';
import { lookup } from 'mime-types';

/** mime-types maps `.ts` to MPEG transport streams; in a document folder it is TypeScript. */
const OVERRIDES: Readonly<Record<string, string>> = {
  '.ts': 'text/x-typescript',
  '.mts': 'text/x-typescript',
  '.cts': 'text/x-typescript',
  '.tsx': 'text/x-typescript',
};

/** The XDG type for folders (server-resources.md, "file://"). */
export const DIRECTORY_MIME_TYPE = 'inode/directory';

/** The media type of a file, from its extension; `application/octet-stream` when unknown. */
export function mediaTypeOf(name: string): string {
  return OVERRIDES[extname(name).toLowerCase()] ?? (lookup(name) || 'application/octet-stream');
}

export { isTextLike } from '@mcpgw/core';
