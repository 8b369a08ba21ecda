/** Small promise races used by the scheduler. */

/** Resolves like `promise`, or rejects with `signal.reason` as soon as the signal aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Starts every task and resolves when all have settled; rejects with the first failure after all
 * settled. Tasks here are lightweight waiters (CHAIN-0), not bounded work.
 */
export function settleAll(tasks: readonly (() => Promise<void>)[]): Promise<void> {
  return new Promise((resolve, reject) => {
    let left = tasks.length;
    let failure: { error: unknown } | undefined;
    if (left === 0) return resolve();
    const done = () => {
      if (--left > 0) return;
      if (failure) reject(failure.error);
      else resolve();
    };
    for (const task of tasks) {
      task().then(done, (error) => {
        failure ??= { error };
        done();
      });
    }
  });
}
