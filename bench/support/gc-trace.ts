/**
 * Reads V8's `--trace-gc-nvp` lines: `name=value` pairs up to Node 22, a JSON
 * object after `GC: ` from Node 24 on (V8 13), where the collector is
 * `"gc":"s"` and the sizes carry the same names. Per request: bytes
 * allocated in the young generation and promoted out of it; per second of
 * load: the collectors' pauses.
 */
import { readFile } from 'node:fs/promises';

export interface GcFigures {
  scavenges: number;
  fullCollections: number;
  allocatedPerRequest: number;
  promotedPerRequest: number;
  pauseMsPerSecond: number;
}

/** A field of one trace line, as text; undefined when the line has none. */
function field(line: string, name: string): string | undefined {
  return (
    new RegExp(`\\b${name}=([0-9a-z.]+)`).exec(line)?.[1] ?? new RegExp(`"${name}":"?([0-9a-z.]+)`).exec(line)?.[1]
  );
}

export function summarizeGcTrace(lines: readonly string[], requests: number, seconds: number): GcFigures {
  // `s`: the scavenger; `mms`: the minor mark-sweep collector (`--minor-ms`).
  const scavenges = lines.filter((line) => ['s', 'mms'].includes(field(line, 'gc') ?? ''));
  const full = lines.filter((line) => ['mc', 'ms'].includes(field(line, 'gc') ?? ''));
  const sum = (of: string[], key: string) => of.reduce((total, line) => total + Number(field(line, key) ?? 0), 0);
  return {
    scavenges: scavenges.length,
    fullCollections: full.length,
    allocatedPerRequest: sum(scavenges, 'allocated') / requests,
    promotedPerRequest: sum(scavenges, 'promoted') / requests,
    pauseMsPerSecond: (sum(scavenges, 'pause') + sum(full, 'pause')) / seconds,
  };
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/**
 * From a profile of bench/support/survivor-sampler.ts: the bytes sampled per
 * allocating function (the top frame), largest first, as printable lines.
 */
export async function survivorSites(file: string, requests: number, what = 'survivors'): Promise<string[]> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as { head: ProfileNode };
  const bySite = new Map<string, number>();
  const walk = (node: ProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    const site = `${functionName || '(anonymous)'} ${url.replace(/^.*?\/(node_modules|packages|apps)\//, '$1/')}:${lineNumber + 1}`;
    if (node.selfSize > 0) bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    node.children.forEach(walk);
  };
  walk(profile.head);
  const total = [...bySite.values()].reduce((a, b) => a + b, 0);
  return [
    `sampled ${what}: ${(total / requests).toFixed(0)} bytes per request`,
    ...[...bySite]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)
      .map(([site, bytes]) => `${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${site}`),
  ];
}
