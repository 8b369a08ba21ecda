/** Send failures that were proven rejected before the agent accepted them (authoring.md §7.7). */
import { hasErrorName } from "../_shared/mod.ts";
import { isPlainObject } from "../_shared/mod.ts";
import type { RejectionReason, ResolvedAgent } from "./types.ts";

/** How a rejected send may be retried. */
interface Rejection {
  readonly reason: RejectionReason;
  /** A server's Retry-After, honoured as the minimum delay before the retry. */
  readonly retryAfterMs?: number;
}

/** Options of {@link SendRejectedError}. */
export interface SendRejectedErrorOptions {
  reason: RejectionReason;
  retryAfterMs?: number;
  cause?: unknown;
}

const REASONS: readonly string[] = ["rate_limit", "network"];

/**
 * Thrown by an adapter when a send was rejected before the agent accepted it, so niceeval may
 * retry it with the same input.
 *
 * @example
 * ```ts
 * import { SendRejectedError } from "niceeval/adapter";
 * throw new SendRejectedError("HTTP 429", { reason: "rate_limit", retryAfterMs: 2000 });
 * ```
 */
export class SendRejectedError extends Error {
  /** `rate_limit` (e.g. an admission 429) or `network` (nothing reached the agent). */
  readonly reason: RejectionReason;
  /** Minimum delay before the retry, when the server said so; absent otherwise (`declare`d so
   * that no own property is created when it is absent). */
  declare readonly retryAfterMs?: number;

  /**
   * @param message What was rejected.
   * @param options The reason, an optional Retry-After in ms, and the original error as `cause`.
   * @throws {TypeError} When the reason is not `rate_limit` or `network`.
   * @throws {RangeError} When `retryAfterMs` is not a finite number ≥ 0.
   */
  constructor(message: string, options: SendRejectedErrorOptions) {
    super(message, "cause" in options ? { cause: options.cause } : undefined);
    if (!REASONS.includes(options.reason)) {
      throw new TypeError(
        `Cannot create SendRejectedError: reason must be "rate_limit" or "network", got ${
          JSON.stringify(options.reason) ?? String(options.reason)
        }`,
      );
    }
    const { retryAfterMs } = options;
    if (retryAfterMs !== undefined && !isDelay(retryAfterMs)) {
      throw new RangeError(
        `Cannot create SendRejectedError: retryAfterMs must be a finite number ≥ 0, got ${retryAfterMs}`,
      );
    }
    this.name = "SendRejectedError";
    this.reason = options.reason;
    if (retryAfterMs !== undefined) this.retryAfterMs = retryAfterMs;
  }
}

/**
 * Decides whether a send failure was rejected before acceptance. In order: a `SendRejectedError`
 * from any copy of the API (recognised by `name` and a valid `reason`); else the agent's
 * `classifySendFailure`, where a throw or an invalid return counts as "not rejected". The
 * experiment's `classifyFailure` and the abort rule are the caller's business.
 *
 * @param error What the send threw.
 * @param agent The agent whose send failed.
 * @returns The rejection, or `undefined` when the failure is terminal.
 */
export function classifyRejection(error: unknown, agent: ResolvedAgent): Rejection | undefined {
  if (hasErrorName(error, "SendRejectedError")) {
    const { reason, retryAfterMs } = error as { reason?: unknown; retryAfterMs?: unknown };
    if (typeof reason === "string" && REASONS.includes(reason)) {
      // A foreign copy's malformed retryAfterMs is dropped: the rejection itself is proven.
      return rejection(reason as RejectionReason, isDelay(retryAfterMs) ? retryAfterMs : undefined);
    }
  }
  if (typeof agent.classifySendFailure !== "function") return undefined;
  let result: unknown;
  try {
    result = agent.classifySendFailure(error);
  } catch {
    // Documented: a classifier that throws classifies nothing; the original error stays terminal.
    return undefined;
  }
  return checkClassification(result);
}

function checkClassification(result: unknown): Rejection | undefined {
  if (typeof (result as { then?: unknown } | null)?.then === "function") {
    // An async classifier is invalid. Its rejection must not surface as unhandled; the send's
    // own error is what gets reported.
    Promise.resolve(result).catch(() => undefined);
    return undefined;
  }
  if (!isPlainObject(result)) return undefined;
  const { reason, retryAfterMs } = result;
  if (typeof reason !== "string" || !REASONS.includes(reason)) return undefined;
  if (retryAfterMs !== undefined && !isDelay(retryAfterMs)) return undefined;
  return rejection(reason as RejectionReason, retryAfterMs);
}

function rejection(reason: RejectionReason, retryAfterMs: number | undefined): Rejection {
  return Object.freeze(retryAfterMs === undefined ? { reason } : { reason, retryAfterMs });
}

function isDelay(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}
