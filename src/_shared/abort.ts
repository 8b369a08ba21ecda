/** Typed abort reasons, so every layer can tell why a signal fired. */

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
