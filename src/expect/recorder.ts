/**
 * The assertion recorder behind the test context `t` (authoring.md §3.5): it registers entries at
 * call time, evaluates them, hands out handles, collects authoring errors and seals the entries.
 */
import type { AssertionAuthoringError } from "../_shared/mod.ts";
import type { TurnRecord } from "../agents/mod.ts";
import { settledBoolean, settledMeasure } from "./_entry.ts";
import type { EvidenceAssertion } from "./_evidence_common.ts";
import type { RuntimeHandle } from "./_handle.ts";
import { EntryRegistry } from "./_registry.ts";
import { chain, evaluateBoolean, readMatch, toMeasureOutcome, VALUE_CONTEXT } from "./_protocol.ts";
import { copyStructure } from "./_structure.ts";
import * as evidence from "./evidence.ts";
import type { CostEstimator } from "./evidence.ts";
import * as events from "./evidence_events.ts";
import type {
  BoolHandle,
  DirectScoreHandle,
  MeasureHandle,
  OrderedAssertions,
  ScopedAssertions,
} from "./handle_types.ts";
import type { BooleanMatch, EvidenceSnapshot, Kind, ScoreMatch, SealedAssertion } from "./types.ts";

/** What the test context hands the recorder. */
export interface RecorderOptions<K extends Kind = Kind> {
  readonly kind: K;
  /** The current `t.group` path, read at registration. */
  groupPath(): readonly string[];
  /**
   * `evals/a.eval.ts:12` of the user's call, read at registration. `below` is a function on the
   * stack of every registration: frames of its call and above are niceeval's own. `entry`, when
   * given, is the method of `t` or of a handle that the user called (a hint, like `below`).
   */
  callSite(
    below: (...args: never[]) => unknown,
    entry?: (...args: never[]) => unknown,
  ): string | null;
  /**
   * Called as soon as an authoring error is raised by an entry point or a handle, before the
   * test can catch it (rule 3.5.8).
   */
  onAuthoringError?(error: AssertionAuthoringError): void;
  /** Cost estimate of a list of turns, for `maxCost` (authoring.md §6.5). */
  estimateCost(turns: readonly TurnRecord[]): { usd: number | undefined; complete: boolean };
}

/** Scoped assertions plus orders, as `scoped()` returns them. */
export type ScopedAssertionMethods<K extends Kind = Kind> =
  & ScopedAssertions<K>
  & OrderedAssertions<K>;

/** The object `t` delegates its assertions to. */
export interface AssertionRecorder<K extends Kind = Kind> {
  /** `t.check(value, match)`: exactly two arguments. */
  check<T, R>(value: T, match: BooleanMatch<T, R>): BoolHandle<K, R>;
  check<T>(value: T, match: ScoreMatch<T>): MeasureHandle<K>;
  check(...args: unknown[]): BoolHandle<K, unknown> | MeasureHandle<K>;
  /**
   * Scoped assertions reading `snapshot()` at each call; `orders: false` leaves out `toolOrder`
   * and `eventOrder` (`t` has none, authoring.md §3.2).
   */
  scoped(
    snapshot: () => EvidenceSnapshot,
    options?: { readonly orders?: boolean },
  ): ScopedAssertionMethods<K>;
  /** `t.score(points)`: score evals only. */
  score(points: number): DirectScoreHandle;
  /** Marks the test body as settled: later registrations are discarded. */
  settle(): void;
  /** Resolves when every asynchronous evaluation registered so far has settled. */
  pending(): Promise<void>;
  /** Registrations after `settle()`; the caller warns `assertion-after-settle`. */
  readonly discardedAfterSettle: number;
  /** Every authoring violation, caught by the test or not. */
  readonly authoringErrors: readonly AssertionAuthoringError[];
  /** `orStop()` results that were never awaited. */
  unawaitedStops(): number;
  /** The entries in registration order; pending evaluations count as errored. */
  seal(): SealedAssertion[];
}

/** Creates the recorder of one Attempt. */
export function createAssertionRecorder<K extends Kind>(
  options: RecorderOptions<K>,
): AssertionRecorder<K> {
  return new Recorder(options) as unknown as AssertionRecorder<K>;
}

/**
 * The recorder: one object over the registry. `check` and `score` are own closures, since `t`
 * hands them out as its own methods (they also work destructured); the rest are prototype
 * methods, shared by every Attempt.
 */
class Recorder {
  readonly #registry: EntryRegistry;
  readonly #options: RecorderOptions;
  readonly check: (...args: unknown[]) => RuntimeHandle;
  readonly score: (points: number) => DirectScoreHandle;

  constructor(options: RecorderOptions) {
    const registry = new EntryRegistry(options.kind, options);
    this.#registry = registry;
    this.#options = options;
    this.check = (...args: unknown[]) => check(registry, args, this.check);
    this.score = (points: number) => directScore(registry, points, this.score);
  }

