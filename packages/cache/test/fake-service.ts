import type { ReadOutcome, ResourcePage, ResourceService, TemplatePage } from '@mcpgw/protocol';

/** A ResourceService whose answers name the call that made them, and which counts its calls. */
export interface FakeService extends ResourceService {
  calls: { list: number; templates: number; read: number };
  ttlMs: number;
  /** Reads of this URI answer "not found". */
  missing: string;
  /** When set, every call fails with it. */
  failure: Error | undefined;
}

export function fakeService(label: string, ttlMs = 60_000): FakeService {
  const service: FakeService = {
    calls: { list: 0, templates: 0, read: 0 },
    ttlMs,
    missing: 'test://missing',
    failure: undefined,
    async listResources(cursor): Promise<ResourcePage> {
      service.calls.list += 1;
      if (service.failure) throw service.failure;
      const n = service.calls.list;
      return {
        resources: [{ uri: `test://${label}/${cursor ?? 'first'}/${n}`, name: `${label} call ${n}` }],
        nextCursor: cursor === undefined ? 'page-2' : undefined,
        ttlMs: service.ttlMs,
      };
    },
    async listTemplates(): Promise<TemplatePage> {
      service.calls.templates += 1;
      return { resourceTemplates: [{ uriTemplate: `test://${label}/{id}`, name: label }], ttlMs: service.ttlMs };
    },
    async read(uri): Promise<ReadOutcome | undefined> {
      service.calls.read += 1;
      if (service.failure) throw service.failure;
      if (uri === service.missing) return undefined;
      return { contents: [{ uri, text: `${label} read ${service.calls.read}` }], ttlMs: service.ttlMs };
    },
  };
  return service;
}
