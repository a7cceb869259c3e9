import type { ResourceContents, ResourceDescriptor, ResourceTemplateDescriptor } from '@mcpgw/core';
import type { EncodedJson } from './encoded-json.js';

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
  /**
   * Seals a listing position (a page's `nextState`) into a cursor bound to
   * this caller, so a layer that kept the page can hand it to another caller
   * of the same view with a cursor of their own. Absent: pages carry no state.
   */
  encodeCursor?(listing: CursorListing, state: unknown): string;
}

/** Which listing a cursor continues. */
export type CursorListing = 'resources' | 'templates';

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
  /** The same `resources` as JSON text, when a cache holds them so: the modern wire sends it as it is. */
  encodedResources?: EncodedJson;
  nextCursor?: string;
  /** The caller-independent position `nextCursor` seals (see `ResourceService.encodeCursor`). */
  nextState?: unknown;
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
  /** As for `ResourcePage.encodedResources`. */
  encodedResourceTemplates?: EncodedJson;
  nextCursor?: string;
  /** As for `ResourcePage.nextState`. */
  nextState?: unknown;
  ttlMs: number;
  /** As for `ResourcePage`. */
  unavailableSources?: string[];
}

export interface ReadOutcome {
  contents: ResourceContents[];
  /** As for `ResourcePage.encodedResources`. */
  encodedContents?: EncodedJson;
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
