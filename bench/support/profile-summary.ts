/**
 * Summarizes a V8 `.cpuprofile` (written by `node --cpu-prof`): self time by
 * function and by package, as shares of the samples, heaviest first.
 */
import { readFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/** Where a script belongs: a workspace package, an npm package, Node itself, or V8 (no URL). */
function packageOf(url: string): string {
  if (url === '') return '(v8/native)';
  if (url.startsWith('node:')) return 'node:internal';
  const npm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (npm?.[1] !== undefined) return npm[1];
  const workspace = /\/(apps|packages)\/([^/]+)\//.exec(url);
  return workspace === null ? url : `${workspace[1]}/${workspace[2]}`;
}

export async function summarizeProfile(path: string, top = 30): Promise<string> {
  const profile = JSON.parse(await readFile(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  for (const id of profile.samples) {
    const frame = byId.get(id)?.callFrame;
    if (frame === undefined) continue;
    const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(apps|packages|node_modules)\//, '$1/')}:${frame.lineNumber + 1}`;
    functions.set(name, (functions.get(name) ?? 0) + 1);
    const owner = packageOf(frame.url);
    packages.set(owner, (packages.get(owner) ?? 0) + 1);
  }
  const total = profile.samples.length;
  const table = (counts: Map<string, number>) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, count]) => `${((100 * count) / total).toFixed(1).padStart(5)} %  ${name}`)
      .join('\n');
  return `${total} samples\n-- by package --\n${table(packages)}\n-- by function --\n${table(functions)}`;
}
