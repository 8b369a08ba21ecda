/**
 * Reuse and Eval-group pools (sandboxes.md §6.1–§6.5): physical sandboxes that Attempts lease one
 * at a time. A pool creates instances on demand up to its capacity, checks each lease against the
 * Attempt's remaining time, resets or retires instances on release, and at the Experiment's end
 * is frozen, then stopped once. Pools are per Run and never cross processes.
 */
import { abortable, canonicalJson, sha256Hex } from "../_shared/mod.ts";
import type { CleanupDiagnostic, CleanupStack } from "./cleanup.ts";
import { SandboxPoolError } from "./errors.ts";
import { type LedgerOptions, RESET_TIMEOUT_MS, resetLedger } from "./ledger.ts";
import type { Lifetime, SandboxDiagnostic, SandboxHandle } from "./types.ts";

/** Added to the remaining Attempt time for a lease (CLEANUP_TIMEOUT_MS, rule 77). */
export const LEASE_RESERVE_MS = 30_000;

/** One physical sandbox of a pool. */
export interface PoolInstance {
  readonly handle: SandboxHandle;
  readonly shell: "bash" | "sh";
  /** The instance's own stack: layer teardowns, provider stop, slot release (§3.2). */
  readonly cleanup: CleanupStack;
}

/**
 * How the Attempt that triggers a new instance takes its machine slot and paces its creates
 * (§3.2 step 2 runs §3.1 steps 2–3 through the scheduler); overrides the factory's defaults.
 */
export interface InstanceAdmission {
  /** Step 2: takes a machine slot; the returned release is pushed first on the instance's stack. */
  readonly acquireSlot?: (signal: AbortSignal) => Promise<(() => void | Promise<void>) | void>;
  /** Step 3: create pacing, awaited before each create try. */
  readonly beforeCreateTry?: (tryNumber: number, signal: AbortSignal) => Promise<void>;
}

/** Creates one ready instance (§3.1 steps 2–5 plus the ledger anchor); see `createInstanceFactory`. */
export type InstanceFactory = (
  signal: AbortSignal,
  admission?: InstanceAdmission,
) => Promise<PoolInstance>;

/** One Attempt's hold on an instance. */
interface PoolLease {
  readonly instance: PoolInstance;
  /**
   * Ends the lease (idempotent). `reset` restores the workdir within 30 s and returns the instance
   * to the pool; a failed reset retires it and rejects (the stack records `sandbox-reset-failed`).
   */
  release(outcome: "reset" | "retire", signal?: AbortSignal): Promise<void>;
}

/**
 * A waiter's priority key (scheduling.md PRIO-1/2, the scheduler's key): smaller is served first;
 * a number is the one-element tuple, tuples compare lexicographically.
 */
export type PoolPriority = number | readonly number[];

/** Options of {@link Pool}. */
interface PoolOptions {
  /** The pool identity (rule 72). */
  readonly id: string;
  /** See {@link poolCapacity}. */
  readonly capacity: number;
  readonly factory: InstanceFactory;
  /** @default {resetLedger} */
  readonly reset?: (handle: SandboxHandle, o: LedgerOptions) => Promise<void>;
  /** Receives every retirement failure as it happens. */
  readonly onDiagnostic?: (d: SandboxDiagnostic) => void;
}

/** Inputs of the pool identity (rule 72). */
interface PoolIdentityInput {
  readonly providerIdentity: string;
  readonly agentInstallIdentity: string;
  /** Hook identities, the template layer's first (rule 9). */
  readonly hookIdentities: readonly string[];
  /** `shared`, `eval:<evalId>` or `eval-group:<groupId>`; see {@link poolScope}. */
  readonly scope: string;
}

/** The pool identity: sha256 of the canonical JSON of rule 72. */
export function poolIdentity(input: PoolIdentityInput): string {
  return sha256Hex(canonicalJson({ v: 1, ...input, hookIdentities: [...input.hookIdentities] }));
}

/** The pool scope of rule 72. */
export function poolScope(
  o: { groupId?: string; evalId: string; evalLayerHasHooks: boolean },
): string {
  if (o.groupId !== undefined) return `eval-group:${o.groupId}`;
  return o.evalLayerHasHooks ? `eval:${o.evalId}` : "shared";
}

/** Capacity (rule 74): groups 1; reuse pools `max(1, min(Gmax, maxConcurrency ?? Gmax))`. */
export function poolCapacity(
  o: { group: boolean; gMax: number; maxConcurrency?: number | undefined },
): number {
  if (o.group) return 1;
  return Math.max(1, Math.min(o.gMax, o.maxConcurrency ?? o.gMax));
}

