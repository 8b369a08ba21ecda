/**
 * The machine sandbox budget as one Invocation waits for it (MSB-2 … MSB-4, WAIT-4, PRIO-1):
 * in-process waiters are ordered by priority key; the process retries the slot files every
 * MACHINE_SLOT_POLL_MS and at once when one of its own slots is released. Providers without a
 * budget never take a slot.
 */
import type { Clock, TimerHandle } from "../_shared/mod.ts";
import { abortable, isoTime } from "../_shared/mod.ts";
import {
  MACHINE_SLOT_POLL_MS,
  type MachineSlotOwner,
  tryAcquireMachineSlot,
} from "../coordination/mod.ts";
import type { GateSnapshot, Permit } from "./gate.ts";
import { type PriorityKey, PriorityQueue } from "./priority_queue.ts";

/** Where machine slots come from: the slot files of the state directory, or a fake. */
export interface MachineSlotSource {
  /** The budget of `provider`, or undefined when it is unlimited. */
  limitOf(provider: string): number | undefined;
  /**
   * Tries every slot of `provider` once, for an Attempt of `experimentId` when known (its Run is
   * written into the slot file); null when all are held.
   */
  tryAcquire(provider: string, experimentId?: string): Promise<{ release(): void } | null>;
}

/** The slot files under `<stateDir>/slots/` with the given budgets. */
export function fileMachineSlots(
  o: {
    readonly stateDir: string;
    readonly limits: Readonly<Record<string, number>>;
    readonly owner: Omit<MachineSlotOwner, "runId">;
    /** The Run of an Experiment of this Invocation (rule 55). */
    readonly runIdOf?: (experimentId: string) => string | undefined;
    readonly clock: Clock;
  },
): MachineSlotSource {
  const limitOf = (provider: string) =>
    Object.hasOwn(o.limits, provider) ? o.limits[provider] : undefined;
  return {
    limitOf,
    tryAcquire: (provider, experimentId) => {
      const runId = experimentId === undefined ? undefined : o.runIdOf?.(experimentId);
      return tryAcquireMachineSlot({
        stateDir: o.stateDir,
        provider,
        limit: limitOf(provider) ?? 0,
        owner: runId === undefined ? o.owner : { ...o.owner, runId },
        since: isoTime(o.clock.now()),
      });
    },
  };
}

interface Waiter {
  readonly grant: (permit: Permit) => void;
  readonly experimentId: string | undefined;
}

interface ProviderState {
  readonly limit: number;
  held: number;
  readonly waiters: PriorityQueue<Waiter>;
  pumping: boolean;
  timer: TimerHandle | undefined;
  /** The last file try: tries of one process run one at a time, so `held` is always exact. */
  trying: Promise<unknown>;
}

const FREE: Permit = Object.freeze({ release: () => {}, [Symbol.dispose]: () => {} });

/** The machine-slot waits of one Invocation. */
export class MachineBudget {
  readonly #source: MachineSlotSource;
  readonly #clock: Clock;
  readonly #pollMs: number;
  readonly #onFirstWait: (provider: string, held: number, limit: number) => void;
  readonly #states = new Map<string, ProviderState>();
  readonly #waitedFor = new Set<string>();

  constructor(
    source: MachineSlotSource,
    o: {
      readonly clock: Clock;
      /** @default {MACHINE_SLOT_POLL_MS} */
      readonly pollMs?: number;
      /** Called once per provider, when its first waiter enters W11 (WAIT-4). */
      readonly onFirstWait?: (provider: string, held: number, limit: number) => void;
    },
  ) {
    this.#source = source;
    this.#clock = o.clock;
    this.#pollMs = o.pollMs ?? MACHINE_SLOT_POLL_MS;
    this.#onFirstWait = o.onFirstWait ?? (() => {});
  }

  /** True when `provider` has a budget (and so needs a slot per new sandbox). */
  limited(provider: string): boolean {
    return this.#source.limitOf(provider) !== undefined;
  }

