/** Typed abort reasons, so every layer can tell why a signal fired. */

/**
 * How long aborted per-Attempt work may take to return before it is abandoned (scheduling.md
 * TIME-3, INT-1): the scheduler stops waiting then, and the runner tears the sandbox down.
 */
export const ATTEMPT_ABORT_GRACE_MS = 10_000;

/** Why an Attempt's or the run's signal aborted. */
export type AbortKind = "timeout" | "interrupt" | "early-exit" | "test-settled" | "force";

/** The `signal.reason` niceeval uses; `name` is `AbortError` like the platform's aborts. */
export class AbortReason extends Error {
  /** Why the signal aborted. */
  readonly kind: AbortKind;

  constructor(kind: AbortKind, options?: ErrorOptions) {
    super(`aborted: ${kind}`, options);
    this.name = "AbortError";
    this.kind = kind;
  }
}

/** The kind of a `signal.reason`, or undefined when it is not a niceeval abort. */
export function abortKind(reason: unknown): AbortKind | undefined {
  return reason instanceof AbortReason ? reason.kind : undefined;
}

/**
 * A promise that settles through `executor` unless `signal` aborts first, in which case the
 * executor's cancel function runs and the promise rejects with `signal.reason` at once. The abort
 * listener is removed as soon as the promise settles either way, so a wait leaves nothing behind
 * on a long-lived signal. A signal that already aborted rejects without calling `executor`.
 *
 * @param signal The signal that ends the wait; none makes this a plain promise.
 * @param executor Starts the wait; returns what undoes it on abort (for example, leaving a queue).
 * @returns The executor's value.
 * @throws `signal.reason` when the signal aborts first; what the executor rejects with.
 */
export function abortable<T>(
  signal: AbortSignal | undefined,
  executor: (resolve: (value: T) => void, reject: (error: unknown) => void) => (() => void) | void,
): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let aborted = false;
    let cancel: (() => void) | void = undefined;
    const onAbort = () => {
      if (settled) return;
      settled = aborted = true;
      cancel?.();
      reject(signal?.reason);
    };
    const settle = <A>(done: (arg: A) => void) => (arg: A) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      done(arg);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      cancel = executor(settle(resolve), settle(reject));
    } catch (error) {
      settle(reject)(error);
    }
    // An abort from inside the executor came before its cancel function existed.
    if (aborted) cancel?.();
  });
}

/**
 * Settles like `promise`, or rejects with `signal.reason` as soon as `signal` aborts; the abort
 * listener is removed once either happened.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * const value = await raceAbort(Promise.resolve(1), controller.signal);
 * ```
 */
export function raceAbort<T>(promise: PromiseLike<T>, signal: AbortSignal | undefined): Promise<T> {
  return abortable<T>(signal, (resolve, reject) => void promise.then(resolve, reject));
}

/**
 * Calls `listener` once when `signal` aborts, like `addEventListener("abort", …, { once: true })`:
 * a signal that already aborted never calls it. Disposing removes the listener; it is safe to
 * dispose twice. For relays whose reaction is the mechanism itself (abort another controller,
 * kill a process group); a wait uses {@link raceAbort} or {@link abortable}.
 */
export function onAbort(signal: AbortSignal | undefined, listener: () => void): Disposable {
  signal?.addEventListener("abort", listener, { once: true });
  return { [Symbol.dispose]: () => signal?.removeEventListener("abort", listener) };
}
