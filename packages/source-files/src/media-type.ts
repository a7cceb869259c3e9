/** The XDG type for folders (MCP 2026-07-28, Resources, "file://"). */
export const DIRECTORY_MIME_TYPE = 'inode/directory';
