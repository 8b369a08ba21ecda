/**
 * Runtime handles (authoring.md §3.5). A handle configures exactly one entry: each option at most
 * once, before `orStop()` and before the body settles. Violations are recorded by the host and
 * thrown synchronously.
 */
import { type Entry, thresholdOf } from "./_entry.ts";
import { createStopSignal } from "./stop_signal.ts";
import type { Kind } from "./types.ts";

/** What handles need from their recorder. */
export interface HandleHost {
  readonly kind: Kind;
  isSettled(): boolean;
  /** Records an `AssertionAuthoringError` and throws it. */
  raise(code: string, message: string): never;
  /** Reserves a key; false when another entry of the Attempt already uses it. */
  claimKey(key: string): boolean;
  /** Registers an `orStop()` result so that an unawaited one can be counted. */
  trackStop(tracker: StopTracker): void;
}

/** Whether an `orStop()` result was ever awaited (`then`, `catch` or `finally`). */
export interface StopTracker {
  used: boolean;
}

const KEY_REGEXP = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** A runtime handle: the methods its entry kind and eval kind allow. */
export type RuntimeHandle = Readonly<Record<string, (...args: unknown[]) => unknown>>;

/**
 * Creates the handle of `entry`: the methods of its entry kind and eval kind only. Handles are
 * instances of one class per kind, with prototype methods: one object per entry instead of a
 * closure per method. Every configuration method returns the handle itself, so calls chain.
 */
export function createHandle(entry: Entry, host: HandleHost): RuntimeHandle {
  const handle = entry.entry === "direct-score"
    ? new EntryHandle(entry, host)
    : host.kind === "pass"
    ? entry.entry === "measurement"
      ? new PassMeasurementHandle(entry, host)
      : new PassBooleanHandle(entry, host)
    : entry.entry === "measurement"
    ? new ScoreMeasurementHandle(entry, host)
    : new ScoreBooleanHandle(entry, host);
  return Object.freeze(handle) as unknown as RuntimeHandle;
}

/** The rules of a handle, for the kind-specific subclasses (private fields are per class). */
let rulesOf: (handle: EntryHandle) => HandleRules;

/** `key`, `label` and `group`, which every handle has. */
class EntryHandle {
  readonly #rules: HandleRules;

  static {
    rulesOf = (handle) => handle.#rules;
  }

  constructor(entry: Entry, host: HandleHost) {
    this.#rules = new HandleRules(entry, host);
  }

  key(key: unknown): this {
    if (this.#rules.configurable("key")) this.#rules.key(key);
    return this;
  }

  label(label: unknown): this {
    const rules = this.#rules;
    if (rules.configurable("label")) {
      rules.once("label", rules.entry.label !== null);
      rules.entry.label = rules.text("label", label);
    }
    return this;
  }

  group(title: unknown): this {
    const rules = this.#rules;
    if (rules.configurable("group")) {
      rules.once("group", rules.entry.groupSegment !== null);
      rules.entry.groupSegment = rules.text("group", title);
    }
    return this;
  }
}

/** Pass eval, Boolean entry: `optional`, `gate()` and `orStop`. */
class PassBooleanHandle extends EntryHandle {
  optional(): this {
    const rules = rulesOf(this);
    if (rules.configurable("optional")) rules.entry.optional = true;
    return this;
  }

  gate(...args: unknown[]): this {
    const rules = rulesOf(this);
    if (rules.configurable("gate")) rules.gate(args);
    return this;
  }

  orStop(): Promise<unknown> {
    const rules = rulesOf(this);
    return orStop(rules.entry, rules.host);
  }
}

/** Pass eval, measurement: also `atLeast`. */
class PassMeasurementHandle extends PassBooleanHandle {
  atLeast(n: unknown): this {
    const rules = rulesOf(this);
    if (rules.configurable("atLeast")) rules.entry.atLeast = rules.ratio("atLeast", n);
    return this;
  }
}

/** Score eval, Boolean entry: `score` and `orStop`. */
class ScoreBooleanHandle extends EntryHandle {
  score(points: unknown): this {
    const rules = rulesOf(this);
    if (rules.configurable("score")) rules.entry.points = rules.points(points);
    return this;
  }

  orStop(): Promise<unknown> {
    const rules = rulesOf(this);
    return orStop(rules.entry, rules.host);
  }
}

/** Score eval, measurement: also `atLeast`. */
class ScoreMeasurementHandle extends ScoreBooleanHandle {
  atLeast(n: unknown): this {
    const rules = rulesOf(this);
    if (rules.configurable("atLeast")) rules.entry.atLeast = rules.ratio("atLeast", n);
    return this;
  }
}

/** The checks of rules 3.5.5–3.5.7 for one handle; every violation is raised by the host. */
class HandleRules {
  readonly entry: Entry;
  readonly host: HandleHost;

  constructor(entry: Entry, host: HandleHost) {
    this.entry = entry;
    this.host = host;
  }

