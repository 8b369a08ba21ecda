/**
 * Creation of one pool instance (sandboxes.md §3.2 step 2, rules 76, 78–79, 84): machine slot and
 * pacing through a callback, create with retry, the reuse checks, layer setups and the ledger
 * anchor, all on the instance's own cleanup stack. A failed creation unwinds that stack.
 */
import type { Clock, Random } from "../_shared/mod.ts";
import { CleanupStack } from "./cleanup.ts";
import { createWithRetry } from "./create.ts";
import { isSandboxError, SandboxPoolError } from "./errors.ts";
import { type CommandEvidence, createFacade } from "./facade.ts";
import { anchorLedger, hasGit } from "./ledger.ts";
import type { InstanceAdmission, InstanceFactory, PoolInstance } from "./pool.ts";
import { type AttemptLayer, probeShell, runLayerSetups } from "./_steps.ts";
import type { OwnerStamp, SandboxDiagnostic, SandboxHandle, SandboxProvider } from "./types.ts";

/** Options of {@link createInstanceFactory}. */
interface InstanceFactoryOptions {
  readonly provider: SandboxProvider;
  readonly plan: unknown;
  /** Template layer first. */
  readonly layers: readonly AttemptLayer[];
  readonly owner: Omit<OwnerStamp, "provisionToken">;
  readonly lifetimeMs: number;
  readonly clock: Clock;
  readonly random: Random;
  /** Fallback for relative host paths of hooks whose layer has no declaring file. */
  readonly hostDir: string;
  /** Steps 2–3: takes a machine slot (and paces); the returned release is pushed first. */
  readonly acquireSlot?: (signal: AbortSignal) => Promise<(() => void | Promise<void>) | void>;
  readonly beforeCreateTry?: (tryNumber: number, signal: AbortSignal) => Promise<void>;
  /** Aborts on the second interrupt (instance stacks then run stop and slot release only). */
  readonly force?: AbortSignal;
  readonly onEvidence?: (e: CommandEvidence) => void;
  readonly onDiagnostic?: (d: SandboxDiagnostic) => void;
  readonly onProgress?: (message: string) => void;
}

/** Builds the factory a {@link Pool} calls for each new instance. */
export function createInstanceFactory(o: InstanceFactoryOptions): InstanceFactory {
  return async (signal, admission?: InstanceAdmission) => {
    const acquireSlot = admission?.acquireSlot ?? o.acquireSlot;
    const beforeCreateTry = admission?.beforeCreateTry ?? o.beforeCreateTry;
    const cleanup = new CleanupStack({
      clock: o.clock,
      ...(o.force ? { force: o.force } : {}),
      ...(o.onDiagnostic ? { onDiagnostic: o.onDiagnostic } : {}),
    });
    let phase = "sandbox.slot";
    try {
      const release = await acquireSlot?.(signal);
      if (release) cleanup.push({ kind: "slot-release", run: () => release() });
      phase = "sandbox.create";
      const { handle } = await createWithRetry(o.provider, o.plan, {
        owner: o.owner,
        lifetimeMs: o.lifetimeMs,
        signal,
        clock: o.clock,
        random: o.random,
        progress: (m) => o.onProgress?.(m),
        diagnostic: (d) => o.onDiagnostic?.(d),
        ...(beforeCreateTry ? { beforeTry: beforeCreateTry } : {}),
      });
      cleanup.push({ kind: "provider-stop", sandboxId: handle.id, run: (s) => handle.stop(s) });
      const shell = await probeShell(handle, signal);
      await checkReusable(o.provider, handle, signal);
      phase = "sandbox.setup";
      await runLayerSetups(o.layers, {
        handle,
        signal,
        cleanup,
        facadeFor: (hostDir) => hookFacade(o, handle, shell, signal, hostDir),
        hooks: { signal, progress: (m) => o.onProgress?.(m) },
      });
      phase = "sandbox.anchor";
      await anchorLedger(handle, { signal });
      return { handle, shell, cleanup } satisfies PoolInstance;
    } catch (error) {
      await cleanup.unwind();
      signal.throwIfAborted();
      throw instanceError(phase, error);
    }
  };
}

/** Checks lifetime, a non-root default user (except `local`) and git for reuse (rules 76, 79). */
async function checkReusable(
  provider: SandboxProvider,
  handle: SandboxHandle,
  signal: AbortSignal,
): Promise<void> {
  const fail = (code: string, message: string) =>
    new SandboxPoolError(code, message, { scope: "experiment", phase: "sandbox.create" });
  if (typeof handle.ensureLifetime !== "function") {
    throw fail(
      "sandbox-reuse-unsupported",
      `Cannot reuse "${provider.name}" sandboxes: their handles have no ensureLifetime`,
    );
  }
  if (provider.name !== "local") {
    const id = await handle.exec({ argv: ["id", "-u"] }, { signal });
    if (new TextDecoder().decode(id.stdout).trim() === "0") {
      throw fail(
        "sandbox-reuse-root-user",
        `Cannot reuse "${provider.name}" sandboxes: the default user is root`,
      );
    }
  }
  if (!(await hasGit(handle, { signal }))) {
    throw fail("sandbox-reuse-git-missing", `Cannot reuse "${provider.name}" sandboxes: no git`);
  }
}

function hookFacade(
  o: InstanceFactoryOptions,
  handle: SandboxHandle,
  shell: "bash" | "sh",
  signal: AbortSignal,
  hostDir: string | undefined,
) {
  return createFacade({
    handle,
    shell,
    clock: o.clock,
    random: o.random,
    signal,
    hostDir: hostDir ?? o.hostDir,
    phase: () => "sandbox.setup",
    onEvidence: (e) => o.onEvidence?.(e),
    onDiagnostic: (d) => o.onDiagnostic?.(d),
  });
}

/** Keeps sandbox errors; wraps others with the phase's code (rule 34). */
function instanceError(phase: string, error: unknown): unknown {
  if (isSandboxError(error)) {
    if ((error as { phase?: unknown }).phase !== undefined) return error;
    const scope = (error as { scope?: unknown }).scope === "experiment" ? "experiment" : "attempt";
    const data = (error as { data?: unknown }).data;
    return new SandboxPoolError(error.code, error.message, { cause: error, scope, phase, data });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SandboxPoolError(`${phase.replaceAll(".", "-")}-failed`, message, {
    cause: error,
    phase,
  });
}
