/** Send-retry backoff (RETRY-2): `max(retryAfterMs, base × 2^k × u)`, capped at 60 s. */
import { BACKOFF_CAP_MS, SEND_BACKOFF_BASE_MS } from "./constants.ts";

/** Delay before the k-th retry (k from 0) of a send, given a uniform `u` in [0, 1). */
export function sendBackoffMs(k: number, u: number, retryAfterMs = 0): number {
  return Math.min(BACKOFF_CAP_MS, Math.max(retryAfterMs, SEND_BACKOFF_BASE_MS * 2 ** k * u));
}
