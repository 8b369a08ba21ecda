/** `defineConfig` (authoring.md §6.3): validated, frozen project configuration. */
import { brand } from "../_shared/mod.ts";
import { DefinitionError } from "../_shared/mod.ts";
import { isPlainObject } from "../_shared/mod.ts";
import { check, checkOptions } from "../_shared/mod.ts";
import {
  MAX_BUILD_CONCURRENCY,
  MAX_CONCURRENCY,
  MAX_CREATES_PER_SECOND,
  MAX_PRICE_PER_MTOK,
  MAX_TIMER_MS,
  MIN_CREATES_PER_SECOND,
} from "../_shared/mod.ts";

/** A price entry, USD per million tokens. */
export interface PriceOptions {
  inputPerMTok: number;
  outputPerMTok: number;
  cacheReadPerMTok?: number;
  cacheWritePerMTok?: number;
}

/** Adaptive concurrency range (scheduling.md RAMP-1). */
export interface RampOptions {
  from: number;
  to: number;
  step?: number;
  windowMs?: number;
}

/** What `defineConfig` accepts. */
export interface ConfigOptions {
  /** Global cap G; default: the provider default. */
  maxConcurrency?: number;
  /** Fallback per-Attempt timeout in milliseconds; default unlimited. */
  timeoutMs?: number;
  /** Price table keyed by exact model name or `<prefix>/*`. */
  pricing?: Record<string, PriceOptions>;
  /** Adaptive global cap; exclusive with `maxConcurrency`. */
  ramp?: RampOptions;
  /** Machine-wide sandbox budget per provider. */
  maxSandboxes?: Record<string, number>;
  /** Concurrent sandbox image builds; default 2. */
  maxBuildConcurrency?: number;
  /** Sandbox create pacing per provider, creates per second. */
  createsPerSecond?: Record<string, number>;
}

/** The validated configuration. */
export interface ConfigDefinition {
  readonly maxConcurrency?: number;
  readonly timeoutMs?: number;
  readonly pricing: Readonly<Record<string, Readonly<PriceOptions>>>;
  readonly ramp?: Readonly<Required<RampOptions>>;
  readonly maxSandboxes: Readonly<Record<string, number>>;
  readonly maxBuildConcurrency: number;
  readonly createsPerSecond: Readonly<Record<string, number>>;
}

const WHAT = "defineConfig";
const OPTIONS = {
  known: [
    "maxConcurrency",
    "timeoutMs",
    "pricing",
    "ramp",
    "maxSandboxes",
    "maxBuildConcurrency",
    "createsPerSecond",
  ],
  later: ["reporters", "judge", "name", "workspace", "telemetry", "report", "theme"],
  // Keys niceeval computes on definitions are reserved on every define* call (authoring.md §2.4).
  reserved: ["id", "evaluationKind", "configHash"],
};
const PRICE_OPTIONS = {
  known: ["inputPerMTok", "outputPerMTok", "cacheReadPerMTok", "cacheWritePerMTok"],
  required: ["inputPerMTok", "outputPerMTok"],
};
// An exact model name (no `*`), or `<prefix>/*` with a non-empty prefix (rule 6.3.3).
const PRICING_KEY_REGEXP = /^(?:[^*]+|[^*]+\/\*)$/;
const RAMP_OPTIONS = { known: ["from", "to", "step", "windowMs"], required: ["from", "to"] };

/**
 * Defines the project configuration in `niceeval.config.ts`.
 *
 * @param def The configuration options.
 * @returns The validated, frozen configuration.
 * @throws {DefinitionError} When an option is unknown or invalid.
 * @example
 * ```ts
 * import { defineConfig } from "niceeval";
 * export default defineConfig({ maxConcurrency: 4, timeoutMs: 60_000 });
 * ```
 */
export function defineConfig(def: ConfigOptions): ConfigDefinition {
  const o = checkOptions(def, OPTIONS, WHAT);
  if (o.maxConcurrency !== undefined && o.ramp !== undefined) {
    throw new DefinitionError(
      "definition.invalid-value",
      "ramp",
      `ramp cannot be combined with maxConcurrency`,
    );
  }
  const out: Record<string, unknown> = {
    pricing: pricingOf(o.pricing),
    maxSandboxes: positiveRecord(o.maxSandboxes, "maxSandboxes", true),
    maxBuildConcurrency: o.maxBuildConcurrency === undefined ? 2 : check.positiveInteger(
      o.maxBuildConcurrency,
      "maxBuildConcurrency",
      WHAT,
      MAX_BUILD_CONCURRENCY,
    ),
    createsPerSecond: positiveRecord(o.createsPerSecond, "createsPerSecond", false),
  };
  if (o.maxConcurrency !== undefined) {
    out.maxConcurrency = check.positiveInteger(
      o.maxConcurrency,
      "maxConcurrency",
      WHAT,
      MAX_CONCURRENCY,
    );
  }
  if (o.timeoutMs !== undefined) {
    out.timeoutMs = check.positiveInteger(o.timeoutMs, "timeoutMs", WHAT, MAX_TIMER_MS);
  }
  if (o.ramp !== undefined) out.ramp = rampOf(o.ramp, "ramp");
  return Object.freeze(brand(out, "config")) as unknown as ConfigDefinition;
}

