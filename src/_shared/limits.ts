/**
 * Upper bounds of numeric user input: flags, config, experiment and eval options
 * (docs/limits.md). They keep the plan small enough to build and every timer within what
 * `setTimeout` can hold; values above them are usage or definition errors, never clamped.
 */

/** Largest delay a timer holds: `setTimeout` fires at once for anything above 2^31 − 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** Most ordinals per (experiment, eval): `--attempts`, experiment `attempts`. */
export const MAX_ATTEMPTS = 1000;
/**
 * Largest concurrency cap: `--max-concurrency`, config and experiment `maxConcurrency`, the
 * config ramp's `from`/`to`/`step`, and config `maxSandboxes` per provider.
 */
export const MAX_CONCURRENCY = 1000;
/** Largest config `maxBuildConcurrency`. */
export const MAX_BUILD_CONCURRENCY = 64;
/** Largest budget in USD: `--budget`, experiment `budget`. */
export const MAX_BUDGET_USD = 1_000_000;
/** Largest price in USD per million tokens of a config `pricing` entry. */
export const MAX_PRICE_PER_MTOK = 1_000_000;
/** Fastest config `createsPerSecond`. */
export const MAX_CREATES_PER_SECOND = 1000;
/** Slowest config `createsPerSecond`: one create per 1000 s keeps the interval a valid timer. */
export const MIN_CREATES_PER_SECOND = 0.001;
