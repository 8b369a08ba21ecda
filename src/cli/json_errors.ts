/**
 * Errors as an NDJSON `error` line on stdout when `--json` was given (issue 18.8,
 * docs/small_ones.md): a machine reading stdout learns why there is no result. stderr keeps the
 * text. The line has the `error` fields of cli.md OUT-J2, null where no Attempt is concerned, plus
 * the hint and the further messages.
 */
import { isoTime, UsageError, VERSION } from "../_shared/mod.ts";
import type { Io } from "./io.ts";

/** Code of the `error` line of an internal error (a niceeval bug, exit 3). */
export const INTERNAL_ERROR_CODE = "internal-error";

/** The hint of an internal error, on stderr and in its `error` line. */
export function internalHint(): string {
  return `this is a niceeval bug (version ${VERSION}); please report it with the output above`;
}

/** Errors whose `error` line is already on stdout (before the receipt of `exp --json`). */
const reported = new WeakSet<object>();

/** True when `--json` appears among the flags (before a `--`). */
export function jsonRequested(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).includes("--json");
}

/** The `error` line of a usage, config or internal error. */
export function errorLine(error: unknown, at: number, hint: string): string {
  const usage = error instanceof UsageError ? error : null;
  const message = error instanceof Error ? error.message : String(error);
  return JSON.stringify({
    type: "error",
    at: isoTime(at),
    experimentId: null,
    evalId: null,
    ordinal: null,
    locator: null,
    code: usage?.code ?? INTERNAL_ERROR_CODE,
    phase: null,
    message,
    hint: usage?.hint ?? hint,
    details: usage?.extraLines ?? [],
  }) + "\n";
}

/** Writes the `error` line of `error` to stdout, once per error. */
export function writeErrorLine(io: Io, error: unknown, hint: string): void {
  if (typeof error === "object" && error !== null) {
    if (reported.has(error)) return;
    reported.add(error);
  }
  try {
    io.stdout.write(errorLine(error, io.clock.now(), hint));
  } catch {
    // stdout is unusable (the error may be about it): stderr already has the text.
  }
}
