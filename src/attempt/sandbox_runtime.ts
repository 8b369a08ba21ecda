/**
 * What the sandbox Attempts of one Invocation share (sandboxes.md §3, §6): providers from the
 * registry, the owner stamp of this process, the reuse and Eval-group pools of each Run, and
 * their stop at the Experiment's end (rule 90, LIFE-6 step 1).
 */
import { type Clock, errorMessage, type Random } from "../_shared/mod.ts";
import type { PlannedSandbox, PlannedSlot } from "../plan/mod.ts";
import {
  type CleanupDiagnostic,
  createInstanceFactory,
  type InstanceAdmission,
  type OwnerIdentity,
  type OwnerStamp,
  Pool,
  type ProviderRegistry,
  requestedLifetimeMs,
  type SandboxProvider,
} from "../sandbox/mod.ts";

/** Options of {@link SandboxRuntime}. */
interface SandboxRuntimeOptions {
  /** Providers with the host environment (creates happen through it). */
  readonly registry: ProviderRegistry;
  /** This process, read once at startup (sandboxes.md rule 92). */
  readonly owner: OwnerIdentity;
  /** The Run id of each Experiment, by selection index. */
  readonly runIds: readonly string[];
  readonly clock: Clock;
  readonly random: Random;
  /** Aborts on the second interrupt: stacks then run provider stop and slot release only. */
  readonly force?: AbortSignal;
  /** Directory of the project, for relative host paths of hooks whose file is unknown. */
  readonly projectRoot: string;
}

interface RunPool {
  readonly experimentId: string;
  readonly pool: Pool;
  /** The group's machine slot, held across replacements (MSB-3). */
  groupSlot: { release: () => void | Promise<void> } | undefined;
}

/** The sandbox side of one Invocation. */
export class SandboxRuntime {
  readonly #o: SandboxRuntimeOptions;
  readonly #pools = new Map<string, RunPool>();

  constructor(options: SandboxRuntimeOptions) {
    this.#o = options;
  }

  /** The options this runtime was built with. */
  get options(): SandboxRuntimeOptions {
    return this.#o;
  }

  /** The provider of a pair's template layer. */
  async provider(sandbox: PlannedSandbox): Promise<SandboxProvider> {
    return (await this.#o.registry.forLayer(sandbox.layers[0]!.layer)).provider;
  }

  /** The owner stamp of an Experiment's sandboxes, without its provision token. */
  owner(experimentIndex: number): Omit<OwnerStamp, "provisionToken"> {
    const { host, pid, processStart } = this.#o.owner;
    return { host, pid, processStart, runId: this.#o.runIds[experimentIndex] ?? "unknown" };
  }

  /** The requested lifetime of a slot's sandbox (rule 48). */
  lifetimeMs(slot: PlannedSlot, provider: string): number {
    return requestedLifetimeMs(provider, {
      lifetimeMs: slot.sandbox?.lifetimeMs ?? undefined,
      timeoutMs: slot.timeoutMs ?? undefined,
    });
  }

  /**
   * The pool of a pooled or group slot, created on first use with `capacity` (REUSE-1). New
   * instances take their machine slot and pacing through the admission of the Attempt that needs
   * one; for a group, `admission` keeps the slot of its first instance for its replacements
   * (MSB-3) and releases it when the pool stops.
   */
  async pool(
    slot: PlannedSlot,
    o: { capacity: number },
  ): Promise<{ pool: Pool; admission: (a: InstanceAdmission) => InstanceAdmission }> {
    const sandbox = slot.sandbox!;
    const key = `${slot.experimentIndex}\u0000${sandbox.poolKey}`;
    let entry = this.#pools.get(key);
    if (!entry) {
      const provider = await this.provider(sandbox);
      entry = this.#pools.get(key) ?? this.#newPool(slot, provider, o);
      this.#pools.set(key, entry);
    }
    const run = entry;
    const admission = (a: InstanceAdmission): InstanceAdmission =>
      sandbox.reuse !== "group" || !a.acquireSlot ? a : {
        ...a,
        acquireSlot: async (signal) => {
          run.groupSlot ??= { release: (await a.acquireSlot!(signal)) ?? (() => {}) };
          return undefined;
        },
      };
    return { pool: run.pool, admission };
  }

  /**
   * Freezes every pool of the Experiment, then stops each once (LIFE-6 step 1, rule 90). Resolves
   * with every failure of those pools (an empty list: all stopped cleanly).
   */
  async stopPools(experimentId: string): Promise<CleanupDiagnostic[]> {
    const mine = [...this.#pools.values()].filter((p) => p.experimentId === experimentId);
    for (const { pool } of mine) pool.freeze();
    const failures: CleanupDiagnostic[] = [];
    for (const entry of mine) {
      failures.push(...await entry.pool.stop());
      try {
        await entry.groupSlot?.release();
      } catch (error) {
        failures.push(slotReleaseFailure(error));
      }
      entry.groupSlot = undefined;
    }
    return failures;
  }

  #newPool(
    slot: PlannedSlot,
    provider: SandboxProvider,
    o: { capacity: number },
  ): RunPool {
    const sandbox = slot.sandbox!;
    const { clock, random, force, projectRoot } = this.#o;
    const factory = createInstanceFactory({
      provider,
      plan: sandbox.physical,
      layers: sandbox.layers.map(({ layer, owner }) => ({ layer, owner })),
      owner: this.owner(slot.experimentIndex),
      lifetimeMs: this.lifetimeMs(slot, provider.name),
      clock,
      random,
      hostDir: projectRoot,
      ...(force ? { force } : {}),
    });
    // Retirement failures are not any one Attempt's: the pool returns them when it stops.
    const pool = new Pool({
      id: sandbox.poolKey!,
      capacity: sandbox.reuse === "group" ? 1 : o.capacity,
      factory,
    });
    return { experimentId: slot.experimentId, pool, groupSlot: undefined };
  }
}

function slotReleaseFailure(error: unknown): CleanupDiagnostic {
  const message = errorMessage(error);
  return {
    code: "sandbox-slot-release-failed",
    level: "error",
    message: `sandbox.slot failed: ${message}`,
    data: { phase: "sandbox.slot", timedOut: false, message, sandboxId: null },
  };
}
