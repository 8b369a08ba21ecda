/**
 * The ramp's command-line side: `<from>:<to>` values (`--ramp`, `ramp set`), and which ramp, if
 * any, an `exp` run uses (CAP-1, RAMP-1, RAMP-2).
 */
import { MAX_CONCURRENCY, UsageError } from "../_shared/mod.ts";
import { type ConfigDefinition, rampStepGiven } from "../config/mod.ts";
import { readRampControl } from "../coordination/mod.ts";
import { RAMP_WINDOW_MS } from "../scheduler/mod.ts";

/** A ramp's resolved settings and where they came from. */
export interface PlannedRamp {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly windowMs: number;
  readonly source: "flag" | "config";
  /** The reason of a hold in the control file at planning time (OUT-1), else null. */
  readonly held: string | null;
}

const RANGE_REGEXP = /^(\d+):(\d+)$/;

/**
 * Parses `<from>:<to>`: integers with 1 ≤ from ≤ to ≤ 1000 (RAMP-1).
 * @throws {UsageError} `ramp-invalid` naming `what` (RAMP-2).
 */
export function parseRampRange(text: string, what: string): { from: number; to: number } {
  const match = RANGE_REGEXP.exec(text.trim());
  const from = match ? Number(match[1]) : NaN;
  const to = match ? Number(match[2]) : NaN;
  if (!match || from < 1 || to < from || to > MAX_CONCURRENCY) {
    throw new UsageError(
      "ramp-invalid",
      `${what} must be <from>:<to> with 1 ≤ from ≤ to ≤ ${MAX_CONCURRENCY}, got "${text}"`,
      `for example ${what.split(" ")[0] === "--ramp" ? "--ramp 4:16" : "niceeval ramp set 4:16"}`,
    );
  }
  return { from, to };
}

/** The default step of a range (RAMP-1): max(1, ceil((to − from) / 5)). */
export function defaultRampStep(range: { from: number; to: number }): number {
  return Math.max(1, Math.ceil((range.to - range.from) / 5));
}

/**
 * The run's ramp (CAP-1 order): `--max-concurrency` disables any ramp (`disabled` is true when a
 * config ramp gave way, RAMP-2); `--ramp` wins over config `maxConcurrency` and keeps config
 * `step`/`windowMs`; config `ramp` applies unless `--no-ramp`. A hold already in the project's
 * control file is read for PLAN.
 */
export function resolveRamp(
  options: { readonly maxConcurrency?: number; readonly ramp?: { from: number; to: number } },
  config: ConfigDefinition,
  input: { readonly noRamp: boolean; readonly projectRoot: string },
): { ramp: PlannedRamp | null; disabled: boolean } {
  const configured = input.noRamp ? undefined : config.ramp;
  if (options.maxConcurrency !== undefined) {
    return { ramp: null, disabled: configured !== undefined };
  }
  let ramp: Omit<PlannedRamp, "held"> | null = null;
  if (options.ramp) {
    const range = options.ramp;
    ramp = {
      ...range,
      step: config.ramp && rampStepGiven(config.ramp) ? config.ramp.step : defaultRampStep(range),
      windowMs: config.ramp?.windowMs ?? RAMP_WINDOW_MS,
      source: "flag",
    };
  } else if (config.maxConcurrency === undefined && configured) {
    ramp = { ...configured, source: "config" };
  }
  if (ramp === null) return { ramp: null, disabled: false };
  const control = readRampControl(input.projectRoot);
  const held = "invalid" in control ? null : control.hold?.reason ?? null;
  return { ramp: { ...ramp, held }, disabled: false };
}
