/**
 * In-process FIFO mutex per key (LEASE-2, LEASE-5). Flocks already exclude a second open file in
 * the same process; the mutex adds FIFO order and an immediate hand-over without polling. One
 * instance per Invocation, created by the composition root (no module-level state, STYLE.md §8).
 */
import { abortable } from "../_shared/mod.ts";

/** A FIFO mutex per key whose waits are abortable. */
export interface KeyedMutex {
  /** Waits for `key`; the returned permit frees it (idempotent). Rejects with `signal.reason`. */
  acquire(key: string, options: { signal: AbortSignal }): Promise<Disposable>;
  /** Whether `key` is currently held in this process. */
  isHeld(key: string): boolean;
}

interface Waiter {
  grant(): void;
}

/** Creates an empty {@link KeyedMutex}. */
export function createKeyedMutex(): KeyedMutex {
  const queues = new Map<string, Waiter[]>();

  function permitFor(key: string): Disposable {
    let freed = false;
    return {
      [Symbol.dispose]: () => {
        if (freed) return;
        freed = true;
        const queue = queues.get(key) ?? [];
        queue.shift();
        if (queue.length === 0) queues.delete(key);
        else queue[0]!.grant();
      },
    };
  }

  return {
    isHeld: (key) => queues.has(key),
    acquire(key, { signal }) {
      if (signal.aborted) return Promise.reject(signal.reason);
      const queue = queues.get(key);
      if (queue === undefined) {
        queues.set(key, [{ grant: () => {} }]);
        return Promise.resolve(permitFor(key));
      }
      return abortable<Disposable>(signal, (resolve) => {
        const waiter: Waiter = { grant: () => resolve(permitFor(key)) };
        queue.push(waiter);
        return () => {
          const index = queue.indexOf(waiter);
          if (index > 0) queue.splice(index, 1);
        };
      });
    },
  };
}
