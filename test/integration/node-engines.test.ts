import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// `npm ci` on a supported Node prints no warnings: every installed package's `engines.node`
// admits the oldest release of each Node line the project supports (npm warns EBADENGINE
// otherwise), and every package with an install script has a decision in `allowScripts`
// (npm 11 warns about each one without). Read from the lockfile, which is what `npm ci` installs.

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const manifest = JSON.parse(readFileSync(root('package.json'), 'utf8')) as {
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(root('package-lock.json'), 'utf8')) as {
  packages: Record<
    string,
    { version?: string; engines?: unknown; hasInstallScript?: boolean; os?: string[]; cpu?: string[] }
  >;
};
const installed = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/'));

/** The lowest version of each major line the project's `engines.node` admits, e.g. 20.19.0 and 22.12.0. */
function supportedMinimums(range: string): string[] {
  return range.split('||').map((part) => semver.minVersion(part.trim())?.version ?? part);
}

describe('installing on the supported Node versions', () => {
  const minimums = supportedMinimums(manifest.engines.node);

  it('supports Node 20 and 22 (the machines run 20; the container image a newer LTS)', () => {
    expect(minimums.map((version) => semver.major(version))).toEqual([20, 22]);
  });

  it.each(minimums)('every installed package admits Node %s', (node) => {
    const refusing = installed.flatMap(([path, entry]) => {
      const engines = entry.engines as { node?: string } | undefined;
      // Packages for another OS or processor are never installed here (npm skips them without a warning).
      if (entry.os !== undefined && !entry.os.includes(process.platform)) return [];
      if (entry.cpu !== undefined && !entry.cpu.includes(process.arch)) return [];
      const wanted = engines?.node;
      return wanted === undefined || semver.satisfies(node, wanted) ? [] : [`${path}@${entry.version}: ${wanted}`];
    });
    expect(refusing).toEqual([]);
  });

  it('decides for every install script (allowScripts), so npm names none as unreviewed', () => {
    const withScripts = installed.filter(([, entry]) => entry.hasInstallScript === true).map(([path]) => path);
    const undecided = withScripts.filter((path) => {
      const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
      return manifest.allowScripts?.[name] === undefined;
    });
    expect(undecided).toEqual([]);
  });
});
