/**
 * A module resolve hook (node:module `register`) that loads the workspace
 * packages' builds from a copy saved aside (`bench/s3-read-ab.ts --save-base`)
 * instead of `packages/<name>/dist`: a gateway process started with it runs
 * the earlier build, everything else (the app, node_modules) being the same.
 * The copy lives under node_modules/.cache, so its own bare imports still
 * resolve to this repository's node_modules.
 */
const root = new URL('../../', import.meta.url).href;
export const BASE_DIR = 'node_modules/.cache/mcpgw-bench/base/';

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (!result.url.startsWith(`${root}packages/`)) return result;
  const match = /^packages\/([^/]+)\/dist\/(.*)$/.exec(result.url.slice(root.length));
  if (match === null) return result;
  return { ...result, url: `${root}${BASE_DIR}${match[1]}/dist/${match[2]}` };
}
