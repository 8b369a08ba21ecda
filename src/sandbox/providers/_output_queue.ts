/** The per-handle queue of live-output callbacks shared by the providers' handles. */
import type { OutputChunk } from "../types.ts";

/**
 * Serializes a handle's output callbacks (rule 16): each chunk is delivered after the previous
 * callback settled, in order; a callback that throws does not stop the queue (the facade reports
 * it).
 */
export class OutputQueue {
  #tail: Promise<void> = Promise.resolve();

  /** `fn` wrapped so that its calls run one at a time, in call order. */
  wrap(fn: (chunk: OutputChunk) => void | Promise<void>): (chunk: OutputChunk) => Promise<void> {
    return (chunk) => {
      const next = this.#tail.then(() => fn(chunk)).catch(() => undefined);
      this.#tail = next;
      return next;
    };
  }
}
