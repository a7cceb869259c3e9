/**
 * The gateway of bench/listen-scale.ts in a child process of its own (run
 * with `--expose-gc`), driven over IPC, so that its memory is the gateway's
 * alone and never the clients':
 *
 *   { start: { env, namespace } }  starts the gateway from its build, its tenant events on
 *                        `<namespace>:events:<tenant>`; answers { port }
 *   { memory: true }     two full collections, then { memory: { heap, external, rss, streams } }
 *   { grant: {...} }     writes a grant through the control-plane store, as the admin API does; answers { done }
 *   { stop: true }       closes the gateway and exits
 *
 * The process exits when its parent goes away.
 */
import type * as BuiltGatewayModule from './built-gateway.js';
import type { BuiltGateway } from './built-gateway.js';

const { startBuiltGateway } = (await import(
  new URL('./built-gateway.ts', import.meta.url).href
)) as typeof BuiltGatewayModule;

export interface ListenScaleMemory {
  heapUsed: number;
  external: number;
  rss: number;
  /** Open listen streams, as the gateway counts them. */
  streams: number;
}

export type ListenScaleRequest =
  | { start: { env: Record<string, string>; namespace: string } }
  | { memory: true }
  | { grant: { tenantId: string; name: string; value: Record<string, unknown> } }
  | { stop: true };

export type ListenScaleAnswer = { port: number } | { memory: ListenScaleMemory } | { done: true } | { error: string };

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const admin = { actor: { kind: 'tenant-admin', subject: 'bench' }, clientAddress: '127.0.0.1' } as const;
let gateway: BuiltGateway | undefined;

const reply = (message: ListenScaleAnswer) => process.send?.(message);

process.on('message', (message: ListenScaleRequest) => {
  void handle(message).then(reply, (error: unknown) => reply({ error: String(error) }));
});
process.on('disconnect', () => process.exit(0));

async function handle(message: ListenScaleRequest): Promise<ListenScaleAnswer> {
  if ('start' in message) {
    gateway = await startBuiltGateway(message.start.env, { events: { namespace: message.start.namespace } });
    return { port: gateway.port };
  }
  if (gateway === undefined) throw new Error('not started');
  if ('memory' in message) {
    gc!();
    gc!();
    const { heapUsed, external, rss } = process.memoryUsage();
    return { memory: { heapUsed, external, rss, streams: gateway.app.listenStreams.count() } };
  }
  if ('grant' in message) {
    const { tenantId, name, value } = message.grant;
    await gateway.app.controlPlane!.store.putEntity(admin, tenantId, 'grant', name, value);
    return { done: true };
  }
  await gateway.close();
  process.exit(0);
}
