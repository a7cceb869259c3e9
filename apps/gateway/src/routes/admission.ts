import type { FastifyReply } from 'fastify';

/**
 * What one MCP request holds while it is admitted and served: its tenant's
 * runtime lease, its in-flight slot and the controller that cancels its
 * work, each taken as admission reaches it and freed once, when the
 * response's connection closes or earlier by `release()` (a listen stream
 * holds neither lease nor slot while it stays open).
 *
 * A class rather than closures over the admission function's locals, on
 * measurement: with a per-request closure over those locals stored on the
 * request's state, about 3.4 KB of every cached listing (Fastify's request
 * and reply, Node's HTTP objects) outlived two young-generation collections
 * and was promoted, to be freed only by a full one; the young generation
 * grew to its limit and each scavenge paused 8 to 10 ms on Node 26. Holding
 * the same things as fields of this object, whose only closure (the 'close'
 * listener) captures the admission and the response alone, promotes about
 * 0.2 KB per request (`bench/gc-hot-path.ts`). Why V8 kept the closure's
 * request alive is not established; that it did is measured both ways.
 */
export class Admission {
  /** The admission of the request `reply` answers, freed when its connection closes. */
  static of(reply: FastifyReply): Admission {
    const admission = new Admission();
    const response = reply.raw;
    response.once('close', () => admission.connectionClosed(response.writableFinished));
    return admission;
  }

  #lease: { release(): void } | undefined;
  #slot: (() => void) | undefined;
  #controller: AbortController | undefined;
  #closed = false;

  /** The client went away (or the response ended) before this point: nothing more is held or started. */
  get closed(): boolean {
    return this.#closed;
  }

  holdLease(lease: { release(): void }): void {
    this.#lease = lease;
    if (this.#closed) this.release();
  }

  /** The in-flight slot, and the controller whose signal the request's work observes. */
  holdSlot(leave: () => void, controller: AbortController): void {
    this.#slot = leave;
    this.#controller = controller;
    if (this.#closed) this.connectionClosed(false);
  }

  /** Frees the lease and the slot, each once however often it is called. */
  release(): void {
    const lease = this.#lease;
    const slot = this.#slot;
    this.#lease = undefined;
    this.#slot = undefined;
    lease?.release();
    slot?.();
  }

  /**
   * The response's connection closed: 'close' follows both a finished
   * response and a client gone away, and the latter cancels the request
   * (2026-07-28 basic/patterns/cancellation).
   */
  connectionClosed(responseFinished: boolean): void {
    this.#closed = true;
    this.release();
    if (this.#controller !== undefined && !responseFinished) this.#controller.abort(disconnected());
  }
}

/** Why a request was cancelled: its client closed the connection. */
function disconnected(): Error {
  return new Error('client disconnected');
}