/** A pool of one Run. */
export class Pool {
  readonly id: string;
  readonly #o: PoolOptions;
  readonly #idle: PoolInstance[] = [];
  readonly #leased = new Set<PoolInstance>();
  readonly #tasks = new Set<Promise<void>>();
  /** Acquires waiting for an instance, smallest key first (PRIO-1). */
  readonly #waiters = new WaiterQueue();
  /** Waiters woken with a unit reserved for them that have not taken it yet. */
  #woken = 0;
  /** `stop()`'s drain: woken on every change of the creating and leased counts. */
  readonly #drain = new Set<() => void>();
  readonly #diagnostics: CleanupDiagnostic[] = [];
  #creating = 0;
  #frozen = false;
  #stopping: Promise<CleanupDiagnostic[]> | undefined;

  constructor(options: PoolOptions) {
    this.id = options.id;
    this.#o = options;
  }

  /** Counts for the panel and tests. */
  get stats(): { idle: number; leased: number; creating: number; retiring: number } {
    return {
      idle: this.#idle.length,
      leased: this.#leased.size,
      creating: this.#creating,
      retiring: this.#tasks.size,
    };
  }

  /**
   * The acquire loop of rule 78; rejects with `sandbox-pool-frozen` once frozen. A waiter waits in
   * `priority` order (PRIO-1; without one, after every keyed waiter, in arrival order): when an
   * instance frees or capacity opens, only the waiter with the smallest key is woken.
   */
  async acquire(
    o: {
      minRemainingMs: number;
      signal: AbortSignal;
      admission?: InstanceAdmission;
      priority?: PoolPriority;
    },
  ): Promise<PoolLease> {
    try {
      return await this.#acquire(o, false);
    } catch (error) {
      // A waiter that leaves (abort, frozen, failed create) passes any unit it held on.
      this.#notify();
      throw error;
    }
  }

  async #acquire(
    o: {
      minRemainingMs: number;
      signal: AbortSignal;
      admission?: InstanceAdmission;
      priority?: PoolPriority;
    },
    woken: boolean,
  ): Promise<PoolLease> {
    for (;;) {
      // The unit reserved for this woken waiter is now its own to take, or to pass on (`acquire`).
      if (woken) this.#woken--;
      o.signal.throwIfAborted();
      if (this.#frozen) {
        throw new SandboxPoolError(
          "sandbox-pool-frozen",
          "Cannot lease a sandbox: the pool is frozen",
        );
      }
      // A newcomer leaves the units reserved for woken waiters alone (no barging).
      if (!woken && this.#free() <= this.#woken) {
        woken = await this.#wait(o.priority, o.signal);
        continue;
      }
      woken = false;
      const idle = this.#idle.shift();
      if (idle) {
        this.#leased.add(idle);
        const life = await this.#lifetime(idle, o, () => this.#idle.unshift(idle));
        if (life.ready) return this.#lease(idle);
        this.#leased.delete(idle);
        this.#retire(idle);
        continue;
      }
      if (this.#idle.length + this.#leased.size + this.#creating < this.#o.capacity) {
        return await this.#createAndLease(o);
      }
      woken = await this.#wait(o.priority, o.signal);
    }
  }

  /** Retires every idle instance once no Attempt is pending or running (rule 81). */
  retireIdle(): void {
    for (let idle = this.#idle.shift(); idle; idle = this.#idle.shift()) this.#retire(idle);
  }

  /** Freezes the pool: later acquires fail with `sandbox-pool-frozen` (rule 90 (2)). */
  freeze(): void {
    this.#frozen = true;
    // Every waiter now fails with `sandbox-pool-frozen`: wake them all.
    for (let w = this.#waiters.pop(); w; w = this.#waiters.pop()) w.wake(false);
    this.#notify();
  }

  /**
   * Stops the pool once: freezes it, waits until no instance is being created or leased, retires
   * every instance concurrently, and resolves with every retirement failure of the pool's life
   * (rule 90 (3)).
   */
  stop(): Promise<CleanupDiagnostic[]> {
    this.freeze();
    this.#stopping ??= (async () => {
      while (this.#creating > 0 || this.#leased.size > 0) {
        await new Promise<void>((resolve) => this.#drain.add(resolve));
      }
      this.retireIdle();
      while (this.#tasks.size > 0) await Promise.all([...this.#tasks]);
      return [...this.#diagnostics];
    })();
    return this.#stopping;
  }

  async #createAndLease(
    o: { minRemainingMs: number; signal: AbortSignal; admission?: InstanceAdmission },
  ): Promise<PoolLease> {
    this.#creating++;
    let instance: PoolInstance;
    try {
      instance = await this.#o.factory(o.signal, o.admission);
      // Leased in the same step as no longer creating: the unit never looks free in between.
      this.#leased.add(instance);
    } finally {
      this.#creating--;
      this.#notify();
    }
    const life = await this.#lifetime(instance, o, () => this.#retire(instance));
    if (life.ready) return this.#lease(instance);
    this.#leased.delete(instance);
    this.#retire(instance);
    throw new SandboxPoolError(
      "sandbox-lifetime-insufficient",
      `Cannot lease a new sandbox: ${life.reason}`,
      { phase: "sandbox.create" },
    );
  }

  /** `ensureLifetime`; a rejection other than the abort counts as not ready. */
  async #lifetime(
    instance: PoolInstance,
    o: { minRemainingMs: number; signal: AbortSignal },
    onAbort: () => void,
  ): Promise<Lifetime> {
    try {
      const ensure = instance.handle.ensureLifetime;
      if (!ensure) return { ready: false, reason: "the handle has no ensureLifetime" };
      return await ensure.call(instance.handle, o.minRemainingMs, o.signal);
    } catch (error) {
      if (!o.signal.aborted) {
        return { ready: false, reason: error instanceof Error ? error.message : String(error) };
      }
      this.#leased.delete(instance);
      onAbort();
      this.#notify();
      throw o.signal.reason;
    }
  }

  #lease(instance: PoolInstance): PoolLease {
    let released = false;
    return {
      instance,
      release: async (outcome, signal) => {
        if (released) return;
        released = true;
        try {
          if (outcome === "reset") {
            const reset = this.#o.reset ?? resetLedger;
            const o = {
              signal: signal ?? new AbortController().signal,
              timeoutMs: RESET_TIMEOUT_MS,
            };
            await reset(instance.handle, o).catch((error) => {
              this.#leased.delete(instance);
              this.#retire(instance);
              throw error;
            });
          }
          if (!this.#leased.delete(instance)) return;
          if (outcome === "reset") this.#idle.push(instance);
          else this.#retire(instance);
        } finally {
          this.#notify();
        }
      },
    };
  }

  /** Unwinds an instance's stack in the background; the pool owns and awaits the task. */
  #retire(instance: PoolInstance): void {
    const task = instance.cleanup.unwind().then((diagnostics) => {
      for (const d of diagnostics) {
        this.#diagnostics.push(d);
        this.#o.onDiagnostic?.(d);
      }
    }).finally(() => {
      this.#tasks.delete(task);
      this.#notify();
    });
    this.#tasks.add(task);
  }

  /** Units an acquire could take now: idle instances plus room to create. */
  #free(): number {
    const room = this.#o.capacity - this.#idle.length - this.#leased.size - this.#creating;
    return this.#idle.length + Math.max(0, room);
  }

  /**
   * After every change: wakes the smallest-key waiters, one per free unit not yet reserved for an
   * earlier woken waiter (none when nothing freed), and `stop()`'s drain.
   */
  #notify(): void {
    while (this.#waiters.size > 0 && this.#free() > this.#woken) {
      this.#woken++;
      this.#waiters.pop()!.wake(true);
    }
    const drain = [...this.#drain];
    this.#drain.clear();
    for (const wake of drain) wake();
  }

  /** Queues under `priority` until woken; resolves true when a unit was reserved for it. */
  async #wait(priority: PoolPriority | undefined, signal: AbortSignal): Promise<boolean> {
    let reserved = false;
    await abortable<void>(signal, (resolve) => {
      const waiter = this.#waiters.push(priority, (unit) => {
        reserved = unit;
        resolve();
      });
      return () => void this.#waiters.remove(waiter);
    });
    return reserved;
  }
}

