/**
 * The entries of one Attempt: registration order, evaluation (sync or pending), keys, authoring
 * errors, `orStop()` trackers and the settle boundary (authoring.md §3.1 rule 3, §3.5).
 */
import { AssertionAuthoringError, hasErrorName } from "../_shared/mod.ts";
import { type Entry, sealEntry, type Settled, settledError } from "./_entry.ts";
import { createHandle, type HandleHost, type RuntimeHandle, type StopTracker } from "./_handle.ts";
import { isPromiseLike, type Maybe } from "./_protocol.ts";
import type { Kind, SealedAssertion } from "./types.ts";

/** What a registration names; everything else of the entry starts unconfigured. */
type EntrySpec = Pick<Entry, "entry" | "matcher" | "defaultCriterion" | "subject"> & {
  points?: number;
};

/** Where registrations read their group path and call site, and report authoring errors. */
interface RegistryContext {
  groupPath(): readonly string[];
  /**
   * The user's call site. `below` is on the stack of every registration: the frames of its call
   * and above are niceeval's own (a hint; a caller that ignores it still works). `entry`, when
   * known, is the function the user called: frames between its call and `below` are niceeval's.
   */
  callSite(
    below: (...args: never[]) => unknown,
    entry?: (...args: never[]) => unknown,
  ): string | null;
  /** Called when an authoring error is raised, before the test can catch it (rule 3.5.8). */
  onAuthoringError?(error: AssertionAuthoringError): void;
}

/** Holds the entries of one Attempt and serves as the host of their handles. */
export class EntryRegistry implements HandleHost {
  readonly kind: Kind;
  readonly authoringErrors: AssertionAuthoringError[] = [];
  discarded = 0;
  readonly #context: RegistryContext;
  readonly #entries: Entry[] = [];
  readonly #keys = new Set<string>();
  readonly #pending = new Set<Promise<void>>();
  readonly #stops: StopTracker[] = [];
  #settled = false;

  constructor(kind: Kind, context: RegistryContext) {
    this.kind = kind;
    this.#context = context;
  }

  isSettled(): boolean {
    return this.#settled;
  }

  raise(code: string, message: string): never {
    const error = new AssertionAuthoringError(code, message);
    this.#noteAuthoring(error);
    throw error;
  }

  claimKey(key: string): boolean {
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    return true;
  }

  trackStop(tracker: StopTracker): void {
    this.#stops.push(tracker);
  }

  /** Runs `body`, recording any authoring error it throws (rule 3.5.8) before rethrowing. */
  guarded<T>(body: () => T): T {
    try {
      return body();
    } catch (error) {
      const known = this.authoringErrors.includes(error as AssertionAuthoringError);
      if (hasErrorName(error, "AssertionAuthoringError") && !known) {
        this.#noteAuthoring(error as AssertionAuthoringError);
      }
      throw error;
    }
  }

  #noteAuthoring(error: AssertionAuthoringError): void {
    this.authoringErrors.push(error);
    this.#context.onAuthoringError?.(error);
  }

  /**
   * Registers an entry now, starts its evaluation, and returns its handle. `called` is the
   * function the user called to register it, when known (see {@link RegistryContext.callSite}).
   */
  register(
    spec: EntrySpec,
    run: () => Maybe<Settled>,
    called?: (...args: never[]) => unknown,
  ): RuntimeHandle {
    const discarded = this.#settled;
    const entry: Entry = {
      entry: spec.entry,
      matcher: spec.matcher,
      defaultCriterion: spec.defaultCriterion,
      subject: spec.subject,
      index: discarded ? -1 : this.#entries.length,
      // Every registration runs inside `guarded` (check, scoped assertions, t.score).
      source: called === undefined
        ? this.#context.callSite(this.guarded)
        : this.#context.callSite(this.guarded, called),
      groupPath: Object.freeze([...this.#context.groupPath()]),
      discarded,
      key: null,
      label: null,
      groupSegment: null,
      optional: false,
      gateThreshold: null,
      atLeast: null,
      points: spec.points ?? null,
      stopRequested: false,
      settled: undefined,
      done: undefined,
    };
    if (discarded) this.discarded++;
    else this.#entries.push(entry);
    this.#start(entry, run);
    return createHandle(entry, this);
  }

  #start(entry: Entry, run: () => Maybe<Settled>): void {
    let result: Maybe<Settled>;
    try {
      result = run();
    } catch (error) {
      entry.settled = settledError(error);
      return;
    }
    if (!isPromiseLike(result)) {
      entry.settled = result;
      return;
    }
    // The evaluation promise never rejects: a failure settles the entry as errored.
    const done: Promise<void> = Promise.resolve(result).then(
      (value) => void (entry.settled = value),
      (error) => void (entry.settled = settledError(error)),
    ).finally(() => this.#pending.delete(done));
    entry.done = done;
    if (!entry.discarded) this.#pending.add(done);
  }

  settle(): void {
    this.#settled = true;
  }

  async pending(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  unawaitedStops(): number {
    return this.#stops.filter((tracker) => !tracker.used).length;
  }

  seal(): SealedAssertion[] {
    return this.#entries.map((entry) => sealEntry(entry, this.kind));
  }
}
