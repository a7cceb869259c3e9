/**
 * The child side of a benchmark server (see server-child.ts): answers the
 * parent's `{ start }` with `{ port }`, `{ stats: true }` with whatever
 * `stats()` reports, `{ stop: true }` by closing and exiting, and exits when
 * the parent goes away. A start that fails exits 1 with its error on stderr.
 */
export interface IpcServer<Spec, Stats> {
  start(spec: Spec): Promise<number>;
  stats(): Stats;
  close(): Promise<unknown>;
}

export function answerParent<Spec, Stats>(server: IpcServer<Spec, Stats>): void {
  const reply = (message: { port: number } | { stats: Stats }) => process.send?.(message);
  process.on('message', (message: { start?: Spec; stats?: true; stop?: true }) => {
    if (message.start !== undefined) {
      server.start(message.start).then(
        (port) => reply({ port }),
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
    } else if (message.stats === true) {
      reply({ stats: server.stats() });
    } else if (message.stop === true) {
      void server.close().then(() => process.exit(0));
    }
  });
  process.on('disconnect', () => process.exit(0));
}