  /** Counters by provider for the scheduler snapshot: `held` counts this process's slots. */
  snapshot(): Record<string, GateSnapshot> {
    const out: Record<string, GateSnapshot> = {};
    for (const [provider, s] of this.#states) {
      out[provider] = { capacity: s.limit, held: s.held, waiting: s.waiters.size };
    }
    return out;
  }

  /**
   * A slot at once, or null when none is free or a waiter with any key is already queued (it is
   * first, PRIO-1). Unlimited providers get a permit that holds nothing.
   */
  async tryAcquire(provider: string, experimentId?: string): Promise<Permit | null> {
    const state = this.#state(provider);
    if (state === undefined) return FREE;
    if (state.waiters.size > 0 || state.pumping) return null;
    const slot = await this.#try(provider, state, experimentId);
    return slot ? this.#permit(provider, state, slot) : null;
  }

  /** Waits for a slot under `key` (W11); rejects with `signal.reason` on abort. */
  async acquire(
    provider: string,
    key: PriorityKey,
    options: { signal?: AbortSignal; experimentId?: string } = {},
  ): Promise<Permit> {
    const { signal, experimentId } = options;
    signal?.throwIfAborted();
    const state = this.#state(provider);
    if (state === undefined) return FREE;
    if (!this.#waitedFor.has(provider)) {
      this.#waitedFor.add(provider);
      this.#onFirstWait(provider, state.held, state.limit);
    }
    const granted = abortable<Permit>(signal, (resolve) => {
      const waiter: Waiter = { grant: resolve, experimentId };
      state.waiters.push(key, waiter);
      // On abort the waiter leaves the queue; the last one to leave stops the poll timer.
      return () => {
        if (!state.waiters.remove(waiter)) return;
        if (state.waiters.size === 0 && state.timer !== undefined) {
          this.#clock.clearTimeout(state.timer);
          state.timer = undefined;
        }
      };
    });
    void this.#pump(provider, state);
    return await granted;
  }

  #state(provider: string): ProviderState | undefined {
    const limit = this.#source.limitOf(provider);
    if (limit === undefined) return undefined;
    let state = this.#states.get(provider);
    if (!state) {
      state = {
        limit,
        held: 0,
        waiters: new PriorityQueue(),
        pumping: false,
        timer: undefined,
        trying: Promise.resolve(),
      };
      this.#states.set(provider, state);
    }
    return state;
  }

  /** One try of the slot files, after every earlier try of this process has settled. */
  #try(
    provider: string,
    state: ProviderState,
    experimentId: string | undefined,
  ): Promise<{ release(): void } | null> {
    const tried = state.trying.then(() => this.#source.tryAcquire(provider, experimentId));
    state.trying = tried.catch(() => undefined);
    return tried;
  }

  #permit(provider: string, state: ProviderState, slot: { release(): void }): Permit {
    state.held++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      slot.release();
      state.held--;
      // MSB-4: one of our own slots freed, so a waiter of this process may take it at once.
      void this.#pump(provider, state);
    };
    return { release, [Symbol.dispose]: release };
  }

  /** Grants slot files to waiters in key order until none is free; then polls. */
  async #pump(provider: string, state: ProviderState): Promise<void> {
    if (state.pumping) return;
    state.pumping = true;
    if (state.timer !== undefined) this.#clock.clearTimeout(state.timer);
    state.timer = undefined;
    try {
      while (state.waiters.size > 0) {
        // The file names the Run of the waiter first in line, which takes the slot unless it
        // leaves the queue meanwhile (the file is a diagnostic, rule 55).
        const head = state.waiters.peek();
        const slot = await this.#try(provider, state, head?.experimentId).catch(() => null);
        if (slot === null) break;
        const waiter = state.waiters.pop();
        if (waiter) waiter.grant(this.#permit(provider, state, slot));
        else slot.release();
      }
    } finally {
      state.pumping = false;
    }
    if (state.waiters.size > 0 && state.timer === undefined) {
      state.timer = this.#clock.setTimeout(() => {
        state.timer = undefined;
        void this.#pump(provider, state);
      }, this.#pollMs);
    }
  }
}
