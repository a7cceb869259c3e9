/** The XDG type for folders (server-resources.md, "file://"). */
export const DIRECTORY_MIME_TYPE = 'inode/directory';
