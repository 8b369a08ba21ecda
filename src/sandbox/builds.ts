/**
 * Preparing one build key of a template through its provider (sandboxes.md §5.2): the scheduler's
 * build gate decides when and how many at once (CHAIN-2, rule 63); this hands each key to the
 * provider's `prepareArtifacts`. Providers without artifacts (rule 61) have nothing to prepare.
 */
import type { PhysicalLayer, PhysicalSandbox } from "./physical.ts";
import type { ProviderRegistry } from "./registry.ts";
import type { SandboxLayer } from "./types.ts";

/** What preparing a key did: the provider's answer, or `none` when it has no artifacts. */
type ArtifactSource = "cache" | "pulled" | "built" | "none";

/** Prepares `key` of the provider plan `plan` made from `template`; rejects when it cannot. */
async function prepareArtifact(
  registry: ProviderRegistry,
  o: {
    readonly template: SandboxLayer;
    readonly plan: unknown;
    readonly key: string;
    readonly signal: AbortSignal;
    /** Build progress lines; the live panel has no row for them (OUT-4). @default {ignored} */
    readonly progress?: (message: string) => void;
  },
): Promise<ArtifactSource> {
  const { provider } = await registry.forLayer(o.template);
  if (!provider.prepareArtifacts) return "none";
  const done = await provider.prepareArtifacts(o.plan, o.key, {
    signal: o.signal,
    progress: o.progress ?? (() => undefined),
  });
  return done.source;
}

/**
 * The scheduler's `builds.prepare` for `registry`: each key of a planned sandbox goes to the
 * provider of its template layer (the first one). Takes the physical sandbox with its layers, which
 * the plan's `PlannedSandbox` extends.
 */
export function artifactPreparer(
  registry: ProviderRegistry,
): (
  sandbox: PhysicalSandbox & { readonly layers: readonly PhysicalLayer[] },
  key: string,
  options: { readonly signal: AbortSignal },
) => Promise<ArtifactSource> {
  return (sandbox, key, { signal }) =>
    prepareArtifact(registry, {
      template: sandbox.layers[0]!.layer,
      plan: sandbox.physical,
      key,
      signal,
    });
}
