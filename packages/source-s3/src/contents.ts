import type { ResourceContents } from '@mcpgw/core';
import { isTextLike } from './mime.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One `contents` entry: text for text-like types whose bytes are valid UTF-8
 * (server-resources.md "Text Content"), otherwise a base64 blob ("Binary
 * Content"), so bytes are never mangled by a lossy decode.
 */
export function toContents(uri: string, mimeType: string, bytes: Buffer): ResourceContents {
  if (isTextLike(mimeType)) {
    try {
      return { uri, mimeType, text: utf8.decode(bytes) };
    } catch {
      // Not UTF-8 despite the type: fall through to a blob.
    }
  }
  return { uri, mimeType, blob: bytes.toString('base64') };
}
