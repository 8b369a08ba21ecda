/** The errors that end an unstarted slot's wait, and how each closes the slot (STOP-5). */
import { abortKind, type NotDispatchedReason } from "../_shared/mod.ts";
import { SetupFailedError } from "./lifecycle.ts";
import type { StopReason } from "./stops.ts";

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

/** The code and message of a slot that errors without dispatch, or null. */
export function undispatchedError(error: unknown): { code: string; message: string } | null {
  if (error instanceof SetupFailedError) {
    return { code: "experiment-setup-failed", message: error.message };
  }
  if (error instanceof JudgeFailed) {
    return { code: "judge-precheck-failed", message: error.message };
  }
  return null;
}

/** Why an unstarted slot closes `not-dispatched`, or undefined when `error` is a bug. */
export function notDispatchedReason(error: unknown): NotDispatchedReason | undefined {
  if (error instanceof StopAbort && error.reason !== "setup-failed") return error.reason;
  return abortKind(error) === "interrupt" ? "interrupted" : undefined;
}