  scoped(
    snapshot: () => EvidenceSnapshot,
    scopedOptions?: { readonly orders?: boolean },
  ): ScopedAssertionMethods {
    return scopedMethods(this.#registry, snapshot, this.#options, scopedOptions?.orders ?? true);
  }

  settle(): void {
    this.#registry.settle();
  }

  pending(): Promise<void> {
    return this.#registry.pending();
  }

  get discardedAfterSettle(): number {
    return this.#registry.discarded;
  }

  get authoringErrors(): readonly AssertionAuthoringError[] {
    return this.#registry.authoringErrors.slice();
  }

  unawaitedStops(): number {
    return this.#registry.unawaitedStops();
  }

  seal(): SealedAssertion[] {
    return this.#registry.seal();
  }
}

/** The function the user called to register an entry: the call site is its caller's frame. */
type Entry = (...args: never[]) => unknown;

/** `t.check(value, match)` (rules 3.5.1 and 3.5.8). */
function check(registry: EntryRegistry, args: readonly unknown[], entry: Entry): RuntimeHandle {
  return registry.guarded(() => {
    if (args.length !== 2) {
      registry.raise(
        "check-arguments",
        `Cannot call t.check(): expected exactly 2 arguments (value, match), got ${args.length}`,
      );
    }
    const [value, match] = args;
    const read = readMatch(match);
    if (read === undefined) {
      registry.raise("not-a-match", "Cannot call t.check(): the second argument is not a match");
    }
    if (read.domain !== "value") {
      registry.raise(
        "match-domain-mismatch",
        `Cannot call t.check() with ${read.domain} match ${read.name}: use a value match, or ` +
          `the ${read.domain === "tool" ? "calledTool" : "event"}() assertions`,
      );
    }
    // The subject is captured now; later mutation cannot change the entry (rule 3.5.1).
    const subject = copyStructure(value);
    const spec = { matcher: read.impl.base, defaultCriterion: read.name, subject: value };
    if (read.kind === "boolean") {
      const impl = read.impl;
      return registry.register(
        { ...spec, entry: "boolean" },
        () => chain(evaluateBoolean(impl, subject, VALUE_CONTEXT), settledBoolean),
        entry,
      );
    }
    const impl = read.impl;
    return registry.register(
      { ...spec, entry: "measurement" },
      () => chain(impl.measure(subject), (raw) => settledMeasure(toMeasureOutcome(raw, impl.base))),
      entry,
    );
  });
}

/**
 * The scoped assertions of one scope; each call reads `snapshot()` (§3.4). The methods are
 * closures, not prototype methods, so that they also work destructured; they share one scope.
 * Each passes itself as the registration's entry: the user's frame is its caller's.
 */
function scopedMethods(
  registry: EntryRegistry,
  snapshot: () => EvidenceSnapshot,
  options: Pick<RecorderOptions, "estimateCost">,
  orders: boolean,
): ScopedAssertionMethods {
  const r = registry;
  const methods: Record<string, (...args: never[]) => RuntimeHandle> = {
    succeeded: () => addScoped(r, () => evidence.succeeded(snapshot()), methods.succeeded),
    calledTool: (match: unknown, opts?: unknown) =>
      addScoped(r, () => evidence.calledTool(snapshot(), match, opts), methods.calledTool),
    notCalledTool: (match: unknown) =>
      addScoped(r, () => evidence.notCalledTool(snapshot(), match), methods.notCalledTool),
    usedNoTools: () => addScoped(r, () => evidence.usedNoTools(snapshot()), methods.usedNoTools),
    maxToolCalls: (max: unknown) =>
      addScoped(r, () => evidence.maxToolCalls(snapshot(), max), methods.maxToolCalls),
    noFailedActions: () =>
      addScoped(r, () => evidence.noFailedActions(snapshot()), methods.noFailedActions),
    event: (match: unknown, opts?: unknown) =>
      addScoped(r, () => events.event(snapshot(), match, opts), methods.event),
    notEvent: (match: unknown) =>
      addScoped(r, () => events.notEvent(snapshot(), match), methods.notEvent),
    maxTokens: (max: unknown) =>
      addScoped(r, () => evidence.maxTokens(snapshot(), max), methods.maxTokens),
    maxCost: (usd: unknown) =>
      addScoped(r, () => evidence.maxCost(snapshot(), usd, estimator(options)), methods.maxCost),
  };
  if (orders) {
    methods.toolOrder = (matches: unknown) =>
      addScoped(r, () => events.toolOrder(snapshot(), matches), methods.toolOrder);
    methods.eventOrder = (matches: unknown) =>
      addScoped(r, () => events.eventOrder(snapshot(), matches), methods.eventOrder);
  }
  // Runtime handles carry exactly the methods of their kind; the public types describe them.
  return Object.freeze(methods) as unknown as ScopedAssertionMethods;
}

/** The cost estimator of `options`, called as its method (the options may be a class instance). */
function estimator(options: Pick<RecorderOptions, "estimateCost">): CostEstimator {
  return (turns) => options.estimateCost(turns);
}

/** Registers the scoped assertion `build` makes, inside the registry's guard. */
function addScoped(
  registry: EntryRegistry,
  build: () => EvidenceAssertion,
  entry: Entry | undefined,
): RuntimeHandle {
  return registry.guarded(() => {
    const built = build();
    return registry.register(
      {
        entry: "boolean",
        matcher: built.matcher,
        defaultCriterion: built.criterion,
        subject: undefined,
      },
      () => chain(built.run(), settledBoolean),
      entry,
    );
  });
}

/** `t.score(points)`: score evals only, finite points ≥ 0 (rule 3.5.7). */
function directScore(
  registry: EntryRegistry,
  points: number,
  entry: Entry,
): DirectScoreHandle {
  return registry.guarded(() => {
    if (registry.kind !== "score") {
      registry.raise(
        "score-in-pass-eval",
        "Cannot call t.score() in a pass eval: define the eval with defineScoreEval",
      );
    }
    if (typeof points !== "number" || !Number.isFinite(points) || points < 0) {
      registry.raise(
        "invalid-value",
        `Cannot call t.score(): expected a finite number ≥ 0, got ${String(points)}`,
      );
    }
    const spec = {
      entry: "direct-score" as const,
      matcher: "score",
      defaultCriterion: `score ${points}`,
      subject: points,
      points,
    };
    return registry.register(
      spec,
      () => ({
        result: "matched",
        measurement: null,
        expected: null,
        received: points,
        reason: null,
      }),
      entry,
    );
  }) as unknown as DirectScoreHandle;
}
