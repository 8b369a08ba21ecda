/** Resolution of the global cap G and its source (CAP-1 … CAP-3), and the LANE-4 warning. */
import type { RunEvent } from "../_shared/mod.ts";
import type { Plan } from "../plan/mod.ts";

/** Where G came from. */
export type CapSource =
  | "flag"
  | "ramp-flag"
  | "config"
  | "ramp-config"
  | "provider-default"
  | "default";

/** The resolved global cap. */
export interface ResolvedCap {
  readonly cap: number;
  readonly source: CapSource;
  /** Provider that supplied a provider default, else null. */
  readonly provider: string | null;
}

/** A provider as the cap resolution sees it. */
export interface ProviderDefaults {
  readonly name: string;
  /** Default concurrency (CAP-2). */
  readonly defaultConcurrency: number;
  readonly exclusive: boolean;
}

/** What a custom provider declares (`defineSandbox`, `sandboxes.md` §1.2). */
interface CustomProviderInfo {
  readonly name: string;
  readonly recommendedConcurrency?: number;
  readonly exclusive?: boolean;
}

/** Default concurrency of a custom provider without `recommendedConcurrency` (CAP-2). */
const CUSTOM_DEFAULT_CAP = 5;

/** Default G when only direct agents run. */
const DIRECT_DEFAULT_CAP = 10;

/** Built-in provider defaults (CAP-2). */
export const PROVIDER_DEFAULTS: Readonly<Record<string, ProviderDefaults>> = {
  docker: { name: "docker", defaultConcurrency: 10, exclusive: false },
  e2b: { name: "e2b", defaultConcurrency: 20, exclusive: false },
  vercel: { name: "vercel", defaultConcurrency: 1, exclusive: false },
  local: { name: "local", defaultConcurrency: 1, exclusive: true },
};

/** The "none" row of CAP-2: what a direct-agent pair counts as. */
const DIRECT_DEFAULTS: ProviderDefaults = {
  name: "none",
  defaultConcurrency: DIRECT_DEFAULT_CAP,
  exclusive: false,
};

/** One counted pair's row for CAP-3: a provider, or null for a direct agent. */
type CountedRow = ProviderDefaults | null;

/**
 * Resolves G: flag, else config, else the minimum default over the counted rows (in slot order;
 * ties go to the first), else 10 for direct agents only. Exclusive providers count only when every
 * row is one (they are serialized by their lane anyway); direct agents count as the "none" row.
 */
function resolveGlobalCap(input: {
  readonly flag?: number;
  readonly config?: number;
  /** Rows of pairs with runnable slots (or of all pairs when nothing runs), in slot order. */
  readonly rows: readonly CountedRow[];
}): ResolvedCap {
  if (input.flag !== undefined) return { cap: input.flag, source: "flag", provider: null };
  if (input.config !== undefined) return { cap: input.config, source: "config", provider: null };
  const allExclusive = input.rows.every((row) => row !== null && row.exclusive);
  let best: ProviderDefaults | undefined;
  for (const row of input.rows) {
    if (row !== null && row.exclusive && !allExclusive) continue;
    const p = row ?? DIRECT_DEFAULTS;
    if (best === undefined || capOfRow(p) < capOfRow(best)) best = p;
  }
  if (best === undefined || best === DIRECT_DEFAULTS) {
    return { cap: DIRECT_DEFAULT_CAP, source: "default", provider: null };
  }
  return { cap: capOfRow(best), source: "provider-default", provider: best.name };
}

/** A row's default: an exclusive provider always gives 1 (CAP-2). */
function capOfRow(p: ProviderDefaults): number {
  return p.exclusive ? 1 : p.defaultConcurrency;
}

/** The PLAN annotation of a cap source (OUT-1). */
export function capAnnotation(cap: ResolvedCap): string {
  switch (cap.source) {
    case "flag":
      return "from flag";
    case "config":
      return "from config";
    case "ramp-flag":
      return "ramp from flag";
    case "ramp-config":
      return "ramp from config";
    case "provider-default":
      return `from ${cap.provider} default`;
    case "default":
      return "from default";
  }
}

