import type { Redis } from 'ioredis';

/** One way of making a change and timing how long it takes to be heard. */
export interface LatencyVariant {
  label: string;
  /** One measured change; resolves with ms from the change to where it is heard. */
  once: (i: number) => Promise<number>;
  perRound: number;
  samples: number[];
}

/**
 * The floor every latency across replicas is compared with: a bare Redis
 * PUBLISH on one connection heard by a SUBSCRIBE on another (`subscriber`
 * is subscribed to `channel` here and used for nothing else).
 */
export async function redisPubSubFloor(
  publisher: Redis,
  subscriber: Redis,
  channel: string,
  perRound: number,
): Promise<LatencyVariant> {
  const waiters = new Map<string, (at: number) => void>();
  subscriber.on('message', (_channel: string, message: string) => waiters.get(message)?.(performance.now()));
  await subscriber.subscribe(channel);
  return {
    label: 'Redis pub/sub (floor)',
    perRound,
    samples: [],
    once: async (i) => {
      const message = `m${i}`;
      const started = performance.now();
      const at = new Promise<number>((resolve) => waiters.set(message, resolve));
      await publisher.publish(channel, message);
      const arrived = await at;
      waiters.delete(message);
      return arrived - started;
    },
  };
}

/**
 * Warms every variant up, then runs `rounds` rounds with the order rotating
 * each round, so that no variant always follows the same other one. A
 * failure names the variant it came from.
 */
export async function runInterleaved(variants: LatencyVariant[], warmup: number, rounds: number): Promise<void> {
  let counter = 0;
  const measure = (variant: LatencyVariant) =>
    variant.once(counter++).catch((error: unknown) => {
      throw new Error(`${variant.label}: ${error instanceof Error ? error.message : String(error)}`);
    });
  for (const variant of variants) for (let i = 0; i < warmup; i += 1) await measure(variant);
  for (let round = 0; round < rounds; round += 1) {
    const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
    for (const variant of order) {
      for (let i = 0; i < variant.perRound; i += 1) variant.samples.push(await measure(variant));
    }
  }
}

export function quantile(samples: readonly number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** The Markdown table of p50 and p99 per variant, with p50 against the first variant's (the floor's). */
export function latencyTable(variants: readonly LatencyVariant[], firstColumn: string): string {
  const floor = quantile(variants[0]!.samples, 0.5);
  const rows = variants.map((v) => {
    const median = quantile(v.samples, 0.5);
    return `| ${v.label} | ${v.samples.length} | ${median.toFixed(2)} | ${quantile(v.samples, 0.99).toFixed(2)} | ${(median / floor).toFixed(1)}x |`;
  });
  return [
    `| ${firstColumn} | runs | p50 ms | p99 ms | p50 vs pub/sub |`,
    '| --- | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}
