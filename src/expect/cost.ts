/**
 * Cost estimates from the config price table (authoring.md §6.3 rule 3, §6.5). A provider's
 * `usage.costUSD` is never read here: estimates, budgets and `maxCost` use prices only.
 */
import type { TurnRecord, Usage } from "../agents/mod.ts";
import type { PriceEntry, PricingTable } from "./types.ts";

/**
 * Finds the price of `model`: the exact key, else the longest matching `<prefix>/*` pattern,
 * else none.
 */
export function lookupPrice(
  model: string | undefined,
  pricing: PricingTable,
): PriceEntry | undefined {
  if (model === undefined) return undefined;
  if (Object.hasOwn(pricing, model)) return pricing[model];
  let best: { prefix: string; entry: PriceEntry } | undefined;
  for (const [key, entry] of Object.entries(pricing)) {
    if (!key.endsWith("/*")) continue;
    const prefix = key.slice(0, -1); // keeps the trailing "/"
    if (model.startsWith(prefix) && (best === undefined || prefix.length > best.prefix.length)) {
      best = { prefix, entry };
    }
  }
  return best?.entry;
}

/**
 * Estimates one turn's cost in USD, or `undefined` without a price entry or without both
 * `inputTokens` and `outputTokens`.
 */
export function estimateTurnCost(
  usage: Usage | undefined,
  model: string | undefined,
  pricing: PricingTable,
): number | undefined {
  const price = lookupPrice(model, pricing);
  if (price === undefined || usage === undefined) return undefined;
  const { inputTokens, outputTokens } = usage;
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const cacheRead = usage.cacheReadTokens ?? 0;
  const cacheCreation = usage.cacheCreationTokens ?? 0;
  const fresh = inputTokens - cacheRead - cacheCreation;
  return (fresh * price.inputPerMTok +
    cacheRead * (price.cacheReadPerMTok ?? price.inputPerMTok) +
    cacheCreation * (price.cacheWritePerMTok ?? price.inputPerMTok) +
    outputTokens * price.outputPerMTok) / 1e6;
}

/** An estimate over several turns. */
interface CostEstimate {
  /** Sum over the turns that have an estimate; `undefined` when none has one. */
  readonly usd: number | undefined;
  /** False when any turn has no estimate. */
  readonly complete: boolean;
}

/** Sums the turn estimates of an Attempt (or any scope of turns). */
export function estimateCost(
  turns: readonly Pick<TurnRecord, "usage">[],
  model: string | undefined,
  pricing: PricingTable,
): CostEstimate {
  let usd: number | undefined;
  let complete = true;
  for (const turn of turns) {
    const cost = estimateTurnCost(turn.usage, model, pricing);
    if (cost === undefined) complete = false;
    else usd = (usd ?? 0) + cost;
  }
  return { usd, complete };
}
