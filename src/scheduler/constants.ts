/**
 * Scheduling constants (scheduling.md §27). The upper bounds of user input (attempts, caps,
 * timers) live in `_shared/limits.ts`, where config and discovery can check them too
 * (docs/limits.md).
 */

/** Physical tries per send. */
export const SEND_MAX_TRIES = 4;
/** Retries per Attempt. */
export const ATTEMPT_MAX_RETRIES = 8;
/** Base of the send backoff (× 2^k × U[0,1)). */
export const SEND_BACKOFF_BASE_MS = 5000;
/** Upper bound of one backoff sleep. */
export const BACKOFF_CAP_MS = 60_000;
/** Consecutive same-code errored settlements that stop an eval. */
export const FAIL_FAST_STREAK = 2;
/** Settled Attempts with turns but no estimate before `budget-unenforceable`. */
export const BUDGET_UNENFORCEABLE_AFTER = 3;
/** Bound of each cleanup callback (teardown, sandbox hooks, orphan teardown). */
export const CLEANUP_TIMEOUT_MS = 30_000;
/** How long an aborted Attempt body may take to return before it is abandoned. */
export { ATTEMPT_ABORT_GRACE_MS } from "../_shared/mod.ts";
/** Bound of forced cleanup after a second interrupt. */
export const FORCE_CLEANUP_MS = 10_000;
/** Bound of one judge probe try (STOP-7). */
export const JUDGE_PROBE_TIMEOUT_MS = 20_000;
/** Tries per judge endpoint before the precheck fails it (STOP-7). */
export const JUDGE_PROBE_TRIES = 2;
/** Image/template builds at once unless `maxBuildConcurrency` says otherwise (sandboxes.md 63). */
export const DEFAULT_MAX_BUILD_CONCURRENCY = 2;
/** Bound of one image/template build (sandboxes.md rule 65). */
export const BUILD_TIMEOUT_MS = 30 * 60_000;
/** Default length of a ramp window (RAMP-1). */
export const RAMP_WINDOW_MS = 30_000;
/** Shortest ramp window a config or flag may ask for (RAMP-1). */
export const RAMP_MIN_WINDOW_MS = 1000;
/** Consecutive windows with pushback before the ramp steps down (RAMP-4 step 4). */
export const RAMP_PUSHBACK_WINDOWS = 2;
/** Whole windows after a step-down before a climb above its cap probes, one at a time. */
export const RAMP_PROBE_AFTER_WINDOWS = 3;
/** Share of a window the cap must be filled for the window to count as saturated (RAMP-5). */
export const RAMP_SATURATION_FRACTION = 0.9;
/** Least number of `network` retries that make a retry surge (RAMP-5: max(3, ceil(cap / 4))). */
export const RAMP_SURGE_MIN = 3;
/**
 * Settled Attempts of an experiment that, when all errored the same way, halt it as a systematic
 * error (the circuit breaker, docs/bail.md); `--no-bail` turns it off.
 */
export const BAIL_AFTER = 5;
