/**
 * Carry decisions (CARRY-1 … CARRY-6): per (experiment, eval) one source Run — the latest published
 * Run of that experiment containing the eval — and per ordinal whether its Attempt can fill the
 * current slot. The result of a carried failed or errored Attempt can be read back for the reports
 * ({@link carriedResults}).
 */
import type { AttemptResult, SealedAssertion, Usage } from "../_shared/mod.ts";
import type {
  CarryDecider,
  CarryDecision,
  CarrySource,
  RerunTier,
  RunReason,
} from "../plan/mod.ts";
import { type PublishedRun, RecordReader, type StoredAttempt } from "./reader.ts";
import type { AssertionsDoc, RunDoc } from "./schema.ts";

/** One ordinal of a source Run. */
interface Candidate {
  /** The Record root it was read from. */
  readonly root: string;
  readonly run: PublishedRun;
  readonly ordinal: number;
  /** The Attempt that filled it, when it executed or was carried. */
  readonly stored: StoredAttempt | null;
  readonly originRunId: string | null;
  readonly attemptId: string | null;
  /** The source Run's recorded input fingerprint of the slot. */
  readonly inputFingerprint: string;
}

/** Source Run and ordinal candidates of every (experiment, eval). */
type Candidates = ReadonlyMap<
  string,
  { readonly run: PublishedRun; readonly ordinals: ReadonlyMap<number, Candidate> }
>;

/** The current identity the candidates are compared with. */
export interface CurrentIdentity {
  configHash(experimentId: string): string;
  inputFingerprint(evalId: string): string;
  digest(experimentId: string, evalId: string): string;
}

const pairKey = (experimentId: string, evalId: string) => `${experimentId}\u0000${evalId}`;

/** Parallel member/Attempt reads of {@link loadCandidates} (the reader bounds file reads too). */
const CANDIDATE_READS = 32;

/** The source Run of one pair and the expected slots it holds for the eval. */
interface Source {
  readonly run: PublishedRun;
  readonly slots: RunDoc["expectedSlots"][number][];
}

/**
 * Picks the source Run of every pair (CARRY-1) and reads the ordinals it holds. Linear (REC-7a):
 * each experiment's published Runs are visited latest first, each expected slot once, until every
 * requested eval of the experiment has its source; then one member (and its Attempt) per source
 * slot is read, a bounded number at a time.
 */
export async function loadCandidates(
  reader: RecordReader,
  pairs: readonly { readonly experimentId: string; readonly evalId: string }[],
): Promise<Candidates> {
  const { runs } = await reader.scan();
  const sources = pickSources(runs, pairs);
  const work: { key: string; source: Source; slot: Source["slots"][number] }[] = [];
  for (const [key, source] of sources) {
    for (const slot of source.slots) work.push({ key, source, slot });
  }
  const out = new Map<string, { run: PublishedRun; ordinals: Map<number, Candidate> }>();
  for (const [key, source] of sources) out.set(key, { run: source.run, ordinals: new Map() });
  await forEachBounded(work, CANDIDATE_READS, async ({ key, source, slot }) => {
    const { member, stored } = await reader.slot(source.run, slot);
    const ref = member.attempt;
    out.get(key)!.ordinals.set(slot.ordinal, {
      root: reader.root,
      run: source.run,
      ordinal: slot.ordinal,
      stored,
      originRunId: ref?.originRunId ?? null,
      attemptId: ref?.attemptId ?? null,
      inputFingerprint: slot.inputFingerprint,
    });
  });
  return out;
}

/** The source Run of every pair that has one: the latest published Run holding the eval. */
function pickSources(
  runs: readonly PublishedRun[],
  pairs: readonly { readonly experimentId: string; readonly evalId: string }[],
): Map<string, Source> {
  const wanted = new Map<string, Set<string>>();
  for (const { experimentId, evalId } of pairs) {
    let evals = wanted.get(experimentId);
    if (!evals) wanted.set(experimentId, evals = new Set());
    evals.add(evalId);
  }
  const byExperiment = new Map<string, PublishedRun[]>();
  for (const run of runs) {
    if (!wanted.has(run.doc.experimentId)) continue;
    let list = byExperiment.get(run.doc.experimentId);
    if (!list) byExperiment.set(run.doc.experimentId, list = []);
    list.push(run);
  }
  const sources = new Map<string, Source>();
  for (const [experimentId, list] of byExperiment) {
    list.sort((a, b) =>
      b.startedAtMs - a.startedAtMs || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0)
    );
    const evals = wanted.get(experimentId)!;
    let missing = evals.size;
    for (const run of list) {
      if (missing === 0) break;
      for (const slot of run.doc.expectedSlots) {
        if (!evals.has(slot.evalId)) continue;
        const key = pairKey(experimentId, slot.evalId);
        let source = sources.get(key);
        if (!source) {
          sources.set(key, source = { run, slots: [] });
          missing--;
        }
        if (source.run === run) source.slots.push(slot);
      }
    }
  }
  return sources;
}

/** Runs `fn` over `items` with at most `limit` calls in flight; rejects with the first failure. */
async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { readonly error: unknown } | undefined;
  const worker = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  // `limit` workers: a bounded Promise.all.
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure) throw failure.error;
}

/** The candidate of one ordinal, if its pair has a source Run holding it. */
export function candidateOf(
  candidates: Candidates,
  experimentId: string,
  evalId: string,
  ordinal: number,
): Candidate | undefined {
  return candidates.get(pairKey(experimentId, evalId))?.ordinals.get(ordinal);
}

