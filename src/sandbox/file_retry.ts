/**
 * File-operation retry (sandboxes.md rule 33): up to 3 tries, delay `200 ms × 2^k × (0.5 + U)`,
 * only for transient transport errors. Not-found, permission, path, abort and retirement errors are
 * never retried. Delays run on the injected clock.
 */
import { type Clock, type Random, sleep } from "../_shared/mod.ts";
import { isSandboxError } from "./errors.ts";

/** Tries in total. */
const FILE_OP_TRIES = 3;
/** Base delay before the second try. */
const FILE_OP_BASE_DELAY_MS = 200;

const TRANSIENT_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ETIMEDOUT", "EAI_AGAIN"]);
const TRANSIENT_TEXT_REGEXP =
  /\b(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EAI_AGAIN)\b|fetch failed/;
const NEVER_NAMES = new Set(["AbortError", "TimeoutError", "NotFound", "PermissionDenied"]);

/** Options of {@link withFileRetry}. */
interface FileRetryOptions {
  readonly clock: Clock;
  readonly random: Random;
  readonly signal?: AbortSignal;
  /** Called before each delay with the next try number (2 or 3). */
  readonly onRetry?: (info: { nextTry: number; delayMs: number; error: unknown }) => void;
}

/** True for the transient transport errors of rule 33 (HTTP 429/5xx, socket errors, fetch). */
export function isTransientFileError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  if (isSandboxError(error)) return false;
  const e = error as { name?: unknown; code?: unknown; status?: unknown; statusCode?: unknown };
  if (typeof e.name === "string" && NEVER_NAMES.has(e.name)) return false;
  const status = typeof e.status === "number" ? e.status : e.statusCode;
  if (typeof status === "number") return status === 429 || (status >= 500 && status <= 599);
  if (typeof e.code === "string" && TRANSIENT_CODES.has(e.code)) return true;
  const message = (error as { message?: unknown }).message;
  if (typeof message === "string" && TRANSIENT_TEXT_REGEXP.test(message)) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isTransientFileError(cause);
}

/** Delay before try `k + 2`, for `k = 0, 1`. */
function fileRetryDelayMs(k: number, random: Random): number {
  return FILE_OP_BASE_DELAY_MS * 2 ** k * (0.5 + random.next());
}

/** Runs `op`, retrying transient transport errors (rule 33). */
export async function withFileRetry<T>(op: () => Promise<T>, o: FileRetryOptions): Promise<T> {
  for (let k = 0;; k++) {
    o.signal?.throwIfAborted();
    try {
      return await op();
    } catch (error) {
      if (k + 1 >= FILE_OP_TRIES || o.signal?.aborted || !isTransientFileError(error)) throw error;
      const delayMs = fileRetryDelayMs(k, o.random);
      o.onRetry?.({ nextTry: k + 2, delayMs, error });
      await sleep(o.clock, delayMs, o.signal ? { signal: o.signal } : {});
    }
  }
}
