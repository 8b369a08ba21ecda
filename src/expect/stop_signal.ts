/**
 * The private stop signal of `orStop()` (authoring.md §3.5 rule 3). It is recognised by a
 * registry-symbol brand, so a signal thrown through another copy of the API still counts as a
 * normal end of the test body.
 */

/** Registry key of the stop-signal brand. */
const STOP_KEY: unique symbol = Symbol.for("niceeval.stop") as never;

/** Creates the signal that ends the code path awaiting a failed `orStop()`. */
export function createStopSignal(criterion: string, outcome: string): Error {
  const signal = new Error(`Stopped: ${criterion} was ${outcome}`);
  signal.name = "StopSignal";
  Object.defineProperty(signal, STOP_KEY, { value: true, enumerable: false });
  return signal;
}

/** True when `error` is an `orStop()` stop signal from any copy of the API. */
export function isStopSignal(error: unknown): boolean {
  return typeof error === "object" && error !== null &&
    (error as Record<symbol, unknown>)[STOP_KEY] === true;
}
