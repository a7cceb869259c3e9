import { describe, expect, it } from 'vitest';
import { EgressRefusedError, GatewayError, sourceFailureReason } from '../src/index.js';

// Driver errors as pg, the AWS SDK and Node's net and tls raise them (their
// codes, names and metadata), classed as the connection test reports them.

const coded = (message: string, code: string) => Object.assign(new Error(message), { code });
const s3Error = (name: string, status: number) =>
  Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

describe('sourceFailureReason', () => {
  it.each([
    [coded('password authentication failed for user "app"', '28P01'), 'authentication-failed'],
    [coded('role "x" is not permitted to log in', '28000'), 'authentication-failed'],
    [coded('database "nope" does not exist', '3D000'), 'no-such-database'],
    [coded('connect ECONNREFUSED 127.0.0.1:1', 'ECONNREFUSED'), 'connection-refused'],
    [coded('connect ETIMEDOUT 10.0.0.1:5432', 'ETIMEDOUT'), 'timeout'],
    [coded('getaddrinfo ENOTFOUND db.invalid', 'ENOTFOUND'), 'host-not-found'],
    [coded('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT'), 'tls'],
    [coded('unable to verify the first certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'), 'tls'],
    [new Error('The server does not support SSL connections'), 'tls'],
    [s3Error('NoSuchBucket', 404), 'no-such-bucket'],
    // HeadBucket answers without a body: the SDK names the status only.
    [s3Error('NotFound', 404), 'no-such-bucket'],
    [s3Error('InvalidAccessKeyId', 403), 'authentication-failed'],
    [s3Error('SignatureDoesNotMatch', 403), 'authentication-failed'],
    [s3Error('AccessDenied', 403), 'authentication-failed'],
    [s3Error('Forbidden', 403), 'authentication-failed'],
    [new Error('something else entirely'), 'unavailable'],
    ['not even an error', 'unavailable'],
  ])('%s → %s', (error, reason) => {
    expect(sourceFailureReason(error)).toBe(reason);
  });

  it('looks through a wrapping error and an AggregateError to the driver error', () => {
    const driver = coded('connect ECONNREFUSED ::1:5432', 'ECONNREFUSED');
    const wrapped = new GatewayError('MCPGW_SOURCE_UNAVAILABLE', 'Postgres source "x" is unavailable', {
      cause: new AggregateError([driver, coded('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')]),
    });
    expect(sourceFailureReason(wrapped)).toBe('connection-refused');
  });

  it('puts an egress refusal first wherever it sits', () => {
    const refused = new EgressRefusedError('10.0.0.1', '10.0.0.1', 'a private address');
    const wrapped = new Error('connect failed', { cause: new AggregateError([coded('x', 'ECONNREFUSED'), refused]) });
    expect(sourceFailureReason(wrapped)).toBe('egress-refused');
  });
});