/** Builds the plan's carry decider from the candidates (CARRY-2, CARRY-3, CARRY-6). */
export function carryDecider(
  candidates: Candidates,
  current: CurrentIdentity,
  tier: RerunTier,
): CarryDecider {
  return ({ experimentId, evalId, ordinal, timeoutMs }) => {
    const c = candidateOf(candidates, experimentId, evalId, ordinal);
    if (!c) return run("new", null, null);
    const source = sourceOf(c);
    if (!c.stored || !source) return run("verdict-not-eligible", null, null);
    if (c.stored.doc.executionIdentityDigest !== current.digest(experimentId, evalId)) {
      return run("identity-changed", changedParts(c, current, experimentId, evalId), source);
    }
    const verdict = c.stored.verdict;
    if (c.stored.doc.outcome !== "completed" || !["passed", "failed", "scored"].includes(verdict)) {
      return run("verdict-not-eligible", null, source);
    }
    if (tier === "all" || (tier === "failed" && verdict === "failed")) {
      return run("rerun-tier", null, source);
    }
    // The measured duration is the time that counted against the deadline (TIME-2).
    if (timeoutMs !== null && c.stored.doc.timedMs > timeoutMs) {
      return run("duration-exceeds-timeout", null, source);
    }
    if (verdict === "failed" || verdict === "errored") {
      CARRIED.set(source, { root: c.root, stored: c.stored });
    }
    return { action: "carry", source };
  };
}

/**
 * Where the details of each carried failed or errored Attempt lie, by the carry source the plan
 * holds: only these are ever read back, and only when a report asks ({@link carriedResults}).
 */
const CARRIED = new WeakMap<
  CarrySource,
  { readonly root: string; readonly stored: StoredAttempt }
>();

/**
 * The results of carried failed or errored Attempts as the end-of-run reports read them
 * (cli.md OUT-H14, JUNIT-3), by carry source: the Attempt document with its error, and of its
 * assertions the failed ones, read back from the origin Run (one read per Attempt, a bounded
 * number at a time). Sources of other verdicts, and Attempts that can no longer be read, are left
 * out: the reports then point to `niceeval show`.
 */
export async function carriedResults(
  sources: readonly CarrySource[],
): Promise<Map<CarrySource, AttemptResult>> {
  const out = new Map<CarrySource, AttemptResult>();
  const readers = new Map<string, RecordReader>();
  const work = sources.flatMap((source) => {
    const found = CARRIED.get(source);
    return found ? [{ source, ...found }] : [];
  });
  await forEachBounded(work, CANDIDATE_READS, async ({ source, root, stored }) => {
    let reader = readers.get(root);
    if (!reader) readers.set(root, reader = new RecordReader(root));
    try {
      out.set(source, storedResult(stored, await reader.assertions(stored)));
    } catch {
      // Damaged since planning: the reports fall back to `niceeval show`, which says why.
    }
  });
  return out;
}

/**
 * A stored Attempt as an {@link AttemptResult} with the failed assertions only (like the retained
 * result of an executed Attempt); the transcript, phases, logs and retries are not read.
 */
function storedResult(stored: StoredAttempt, assertions: AssertionsDoc): AttemptResult {
  const doc = stored.doc;
  const failed = (assertions.entries as unknown as SealedAssertion[])
    .filter((a) => a.status === "failed");
  const error = doc.error;
  return {
    attemptId: doc.attemptId,
    experimentId: doc.experimentId,
    evalId: doc.evalId,
    ordinal: doc.ordinal,
    kind: doc.kind,
    outcome: doc.outcome,
    verdict: stored.verdict,
    score: doc.score,
    scoreResult: null,
    ...(doc.kind === "score" ? { possible: doc.possible ?? null, passAt: doc.passAt ?? null } : {}),
    skipReason: doc.skipReason,
    error: error
      ? {
        code: error.code,
        phase: error.phase,
        message: error.message,
        scope: error.scope as NonNullable<AttemptResult["error"]>["scope"],
        location: error.location ?? null,
        stack: error.stack ?? null,
      }
      : null,
    startedAt: Date.parse(doc.startedAt),
    endedAt: Date.parse(doc.endedAt),
    timedMs: doc.timedMs,
    usage: usageOf(doc.usage),
    estimatedCostUSD: doc.estimatedCostUSD,
    turnCount: 0,
    retries: [],
    details: { assertions: failed, turns: [], phases: [], diagnostics: [], logs: [] },
  };
}

function usageOf(usage: StoredAttempt["doc"]["usage"]): Usage | null {
  if (!usage) return null;
  const out: Usage = {};
  if (usage.inputTokens !== null) out.inputTokens = usage.inputTokens;
  if (usage.outputTokens !== null) out.outputTokens = usage.outputTokens;
  return out;
}

function sourceOf(c: Candidate): CarrySource | null {
  if (!c.stored || c.attemptId === null || c.originRunId === null) return null;
  return {
    runId: c.run.runId,
    attemptId: c.attemptId,
    originRunId: c.originRunId,
    verdict: c.stored.verdict,
    durationMs: c.stored.doc.durationMs,
    score: c.stored.doc.score,
    ...(c.stored.doc.kind === "score"
      ? { possible: c.stored.doc.possible ?? null, passAt: c.stored.doc.passAt ?? null }
      : {}),
  };
}

function changedParts(
  c: Candidate,
  current: CurrentIdentity,
  experimentId: string,
  evalId: string,
): string {
  const parts: string[] = [];
  if (c.run.doc.config.configHash !== current.configHash(experimentId)) parts.push("config");
  if (c.inputFingerprint !== current.inputFingerprint(evalId)) parts.push("input");
  return parts.length > 0 ? parts.join(",") : "config,input";
}

function run(reason: RunReason, detail: string | null, source: CarrySource | null): CarryDecision {
  return { action: "run", reason, detail, source };
}
