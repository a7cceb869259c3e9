/**
 * Resource shapes as the gateway holds them internally. They mirror the MCP
 * 2026-07-28 `Resource`, `ResourceTemplate` and `ResourceContents` types
 * (Server features, Resources, "Data Types") without any wire
 * envelope: the protocol package adds `resultType`, `ttlMs` and friends.
 */

/** Hints to the client (MCP 2026-07-28, Resources, "Annotations"). */
export interface Annotations {
  audience?: Array<'user' | 'assistant'>;
  /** 0.0 (least important) to 1.0 (most important). */
  priority?: number;
  /** ISO 8601 timestamp. */
  lastModified?: string;
}

export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

/** One entry of `resources/list`. */
export interface ResourceDescriptor {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  /** Size in bytes, when known. */
  size?: number;
  icons?: Icon[];
  annotations?: Annotations;
}

/** One entry of `resources/templates/list`; `uriTemplate` is an RFC 6570 template. */
export interface ResourceTemplateDescriptor {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  icons?: Icon[];
  annotations?: Annotations;
}

interface ContentsBase {
  /** The URI of this entry; a directory read returns one entry per child. */
  uri: string;
  mimeType?: string;
}

export interface TextContents extends ContentsBase {
  text: string;
}

export interface BlobContents extends ContentsBase {
  /** Base64-encoded bytes. */
  blob: string;
}

export type ResourceContents = TextContents | BlobContents;
