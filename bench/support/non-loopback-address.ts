import { networkInterfaces } from 'node:os';

/**
 * The first IPv4 address of this machine that is not loopback: where a bench's gateway binds and
 * its load connects, as a deployment's clients do. A loopback peer is exempt from the gateway-wide
 * rate limits; a client of a deployment is not.
 */
export function nonLoopbackAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) {
      if (address.family === 'IPv4' && !address.internal) return address.address;
    }
  }
  throw new Error('this machine has no non-loopback IPv4 address to serve on');
}
