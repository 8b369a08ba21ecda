/**
 * Image/template builds in the admission chain (CHAIN-2, W2; sandboxes.md rules 63–66): every
 * distinct build key of the runnable slots is prepared once per Invocation (single-flight), at most
 * `maxConcurrency` at a time (independent of G), in the priority order of the first slot that needs
 * it, each bounded by BUILD_TIMEOUT_MS. A slot waits only for its own keys and holds nothing while
 * it does (counted queued); a slot without keys never waits. A key that cannot be prepared settles
 * every slot depending on it `errored` without dispatch; other slots are unaffected.
 */
import { AbortReason, type Clock, errorMessage, raceAbort, type RunEvent } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import type { PlannedSandbox, PlannedSlot } from "../plan/mod.ts";
import { BuildFailed, type BuildFailureCode } from "./_closing.ts";
import { BUILD_TIMEOUT_MS, DEFAULT_MAX_BUILD_CONCURRENCY } from "./constants.ts";

/** How the scheduler has a pair's sandbox artifacts prepared (optional in RunPlanOptions). */
export interface ArtifactBuilds {
  /**
   * Prepares one build key of `sandbox` (its provider's `prepareArtifacts`); rejects when the key
   * cannot be prepared. Must honour `signal`, which aborts on interrupt and at the build timeout.
   */
  prepare(
    sandbox: PlannedSandbox,
    key: string,
    options: { readonly signal: AbortSignal },
  ): Promise<unknown>;
  /** Builds at once (config `maxBuildConcurrency`). @default {DEFAULT_MAX_BUILD_CONCURRENCY} */
  readonly maxConcurrency?: number;
  /** Bound of one build. @default {BUILD_TIMEOUT_MS} */
  readonly timeoutMs?: number;
}

/** Build counters shown in snapshots. */
export interface BuildSnapshot {
  /** Builds in progress. */
  readonly running: number;
  /** Keys not started yet. */
  readonly pending: number;
  readonly done: number;
  readonly failed: number;
}

/** Longest build error excerpt kept in a diagnostic (sandboxes.md rule 68). */
const EXCERPT_CHARS = 600;

interface Build {
  readonly key: string;
  /** The sandbox of the first slot (in priority order) that needs the key. */
  readonly sandbox: PlannedSandbox;
  /** Resolves with the failure, or null once the key is prepared; never rejects. */
  readonly done: Promise<BuildFailed | null>;
  readonly settle: (failure: BuildFailed | null) => void;
  state: "pending" | "running" | "done" | "failed";
  failure: BuildFailed | null;
}

/** The builds of one run. */
export class BuildGate {
  readonly #builds: ArtifactBuilds | undefined;
  readonly #deps: { readonly clock: Clock; readonly signal: AbortSignal };
  readonly #byKey = new Map<string, Build>();
  /** Keys in start order. */
  readonly #order: Build[] = [];
  #next = 0;
  #running = 0;
  /** Builds in progress; the run awaits them so that none outlives it. */
  readonly #tasks = new Set<Promise<void>>();

  constructor(
    builds: ArtifactBuilds | undefined,
    deps: { readonly clock: Clock; readonly signal: AbortSignal },
  ) {
    this.#builds = builds;
    this.#deps = deps;
  }

