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
   * stack of every registration: frames of its call and above are niceeval's own.
   */
  callSite(below: (...args: never[]) => unknown): string | null;
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
  const registry = new EntryRegistry(options.kind, options);
  return {
    check: ((...args: unknown[]) => check(registry, args)) as unknown as AssertionRecorder<
      K
    >["check"],
    scoped: (snapshot, scopedOptions) =>
      scopedMethods(
        registry,
        snapshot,
        options.estimateCost,
        scopedOptions?.orders ?? true,
      ) as ScopedAssertionMethods<K>,
    score: (points) => directScore(registry, points),
    settle: () => registry.settle(),
    pending: () => registry.pending(),
    get discardedAfterSettle() {
      return registry.discarded;
    },
    get authoringErrors() {
      return registry.authoringErrors.slice();
    },
    unawaitedStops: () => registry.unawaitedStops(),
    seal: () => registry.seal(),
  };
}

/** `t.check(value, match)` (rules 3.5.1 and 3.5.8). */
function check(registry: EntryRegistry, args: readonly unknown[]): RuntimeHandle {
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
      );
    }
    const impl = read.impl;
    return registry.register(
      { ...spec, entry: "measurement" },
      () => chain(impl.measure(subject), (raw) => settledMeasure(toMeasureOutcome(raw, impl.base))),
    );
  });
}

/**
 * The scoped assertions of one scope; each call reads `snapshot()` (§3.4). The methods are
 * closures, not prototype methods, so that they also work destructured; they share one scope.
 */
function scopedMethods(
  registry: EntryRegistry,
  snapshot: () => EvidenceSnapshot,
  estimateCost: CostEstimator,
  orders: boolean,
): ScopedAssertionMethods {
  const r = registry;
  const methods: Record<string, (...args: never[]) => RuntimeHandle> = {
    succeeded: () => addScoped(r, () => evidence.succeeded(snapshot())),
    calledTool: (match: unknown, opts?: unknown) =>
      addScoped(r, () => evidence.calledTool(snapshot(), match, opts)),
    notCalledTool: (match: unknown) =>
      addScoped(r, () => evidence.notCalledTool(snapshot(), match)),
    usedNoTools: () => addScoped(r, () => evidence.usedNoTools(snapshot())),
    maxToolCalls: (max: unknown) => addScoped(r, () => evidence.maxToolCalls(snapshot(), max)),
    noFailedActions: () => addScoped(r, () => evidence.noFailedActions(snapshot())),
    event: (match: unknown, opts?: unknown) =>
      addScoped(r, () => events.event(snapshot(), match, opts)),
    notEvent: (match: unknown) => addScoped(r, () => events.notEvent(snapshot(), match)),
    maxTokens: (max: unknown) => addScoped(r, () => evidence.maxTokens(snapshot(), max)),
    maxCost: (usd: unknown) => addScoped(r, () => evidence.maxCost(snapshot(), usd, estimateCost)),
  };
  if (orders) {
    methods.toolOrder = (matches: unknown) =>
      addScoped(r, () => events.toolOrder(snapshot(), matches));
    methods.eventOrder = (matches: unknown) =>
      addScoped(r, () => events.eventOrder(snapshot(), matches));
  }
  // Runtime handles carry exactly the methods of their kind; the public types describe them.
  return Object.freeze(methods) as unknown as ScopedAssertionMethods;
}

/** Registers the scoped assertion `build` makes, inside the registry's guard. */
function addScoped(registry: EntryRegistry, build: () => EvidenceAssertion): RuntimeHandle {
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
    );
  });
}

/** `t.score(points)`: score evals only, finite points ≥ 0 (rule 3.5.7). */
function directScore(registry: EntryRegistry, points: number): DirectScoreHandle {
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
    );
  }) as unknown as DirectScoreHandle;
}
