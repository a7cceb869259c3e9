import type { SourceFactory } from '@mcpgw/core';
import { filesSourceFactory } from '@mcpgw/source-files';
import { postgresSourceFactory } from '@mcpgw/source-postgres';
import { s3SourceFactory } from '@mcpgw/source-s3';
import { staticSourceFactory } from '@mcpgw/source-static';

/** Every source type this build can serve, by the `type` used in the bootstrap file. */
export function createSourceRegistry(): ReadonlyMap<string, SourceFactory> {
  const factories = [
    staticSourceFactory,
    filesSourceFactory,
    postgresSourceFactory,
    s3SourceFactory,
  ] as SourceFactory[];
  return new Map(factories.map((factory) => [factory.type, factory]));
}
