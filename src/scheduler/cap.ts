/** Resolution of the global cap G and its source (CAP-1 … CAP-3). */

/** Where G came from. */
export type CapSource = "flag" | "config" | "provider-default" | "default";

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

/** Default G when only direct agents run. */
export const DIRECT_DEFAULT_CAP = 10;

/** Built-in provider defaults (CAP-2). */
export const PROVIDER_DEFAULTS: Readonly<Record<string, ProviderDefaults>> = {
  docker: { name: "docker", defaultConcurrency: 10, exclusive: false },
  e2b: { name: "e2b", defaultConcurrency: 20, exclusive: false },
  vercel: { name: "vercel", defaultConcurrency: 1, exclusive: false },
  local: { name: "local", defaultConcurrency: 1, exclusive: true },
};

/**
 * Resolves G: flag, else config, else the minimum provider default over `providers` (in slot
 * order; ties go to the first), else 10 for direct agents only.
 */
export function resolveGlobalCap(input: {
  readonly flag?: number;
  readonly config?: number;
  /** Providers of pairs with runnable slots (or of all pairs when nothing runs), in slot order. */
  readonly providers: readonly ProviderDefaults[];
}): ResolvedCap {
  if (input.flag !== undefined) return { cap: input.flag, source: "flag", provider: null };
  if (input.config !== undefined) return { cap: input.config, source: "config", provider: null };
  let best: ProviderDefaults | undefined;
  for (const p of input.providers) {
    const n = p.exclusive ? 1 : p.defaultConcurrency;
    if (best === undefined || n < (best.exclusive ? 1 : best.defaultConcurrency)) best = p;
  }
  if (best === undefined) return { cap: DIRECT_DEFAULT_CAP, source: "default", provider: null };
  return {
    cap: best.exclusive ? 1 : best.defaultConcurrency,
    source: "provider-default",
    provider: best.name,
  };
}

/** The PLAN annotation of a cap source (OUT-1). */
export function capAnnotation(cap: ResolvedCap): string {
  switch (cap.source) {
    case "flag":
      return "from flag";
    case "config":
      return "from config";
    case "provider-default":
      return `from ${cap.provider} default`;
    case "default":
      return "from default";
  }
}
