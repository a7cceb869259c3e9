import type { SourceFactory } from '@mcpgw/core';
import { filesSourceFactory } from '@mcpgw/source-files';
import { staticSourceFactory } from '@mcpgw/source-static';

/** Every source type this build can serve, by the `type` used in the bootstrap file. */
export function createSourceRegistry(): ReadonlyMap<string, SourceFactory> {
  const factories: SourceFactory[] = [staticSourceFactory as SourceFactory, filesSourceFactory as SourceFactory];
  return new Map(factories.map((factory) => [factory.type, factory]));
}