interface Waiter {
  readonly key: readonly number[] | undefined;
  readonly seq: number;
  /** `unit`: a free unit is reserved for the waiter (false: woken to see the pool frozen). */
  readonly wake: (unit: boolean) => void;
}

/**
 * The pool's waiters, smallest key first, equal keys (and keyless waiters, after every keyed one)
 * in arrival order. A sorted array: the scheduler's lease gate (REUSE-1) keeps a pool's waiters
 * within its capacity.
 */
class WaiterQueue {
  readonly #items: Waiter[] = [];
  #seq = 0;

  get size(): number {
    return this.#items.length;
  }

  push(priority: PoolPriority | undefined, wake: (unit: boolean) => void): Waiter {
    const key = priority === undefined ? undefined : typeof priority === "number" ? [priority] : [
      ...priority,
    ];
    const waiter: Waiter = { key, seq: this.#seq++, wake };
    let i = this.#items.length;
    while (i > 0 && before(waiter, this.#items[i - 1]!)) i--;
    this.#items.splice(i, 0, waiter);
    return waiter;
  }

  pop(): Waiter | undefined {
    return this.#items.shift();
  }

  remove(waiter: Waiter): boolean {
    const i = this.#items.indexOf(waiter);
    if (i < 0) return false;
    this.#items.splice(i, 1);
    return true;
  }
}

/** Whether `a` is served before `b`. */
function before(a: Waiter, b: Waiter): boolean {
  if (a.key === undefined || b.key === undefined) {
    if (a.key !== b.key) return b.key === undefined;
    return a.seq < b.seq;
  }
  const n = Math.min(a.key.length, b.key.length);
  for (let i = 0; i < n; i++) {
    if (a.key[i] !== b.key[i]) return a.key[i]! < b.key[i]!;
  }
  return a.key.length !== b.key.length ? a.key.length < b.key.length : a.seq < b.seq;
}
