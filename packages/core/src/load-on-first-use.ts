import { createRequire } from 'node:module';

/**
 * A CommonJS dependency loaded the first time it is used instead of when the
 * importing module loads: a driver (Redis, S3, Postgres) that a deployment
 * does not use then costs it no memory and no start-up time (measured in
 * docs/operations.md, "Memory at start"). `require` is synchronous, so the
 * code that connects keeps its signatures. Resolved from `importerUrl` (the
 * caller's `import.meta.url`), as the caller's own `import` would be. Only
 * for packages whose `import` and `require` load the same module, so that a
 * test or a client that imports the package shares its classes: one CommonJS
 * file, or an ES module without top-level await (Node requires one
 * synchronously from 20.19 and 22.12 on, the same instance `import` gives).
 */
export function loadOnFirstUse<Module>(specifier: string, importerUrl: string): () => Module {
  let loaded: Module | undefined;
  return () => (loaded ??= createRequire(importerUrl)(specifier) as Module);
}