/** Ramps whose `step` was given rather than defaulted (see {@link rampStepGiven}). */
const STEP_GIVEN = new WeakSet<object>();

/**
 * True when the ramp's `step` was written in the config: `--ramp <from>:<to>` keeps it, and
 * otherwise derives the default from its own range (RAMP-1).
 */
export function rampStepGiven(ramp: Readonly<Required<RampOptions>>): boolean {
  return STEP_GIVEN.has(ramp);
}

/** Validates ramp options and applies the defaults of RAMP-1. */
export function rampOf(value: unknown, path: string): Readonly<Required<RampOptions>> {
  const r = checkOptions(value, RAMP_OPTIONS, WHAT, path);
  const from = check.positiveInteger(r.from, `${path}.from`, WHAT, MAX_CONCURRENCY);
  const to = check.positiveInteger(r.to, `${path}.to`, WHAT, MAX_CONCURRENCY);
  if (to < from) {
    throw new DefinitionError(
      "definition.invalid-value",
      `${path}.to`,
      `${path}.to must be ≥ ${path}.from, got ${to} < ${from}`,
    );
  }
  const step = r.step === undefined
    ? Math.max(1, Math.ceil((to - from) / 5))
    : check.positiveInteger(r.step, `${path}.step`, WHAT, MAX_CONCURRENCY);
  const windowMs = r.windowMs === undefined
    ? 30_000
    : check.positiveInteger(r.windowMs, `${path}.windowMs`, WHAT, MAX_TIMER_MS);
  if (windowMs < 1000) {
    throw new DefinitionError(
      "definition.invalid-value",
      `${path}.windowMs`,
      `${path}.windowMs must be ≥ 1000, got ${windowMs}`,
    );
  }
  const ramp = Object.freeze({ from, to, step, windowMs });
  if (r.step !== undefined) STEP_GIVEN.add(ramp);
  return ramp;
}

function pricingOf(value: unknown): Readonly<Record<string, Readonly<PriceOptions>>> {
  if (value === undefined) return Object.freeze({});
  if (!isPlainObject(value)) {
    throw new DefinitionError("definition.invalid-value", "pricing", `pricing must be an object`);
  }
  const out: Record<string, Readonly<PriceOptions>> = {};
  for (const [model, entry] of Object.entries(value)) {
    const path = `pricing['${model}']`;
    if (!PRICING_KEY_REGEXP.test(model)) {
      throw new DefinitionError(
        "definition.invalid-value",
        path,
        `pricing key ${JSON.stringify(model)} must be an exact model name or a pattern <prefix>/*`,
      );
    }
    const p = checkOptions(entry, PRICE_OPTIONS, WHAT, path);
    const price: Record<string, number> = {};
    for (const key of PRICE_OPTIONS.known) {
      if (p[key] !== undefined) {
        price[key] = check.nonNegativeNumber(p[key], `${path}.${key}`, WHAT, MAX_PRICE_PER_MTOK);
      }
    }
    out[model] = Object.freeze(price) as unknown as PriceOptions;
  }
  return Object.freeze(out);
}

function positiveRecord(
  value: unknown,
  path: string,
  integer: boolean,
): Readonly<Record<string, number>> {
  if (value === undefined) return Object.freeze({});
  if (!isPlainObject(value)) {
    throw new DefinitionError("definition.invalid-value", path, `${path} must be an object`);
  }
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(value)) {
    // Integer records are sandbox counts; the others are create rates, whose interval
    // (1000 / rate ms) must stay a valid timer.
    out[key] = integer
      ? check.positiveInteger(n, `${path}.${key}`, WHAT, MAX_CONCURRENCY)
      : check.positiveNumber(n, `${path}.${key}`, WHAT, {
        min: MIN_CREATES_PER_SECOND,
        max: MAX_CREATES_PER_SECOND,
      });
  }
  return Object.freeze(out);
}
