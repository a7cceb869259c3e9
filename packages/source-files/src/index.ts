export { filesSourceFactory } from './files-source-factory.js';
export { createFilesSource, formatBytes, WALK_REUSE_MS } from './files-source.js';
export { filesSourceOptionsSchema, type FilesSourceConfig, type FilesSourceOptions } from './files-source-options.js';
export { fileUriPrefix, parseFileUri, toFileUri, type ParsedFileUri } from './file-uri.js';
export { DIRECTORY_MIME_TYPE, isTextLike, mediaTypeOf } from './media-type.js';
export { MARKDOWN_HEAD_BYTES, summarizeMarkdown, type MarkdownSummary } from './markdown-summary.js';
export { compareNames, comparePaths, isServableName } from './path-segment.js';
export { WATCH_COALESCE_MS } from './folder-watcher.js';
