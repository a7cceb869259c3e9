import type { ResourceContents, ResourceDescriptor, ResourceTemplateDescriptor } from '@mcpgw/core';

/**
 * What the dispatcher needs from the rest of the gateway for one caller: the
 * caller's resource set, already scoped by tenant and authorization. The
 * catalog package implements it. Results carry the `ttlMs` the gateway will
 * return (the shortest of the sources that shaped them).
 */
export interface ResourceService {
  listResources(
    cursor: string | undefined,
    signal: AbortSignal,
    options?: ResourceRequestOptions,
  ): Promise<ResourcePage>;
  listTemplates(
    cursor: string | undefined,
    signal: AbortSignal,
    options?: ResourceRequestOptions,
  ): Promise<TemplatePage>;
  /** `undefined` when the resource does not exist for this caller. */
  read(uri: string, signal: AbortSignal, options?: ResourceRequestOptions): Promise<ReadOutcome | undefined>;
}

/** What the dispatcher knows about a request that the layers below need. */
export interface ResourceRequestOptions {
  /**
   * False when the request carries `inputResponses` or `requestState`: its
   * result "MUST NOT be cached" (2026-07-28 server/utilities/caching, Cache
   * Key), so no cache may serve or store it. Absent means true.
   */
  cacheable: boolean;
}

export interface ResourcePage {
  resources: ResourceDescriptor[];
  nextCursor?: string;
  ttlMs: number;
  /** Ids of the caller's sources this page had to skip because their backend is down (a partial result). */
  unavailableSources?: string[];
  /**
   * Ids of sources whose part of this page left entries out because of a
   * configured bound of the source (e.g. the files source's `maxEntries`).
   */
  incompleteSources?: string[];
}

export interface TemplatePage {
  resourceTemplates: ResourceTemplateDescriptor[];
  nextCursor?: string;
  ttlMs: number;
  /** As for `ResourcePage`. */
  unavailableSources?: string[];
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
