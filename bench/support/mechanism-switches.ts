/**
 * Turns performance mechanisms of the gateway's build off, for the A/B runs of
 * bench/hot-path.ts (`--mechanisms`): loaded into the gateway process with
 * `node --import bench/support/mechanism-switches.ts apps/gateway/dist/main.js`
 * (Node 23.5+ strips the types and has `registerHooks`), it rewrites, as each
 * built module loads, the one expression that enables each mechanism named in
 * the process's MECHANISMS_OFF (comma-separated). Nothing in the gateway's own
 * code or configuration knows of it; a pattern that is no longer in the build
 * stops the process at start, so a mechanism that changed is never measured
 * as "off" while still on.
 */
import * as nodeModule from 'node:module';

interface Loaded {
  source?: unknown;
  format?: string;
}
// Node 23.5+; the repository's @types/node is the oldest supported Node's, which lacks it.
const { registerHooks } = nodeModule as unknown as {
  registerHooks(hooks: {
    load(url: string, context: object, nextLoad: (url: string, context: object) => Loaded): Loaded;
  }): void;
};

interface Switch {
  /** The built file, as the end of its URL. */
  file: string;
  /** What enables the mechanism there, and what it becomes when it is off. */
  on: string;
  off: string;
}

/** Each mechanism by name: what turning it off means in the build. */
export const MECHANISM_SWITCHES: Record<string, Switch> = {
  // A first page's cursor sealed afresh (AES-GCM) per request instead of handed out again for a minute.
  'cursor-reuse': {
    file: '/apps/gateway/dist/plugins/gateway-settings.js',
    on: 'reuseSealedCursors(createCursorCodec({ key: keys.cursor }))',
    off: 'createCursorCodec({ key: keys.cursor })',
  },
  // A caller's caching view of the catalog built per request instead of kept per verified scope.
  'view-reuse': {
    file: '/packages/cache/dist/caching-resource-service.js',
    on: 'let view = views.get(scope);',
    off: 'let view = undefined;',
  },
};

const wanted = (process.env.MECHANISMS_OFF ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name !== '');
for (const name of wanted) {
  if (MECHANISM_SWITCHES[name] === undefined) throw new Error(`MECHANISMS_OFF: unknown mechanism "${name}"`);
}
const active = wanted.map((name) => ({ name, ...MECHANISM_SWITCHES[name]! }));

if (active.length > 0) {
  registerHooks({
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context);
      const mine = active.filter((entry) => url.endsWith(entry.file));
      if (mine.length === 0) return loaded;
      let source = String(loaded.source);
      for (const entry of mine) {
        if (!source.includes(entry.on)) throw new Error(`mechanism "${entry.name}": "${entry.on}" is not in ${url}`);
        source = source.replace(entry.on, entry.off);
      }
      return { ...loaded, source };
    },
  });
}