  /** Registers the keys of `slots` (runnable, in priority order) and starts the first builds. */
  start(slots: readonly PlannedSlot[]): void {
    if (!this.#builds) return;
    for (const slot of slots) {
      const sandbox = slot.sandbox;
      if (!sandbox) continue;
      for (const key of sandbox.buildKeys) {
        if (this.#byKey.has(key)) continue;
        let settle!: (failure: BuildFailed | null) => void;
        const done = new Promise<BuildFailed | null>((resolve) => settle = resolve);
        const build: Build = { key, sandbox, done, settle, state: "pending", failure: null };
        this.#byKey.set(key, build);
        this.#order.push(build);
      }
    }
    this.#fill();
  }

  /** True while some build key of `slot` is not prepared (pending, running or failed). */
  needs(slot: PlannedSlot): boolean {
    const keys = slot.sandbox?.buildKeys;
    if (keys === undefined || this.#byKey.size === 0) return false;
    return keys.some((key) => {
      const build = this.#byKey.get(key);
      return build !== undefined && build.state !== "done";
    });
  }

  /**
   * Returns null when every key of `slot` is prepared (or it has none); else a promise that
   * resolves once all are, and rejects with {@link BuildFailed} as soon as one failed (CHAIN-2).
   */
  wait(slot: PlannedSlot): Promise<void> | null {
    const keys = slot.sandbox?.buildKeys;
    if (keys === undefined || this.#byKey.size === 0) return null;
    const open: Build[] = [];
    for (const key of keys) {
      const build = this.#byKey.get(key);
      if (!build || build.state === "done") continue;
      if (build.failure) return Promise.reject(build.failure);
      open.push(build);
    }
    if (open.length === 0) return null;
    return new Promise((resolve, reject) => {
      let left = open.length;
      for (const build of open) {
        build.done.then((failure) => {
          if (failure) reject(failure);
          else if (--left === 0) resolve();
        });
      }
    });
  }

  /** The current counters. */
  snapshot(): BuildSnapshot {
    let done = 0;
    let failed = 0;
    for (const build of this.#order) {
      if (build.state === "done") done++;
      if (build.state === "failed") failed++;
    }
    return { running: this.#running, pending: this.#order.length - this.#next, done, failed };
  }

  /** Resolves once no build runs any longer (after an interrupt, the aborted ones). */
  async settled(): Promise<void> {
    while (this.#tasks.size > 0) await Promise.all(this.#tasks);
  }

  /** Starts builds in order while fewer than `maxConcurrency` run. */
  #fill(): void {
    const limit = this.#builds?.maxConcurrency ?? DEFAULT_MAX_BUILD_CONCURRENCY;
    while (this.#running < limit && this.#next < this.#order.length) {
      const build = this.#order[this.#next++]!;
      if (this.#deps.signal.aborted) {
        this.#finish(build, cancelled(build.key));
        continue;
      }
      this.#running++;
      build.state = "running";
      const task = this.#run(build).then((failure) => {
        this.#tasks.delete(task);
        this.#running--;
        this.#finish(build, failure);
        this.#fill();
      });
      this.#tasks.add(task);
    }
  }

  #finish(build: Build, failure: BuildFailed | null): void {
    build.state = failure ? "failed" : "done";
    build.failure = failure;
    build.settle(failure);
  }

  /** One bounded build; resolves with its failure, or null when the key is prepared. */
  async #run(build: Build): Promise<BuildFailed | null> {
    const { clock, signal: stop } = this.#deps;
    const timeoutMs = this.#builds!.timeoutMs ?? BUILD_TIMEOUT_MS;
    const bound = new AbortController();
    const signal = AbortSignal.any([stop, bound.signal]);
    const timer = clock.setTimeout(() => bound.abort(new AbortReason("timeout")), timeoutMs);
    try {
      // A build that ignores its signal still ends the wait at the timeout or the interrupt.
      const work = Promise.resolve().then(() =>
        this.#builds!.prepare(build.sandbox, build.key, { signal })
      );
      work.catch(() => undefined);
      await raceAbort(work, signal);
      return null;
    } catch (error) {
      if (stop.aborted) return cancelled(build.key, error);
      if (bound.signal.aborted) {
        return failed(build.key, "sandbox-build-timeout", `no result within ${timeoutMs} ms`);
      }
      return failed(build.key, "sandbox-build-failed", errorMessage(error), error);
    } finally {
      clock.clearTimeout(timer);
    }
  }
}

/** The Run diagnostic of one slot whose build failed (sandboxes.md rules 66–67). */
export function buildFailureDiagnostic(
  slot: PlannedSlot,
  failure: BuildFailed,
  at: number,
): RunEvent {
  return {
    type: "diagnostic",
    at,
    level: "error",
    code: failure.code,
    message: failure.message,
    experimentId: slot.experimentId,
    evalId: slot.evalId,
    data: providerDetail(failure, slot) ?? {
      schema: "niceeval.sandbox-build-failure/v1",
      buildKey: failure.key.slice(0, 16),
      evalId: slot.evalId,
      attempt: slot.ordinal,
      phase: "sandbox.build",
      message: excerpt(failure.detail),
    },
    persist: true,
  };
}

/**
 * The detail a provider's build error gives for one slot (`detailFor(evalId, attempt)`: the
 * `errorCode` and `remediation` of sandboxes.md rules 67–70), found on the failure's cause chain.
 */
function providerDetail(
  failure: BuildFailed,
  slot: PlannedSlot,
): Readonly<Record<string, JsonValue>> | undefined {
  let cause: unknown = failure.cause;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++) {
    const detailFor = (cause as { detailFor?: unknown }).detailFor;
    if (typeof detailFor === "function") {
      return detailFor.call(cause, slot.evalId, slot.ordinal) as Readonly<
        Record<string, JsonValue>
      >;
    }
    cause = cause.cause;
  }
  return undefined;
}

function failed(
  key: string,
  code: BuildFailureCode,
  detail: string,
  cause?: unknown,
): BuildFailed {
  return new BuildFailed(
    key,
    code,
    `Cannot build sandbox artifact "${key.slice(0, 16)}": ${detail}`,
    detail,
    cause === undefined ? undefined : { cause },
  );
}

function cancelled(key: string, cause?: unknown): BuildFailed {
  return failed(key, "sandbox-build-cancelled", "the run was interrupted", cause);
}

/** The last EXCERPT_CHARS characters of a build error (code points kept whole). */
function excerpt(text: string): string {
  const chars = [...text];
  return chars.length <= EXCERPT_CHARS ? text : chars.slice(-EXCERPT_CHARS).join("");
}
