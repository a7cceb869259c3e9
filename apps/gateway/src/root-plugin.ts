import type { FastifyInstance } from 'fastify';

/**
 * A Fastify plugin whose hooks, decorators and handlers apply to the
 * instance that registers it, not to a child context: what `fastify-plugin`
 * does, by the same documented symbol (Fastify "Plugins", encapsulation and
 * `skip-override`), without the dependency for three plugins.
 */
export function rootPlugin<Options extends object = Record<never, never>>(
  plugin: (app: FastifyInstance, options: Options) => Promise<void>,
): (app: FastifyInstance, options: Options) => Promise<void> {
  return Object.assign(plugin, { [Symbol.for('skip-override')]: true });
}
