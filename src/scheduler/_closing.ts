/** The errors that end an unstarted slot's wait, and how each closes the slot (STOP-5). */
import { abortKind, type NotDispatchedReason } from "../_shared/mod.ts";
import type { StopReason } from "./stops.ts";

/** Thrown to waiters when their experiment's setup failed. */
export class SetupFailedError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SetupFailedError";
  }
}

/** A stop condition that ended a wait. */
export class StopAbort extends Error {
  constructor(readonly reason: StopReason) {
    super(`stopped: ${reason}`);
    this.name = "StopAbort";
  }
}

/** The judge endpoint of a slot failed its precheck (STOP-7). */
export class JudgeFailed extends Error {
  constructor(readonly endpoint: string, detail: string) {
    super(`Judge precheck of "${endpoint}" failed: ${detail}`);
    this.name = "JudgeFailed";
  }
}

/** An image/template build a slot depends on could not be prepared (CHAIN-2, sandboxes.md 66). */
export class BuildFailed extends Error {
  constructor(
    readonly key: string,
    readonly code: BuildFailureCode,
    message: string,
    /** The build's own error text, without the build key prefix. */
    readonly detail: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "BuildFailed";
  }
}

/** The slot codes of a build that could not be prepared (sandboxes.md rule 66). */
export type BuildFailureCode =
  | "sandbox-build-failed"
  | "sandbox-build-timeout"
  | "sandbox-build-cancelled";

/** How a slot that errors without dispatch is reported. */
export interface UndispatchedError {
  readonly code: string;
  readonly phase: string;
  readonly message: string;
}

/** The code, phase and message of a slot that errors without dispatch, or null. */
export function undispatchedError(error: unknown): UndispatchedError | null {
  if (error instanceof SetupFailedError) {
    return { code: "experiment-setup-failed", phase: "experiment.setup", message: error.message };
  }
  if (error instanceof BuildFailed) {
    return { code: error.code, phase: "sandbox.build", message: error.message };
  }
  if (error instanceof JudgeFailed) {
    return { code: "judge-precheck-failed", phase: "judge.precheck", message: error.message };
  }
  return null;
}

/** Why an unstarted slot closes `not-dispatched`, or undefined when `error` is a bug. */
export function notDispatchedReason(error: unknown): NotDispatchedReason | undefined {
  if (error instanceof StopAbort && error.reason !== "setup-failed") return error.reason;
  return abortKind(error) === "interrupt" ? "interrupted" : undefined;
}
