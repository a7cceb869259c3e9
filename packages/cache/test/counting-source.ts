import type { Page, ResourceDescriptor, Source, SourceChange } from '@mcpgw/core';
import { DEFAULT_SOURCE_TTL_MS } from '@mcpgw/core';

/** A backend that counts its calls, answers once `answer` resolves (at once without one), and can announce a change like a watched source. */
export interface CountingSource extends Source {
  calls: { list: number; templates: number };
  /** Appended to every descriptor name so a test can tell old answers from new ones. */
  version: number;
  emit(change: SourceChange): void;
}

export function countingSource(id: string, answer?: Promise<void>): CountingSource {
  const listeners = new Set<(change: SourceChange) => void>();
  const source: CountingSource = {
    id,
    kind: 'counting',
    ttlMs: DEFAULT_SOURCE_TTL_MS,
    calls: { list: 0, templates: 0 },
    version: 1,
    async listResources(page): Promise<Page<ResourceDescriptor>> {
      source.calls.list += 1;
      await answer;
      const start = Number(page.position ?? 0);
      return {
        items: Array.from({ length: page.limit }, (_, i) => ({
          uri: `test://${id}/${start + i}`,
          name: `${id} ${start + i} v${source.version}`,
        })),
        nextPosition: String(start + page.limit),
      };
    },
    async listTemplates() {
      source.calls.templates += 1;
      await answer;
      return [{ uriTemplate: `test://${id}/{n}`, name: `${id} v${source.version}` }];
    },
    owns: (uri) => uri.startsWith(`test://${id}/`),
    read: async (uri) => [{ uri, text: uri }],
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit: (change) => listeners.forEach((listener) => listener(change)),
    health: async () => ({ ok: true }),
    close: async () => undefined,
  };
  return source;
}