  #criterion(): string {
    return JSON.stringify(this.entry.label ?? this.entry.defaultCriterion);
  }

  /** False for a discarded entry: configuring it has no effect and no rule to enforce. */
  configurable(method: string): boolean {
    if (this.entry.discarded) return false;
    if (this.entry.stopRequested) {
      this.host.raise(
        "handle-configured-after-orstop",
        `Cannot call .${method}() on ${this.#criterion()} after .orStop(): configure it first`,
      );
    }
    if (this.host.isSettled()) {
      this.host.raise(
        "handle-configured-after-settle",
        `Cannot call .${method}() on ${this.#criterion()}: the test body already settled`,
      );
    }
    return true;
  }

  once(method: string, isSet: boolean): void {
    if (isSet) {
      this.host.raise(
        "handle-option-repeated",
        `Cannot call .${method}() twice on ${this.#criterion()}`,
      );
    }
  }

  key(key: unknown): void {
    this.once("key", this.entry.key !== null);
    if (typeof key !== "string" || !KEY_REGEXP.test(key)) {
      this.host.raise(
        "invalid-key",
        `Cannot call .key(): ${JSON.stringify(key) ?? String(key)} does not match ${KEY_REGEXP}`,
      );
    }
    if (!this.host.claimKey(key)) {
      this.host.raise(
        "duplicate-key",
        `Cannot call .key(): key "${key}" is already used in this attempt`,
      );
    }
    this.entry.key = key;
  }

  text(method: string, value: unknown): string {
    if (typeof value !== "string" || value.trim() === "") {
      this.host.raise("invalid-value", `Cannot call .${method}(): expected a non-empty string`);
    }
    return value;
  }

  ratio(method: string, value: unknown): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > 1) {
      this.host.raise(
        "invalid-value",
        `Cannot call .${method}() on ${this.#criterion()}: expected a number in [0, 1], ` +
          `got ${String(value)}`,
      );
    }
    return value;
  }

  points(value: unknown): number {
    if (typeof value !== "number" || !Number.isFinite(value) || value <= 0) {
      this.host.raise(
        "invalid-value",
        `Cannot call .score() on ${this.#criterion()}: expected a finite number > 0, ` +
          `got ${String(value)}`,
      );
    }
    return value;
  }

  /** `gate()` on Booleans takes no threshold; `gate(n)` on measurements requires one. */
  gate(args: readonly unknown[]): void {
    if (this.entry.entry === "measurement") {
      this.entry.gateThreshold = this.ratio("gate", args[0]);
    } else if (args[0] !== undefined) {
      this.host.raise(
        "invalid-value",
        "Cannot call .gate() with a threshold on a Boolean assertion",
      );
    }
  }
}

function orStop(entry: Entry, host: HandleHost): Promise<unknown> {
  const criterion = () => JSON.stringify(entry.label ?? entry.defaultCriterion);
  if (entry.entry === "measurement" && thresholdOf(entry) === null) {
    const needed = host.kind === "pass" ? ".gate(n) or .atLeast(n)" : ".atLeast(n)";
    host.raise(
      "orstop-without-threshold",
      `Cannot call .orStop() on measurement ${criterion()} without a threshold: call ${needed} first`,
    );
  }
  entry.stopRequested = true;
  const tracker: StopTracker = { used: false };
  if (!entry.discarded) host.trackStop(tracker);
  return new TrackedPromise(
    () => (entry.done ?? Promise.resolve()).then(() => decide(entry)),
    tracker,
  );
}

/** Resolves with the refined subject or the measurement, or throws the stop signal. */
function decide(entry: Entry): unknown {
  const settled = entry.settled;
  const criterion = entry.label ?? entry.defaultCriterion;
  if (settled === undefined) throw createStopSignal(criterion, "still pending");
  if (entry.entry === "measurement") {
    const threshold = thresholdOf(entry) ?? 0;
    if (settled.measurement !== null && settled.measurement >= threshold) {
      return settled.measurement;
    }
    throw createStopSignal(
      criterion,
      settled.measurement === null ? settled.result : `below ${threshold} (${settled.measurement})`,
    );
  }
  if (settled.result === "matched") return settled.refined ? settled.refined.value : entry.subject;
  throw createStopSignal(criterion, settled.result);
}

/**
 * The result of `orStop()`: a promise that notes whether it was ever awaited. The underlying
 * promise is created on first use, so an ignored stop never becomes an unhandled rejection.
 */
class TrackedPromise<T> implements Promise<T> {
  readonly [Symbol.toStringTag] = "Promise";
  readonly #make: () => Promise<T>;
  readonly #tracker: StopTracker;
  #promise: Promise<T> | undefined;

  constructor(make: () => Promise<T>, tracker: StopTracker) {
    this.#make = make;
    this.#tracker = tracker;
  }

  #use(): Promise<T> {
    this.#tracker.used = true;
    this.#promise ??= this.#make();
    return this.#promise;
  }

  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.#use().then(onFulfilled, onRejected);
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#use().catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.#use().finally(onFinally);
  }
}
