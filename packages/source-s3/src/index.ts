// The public surface of @mcpgw/source-s3: what apps/gateway, bench and other
// packages' tests use. Tests reach the other modules by path (../src/<module>.js).

/** The `s3` source type; createS3SourceFactory wires the identity-token port `callerIdentity` needs. */
export { createS3SourceFactory, s3SourceFactory } from './s3-source-factory.js';
/** A source created from parsed options, over an optional client (bench, integration tests against s3rver). */
export { createS3Source, type S3Caller, type S3Source, type S3SourcePorts } from './s3-source.js';
/** Validates an `s3` source entry's options. */
export { s3SourceOptionsSchema } from './s3-source-options.js';
/** The identity tokens `callerIdentity` presents to STS: the port, and a minter over a tenant's private JWK. */
export {
  createIdentityTokenMinter,
  type IdentityTokenMinterOptions,
  type IdentityTokenRequest,
  type MintIdentityToken,
  type TenantSigningKey,
} from './identity-token.js';
