import type { Source, SourceFactory } from '@mcpgw/core';
import { createSourceRegistry } from '@mcpgw/gateway/testing';

/**
 * The same source types with their change feeds removed (no `watch`, no
 * `settled`): a replica built on these watches nothing itself, so every
 * `source` event its listeners receive came from another replica over Redis.
 * The sources still list and read their real backends.
 */
export function withoutChangeFeeds(
  registry: ReadonlyMap<string, SourceFactory> = createSourceRegistry(),
): ReadonlyMap<string, SourceFactory> {
  return new Map(
    [...registry].map(([type, factory]): [string, SourceFactory] => [
      type,
      {
        type: factory.type,
        optionsSchema: factory.optionsSchema,
        model: factory.model,
        create: async (sourceOptions, context) => withoutFeed(await factory.create(sourceOptions, context)),
        ...(factory.uriSpace === undefined ? {} : { uriSpace: factory.uriSpace.bind(factory) }),
      },
    ]),
  );
}

function withoutFeed(source: Source): Source {
  return new Proxy(source, {
    get(target, key) {
      if (key === 'watch' || key === 'settled') return undefined;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
