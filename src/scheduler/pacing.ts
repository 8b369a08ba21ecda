/**
 * Create pacing (sandboxes.md §4.4, rules 59–60): per Invocation and provider, create calls start
 * at least `1000 / rate` ms apart, granted in priority order (PRIO-1). Unpaced providers never wait.
 */
import { abortable, type Clock, type TimerHandle } from "../_shared/mod.ts";
import { type PriorityKey, PriorityQueue } from "./priority_queue.ts";

/** Default creates per second (§4.1 column "creates per second"); others are unpaced. */
const DEFAULT_CREATES_PER_SECOND: Readonly<Record<string, number>> = Object.freeze({
  e2b: 1,
});

interface Waiter {
  readonly grant: () => void;
}

/** The pacing of one provider. */
export class CreatePacer {
  readonly intervalMs: number;
  readonly #clock: Clock;
  readonly #waiters = new PriorityQueue<Waiter>();
  #next = -Infinity;
  #timer: TimerHandle | undefined;

  constructor(ratePerSecond: number, clock: Clock) {
    this.intervalMs = 1000 / ratePerSecond;
    this.#clock = clock;
  }

  /** Number of waiters. */
  get waiting(): number {
    return this.#waiters.size;
  }

  /** Takes the next create start at once when it is due and nobody waits; else false. */
  tryTake(): boolean {
    if (this.#waiters.size > 0 || this.#clock.now() < this.#next) return false;
    this.#next = this.#clock.now() + this.intervalMs;
    return true;
  }

  /** Waits for a create start under `key`; rejects with `signal.reason` on abort. */
  take(key: PriorityKey, options: { signal?: AbortSignal } = {}): Promise<void> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.tryTake()) return Promise.resolve();
    return abortable<void>(signal, (resolve) => {
      const waiter: Waiter = { grant: () => resolve() };
      this.#waiters.push(key, waiter);
      this.#schedule();
      return () => void this.#waiters.remove(waiter);
    });
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#waiters.size === 0) return;
    const delay = Math.max(0, this.#next - this.#clock.now());
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      const next = this.#waiters.pop();
      if (next) {
        this.#next = this.#clock.now() + this.intervalMs;
        next.grant();
      }
      this.#schedule();
    }, delay);
  }
}

/** The pacers of one Invocation, by provider. */
export class Pacing {
  readonly #rates: Readonly<Record<string, number>>;
  readonly #clock: Clock;
  readonly #pacers = new Map<string, CreatePacer>();

  /** `rates` overrides the defaults per provider (config `createsPerSecond`). */
  constructor(rates: Readonly<Record<string, number>>, clock: Clock) {
    this.#rates = { ...DEFAULT_CREATES_PER_SECOND, ...rates };
    this.#clock = clock;
  }

  /** The pacer of `provider`, or null when it is unpaced. */
  of(provider: string): CreatePacer | null {
    const rate = Object.hasOwn(this.#rates, provider) ? this.#rates[provider] : undefined;
    if (rate === undefined || !(rate > 0)) return null;
    let pacer = this.#pacers.get(provider);
    if (!pacer) {
      pacer = new CreatePacer(rate, this.#clock);
      this.#pacers.set(provider, pacer);
    }
    return pacer;
  }
}
