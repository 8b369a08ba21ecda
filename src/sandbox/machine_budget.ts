/**
 * Machine sandbox budgets (MSB): how many sandboxes of each provider this machine holds at once,
 * from the configured `maxSandboxes` and the host's CPU count.
 */
import { machineSlotLimits } from "../coordination/mod.ts";

/** A provider's machine sandbox budget. */
export interface MachineBudget {
  /** The provider's name. */
  readonly provider: string;
  /** Sandboxes of the provider this machine holds at once. */
  readonly limit: number;
}

/** A plan slot as {@link machineBudgetsBelow} reads it. */
export interface BudgetedSlot {
  /** Whether the slot runs or is carried. */
  readonly carry: { readonly action: string };
  /** The slot's sandbox; absent for direct agents. */
  readonly sandbox?: { readonly provider: string } | undefined;
}

/** Options of {@link machineBudgetsBelow}. */
interface MachineBudgetOptions {
  /** The configured budgets by provider (`maxSandboxes`). */
  readonly maxSandboxes: Readonly<Record<string, number>>;
  /** Logical CPUs of the host; `docker` defaults to twice as many (MSB-1). */
  readonly cpus: number;
  /** The global cap G. */
  readonly cap: number;
}

/**
 * Returns the providers of the slots that run in a sandbox whose machine budget is below the
 * global cap, in order of first use, for PLAN (MSB-7). Carried slots and unbudgeted providers
 * never appear.
 */
export function machineBudgetsBelow(
  slots: readonly BudgetedSlot[],
  options: MachineBudgetOptions,
): MachineBudget[] {
  const limits = machineSlotLimits(options.maxSandboxes, { cpus: options.cpus });
  const providers = new Set<string>();
  for (const slot of slots) {
    if (slot.carry.action === "run" && slot.sandbox) providers.add(slot.sandbox.provider);
  }
  return [...providers]
    .filter((provider) => limits[provider] !== undefined && limits[provider]! < options.cap)
    .map((provider) => ({ provider, limit: limits[provider]! }));
}
