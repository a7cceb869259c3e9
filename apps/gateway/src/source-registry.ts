import type { SourceFactory } from '@mcpgw/core';
import { filesSourceFactory } from '@mcpgw/source-files';
import { postgresSourceFactory } from '@mcpgw/source-postgres';
import { createS3SourceFactory, type MintIdentityToken } from '@mcpgw/source-s3';
import { staticSourceFactory } from '@mcpgw/source-static';

/** What some source types need of the gateway beyond their options. */
export interface SourceRegistryPorts {
  /**
   * Signs the identity tokens an S3 source with `callerIdentity` presents to
   * STS (tenant-identity-tokens.ts). Absent (a registry only for validating
   * the bootstrap file, or a test's): such a source fails to start, saying so.
   */
  readonly mintIdentityToken?: MintIdentityToken | undefined;
}

/** Every source type this build can serve, by the `type` used in the bootstrap file. */
export function createSourceRegistry(ports: SourceRegistryPorts = {}): ReadonlyMap<string, SourceFactory> {
  const factories = [
    staticSourceFactory,
    filesSourceFactory,
    postgresSourceFactory,
    createS3SourceFactory({ mintIdentityToken: ports.mintIdentityToken }),
  ] as SourceFactory[];
  return new Map(factories.map((factory) => [factory.type, factory]));
}
