import type { ResourceContents, ResourceDescriptor, ResourceTemplateDescriptor } from '@mcpgw/core';

/**
 * What the dispatcher needs from the rest of the gateway for one caller: the
 * caller's resource set, already scoped by tenant and authorization. The
 * catalog package implements it. Results carry the `ttlMs` the gateway will
 * return (the shortest of the sources that shaped them).
 */
export interface ResourceService {
  listResources(cursor: string | undefined, signal: AbortSignal): Promise<ResourcePage>;
  listTemplates(cursor: string | undefined, signal: AbortSignal): Promise<TemplatePage>;
  /** `undefined` when the resource does not exist for this caller. */
  read(uri: string, signal: AbortSignal): Promise<ReadOutcome | undefined>;
}

export interface ResourcePage {
  resources: ResourceDescriptor[];
  nextCursor?: string;
  ttlMs: number;
}

export interface TemplatePage {
  resourceTemplates: ResourceTemplateDescriptor[];
  nextCursor?: string;
  ttlMs: number;
}

export interface ReadOutcome {
  contents: ResourceContents[];
  ttlMs: number;
}

/** The gateway's identity as reported in `serverInfo` and `server/discover`. */
export interface ServerIdentity {
  name: string;
  version: string;
  title?: string;
  /** Natural-language guidance for models (`instructions`). */
  instructions?: string;
}
