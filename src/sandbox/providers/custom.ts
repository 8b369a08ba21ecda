/**
 * Providers made by `defineSandbox` (sandboxes.md rule 24): no artifacts, no detached cleanup;
 * scheduling `{ exclusive ? 1 : recommendedConcurrency, exclusive ? "exclusive" : "shared",
 * "custom:" + name }`; handles are used as returned, without a wrapper.
 */
import { canonicalJson, sha256Hex } from "../../_shared/mod.ts";
import type { CustomSandboxDefinition } from "../_layer_state.ts";
import type { SandboxProvider } from "../types.ts";

/** The provider of a `defineSandbox` layer. */
export function createCustomProvider(
  def: CustomSandboxDefinition,
): SandboxProvider<unknown, CustomSandboxDefinition> {
  const identity = sha256Hex(canonicalJson({
    provider: `custom:${def.name}`,
    create: sha256Hex(def.create.toString()),
  }));
  return {
    name: def.name,
    scheduling: Object.freeze({
      recommendedConcurrency: def.exclusive ? 1 : def.recommendedConcurrency,
      admission: def.exclusive ? "exclusive" : "shared",
      laneKey: `custom:${def.name}`,
    }),
    plan: () => Promise.resolve({ plan: def, identity, buildKeys: [] }),
    create: (plan, ctx) => plan.create(ctx),
    classifyCreateError: (error) => def.classifyCreateError?.(error) ?? "fatal",
  };
}
