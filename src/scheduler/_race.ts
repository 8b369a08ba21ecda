/** Settling a set of scheduler waiters together (the abort race lives in `_shared`). */

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