/** A custom provider's defaults: `recommendedConcurrency`, else 5; exclusive forces 1 (CAP-2). */
export function customProviderDefaults(info: CustomProviderInfo): ProviderDefaults {
  const exclusive = info.exclusive === true;
  return {
    name: info.name,
    defaultConcurrency: exclusive ? 1 : info.recommendedConcurrency ?? CUSTOM_DEFAULT_CAP,
    exclusive,
  };
}

/** Finds a provider's defaults by name; undefined for unknown names. */
export type ProviderLookup = (name: string) => ProviderDefaults | undefined;

function builtinLookup(name: string): ProviderDefaults | undefined {
  return PROVIDER_DEFAULTS[name];
}

/**
 * The rows that count for CAP-3, in slot order (first reached first), one per provider and one
 * (null) for direct agents: those of experiments with at least one runnable slot, or of every
 * selected experiment when nothing is runnable. Unknown names get the custom default.
 */
function planRows(plan: Plan, lookup: ProviderLookup = builtinLookup): CountedRow[] {
  const anyRunnable = plan.experiments.some((e) => e.runnable > 0);
  const seen = new Map<string | null, CountedRow>();
  for (const slot of plan.slots) {
    const experiment = plan.experiments[slot.experimentIndex]!;
    const name = experiment.provider;
    if (seen.has(name) || (anyRunnable && experiment.runnable === 0)) continue;
    seen.set(name, name === null ? null : lookup(name) ?? customProviderDefaults({ name }));
  }
  return [...seen.values()];
}

/**
 * Resolves a plan's cap: the flag, else the config, else the minimum default of its counted rows
 * (CAP-1 … CAP-3).
 */
export function resolvePlanCap(
  plan: Plan,
  options: { readonly flag?: number; readonly config?: number; readonly lookup?: ProviderLookup },
): ResolvedCap {
  return resolveGlobalCap({
    ...(options.flag !== undefined ? { flag: options.flag } : {}),
    ...(options.config !== undefined ? { config: options.config } : {}),
    rows: planRows(plan, options.lookup),
  });
}

/**
 * Warns `provider-exclusive-serial` once per exclusive lane key that a runnable slot uses, when the
 * cap (or a ramp's ceiling) `gmax` exceeds 1 (LANE-4). Lanes are reported in slot order.
 */
export function exclusiveSerialWarnings(
  plan: Plan,
  options: {
    readonly gmax: number;
    readonly at: number;
    readonly ramp?: boolean;
    /** Where G came from; a default is named in the user's words, not as a flag never passed. */
    readonly capSource?: CapSource;
  },
): RunEvent[] {
  const { gmax, at } = options;
  const cap = options.ramp
    ? `the ramp's ceiling ${gmax}`
    : options.capSource === "default" || options.capSource === "provider-default"
    ? `the concurrency limit ${gmax}`
    : options.capSource === "config"
    ? `maxConcurrency ${gmax} of the config`
    : `--max-concurrency ${gmax}`;
  if (gmax <= 1) return [];
  const lanes = new Map<string, string>();
  for (const slot of plan.slots) {
    const experiment = plan.experiments[slot.experimentIndex]!;
    if (slot.carry.action !== "run" || experiment.laneKey === null) continue;
    if (!lanes.has(experiment.laneKey)) {
      lanes.set(experiment.laneKey, experiment.provider ?? experiment.laneKey);
    }
  }
  return [...lanes].map(([laneKey, provider]): RunEvent => ({
    type: "diagnostic",
    at,
    level: "warning",
    code: "provider-exclusive-serial",
    message: `the "${provider}" provider runs attempts one at a time; ${cap} does not apply to it`,
    experimentId: null,
    evalId: null,
    data: { provider, laneKey, concurrency: gmax },
    persist: false,
  }));
}
