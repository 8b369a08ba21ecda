/**
 * Carry decisions (CARRY-1 … CARRY-6): per (experiment, eval) one source Run — the latest published
 * Run of that experiment containing the eval — and per ordinal whether its Attempt can fill the
 * current slot.
 */
import type {
  CarryDecider,
  CarryDecision,
  CarrySource,
  RerunTier,
  RunReason,
} from "../plan/mod.ts";
import { slotIdOf } from "./ids.ts";
import type { PublishedRun, RecordReader, StoredAttempt } from "./reader.ts";

/** One ordinal of a source Run. */
export interface Candidate {
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
export type Candidates = ReadonlyMap<
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

/** Picks the source Run of every pair (CARRY-1) and reads the ordinals it holds. */
export async function loadCandidates(
  reader: RecordReader,
  pairs: readonly { readonly experimentId: string; readonly evalId: string }[],
): Promise<Candidates> {
  const { runs } = await reader.scan();
  const byExperiment = new Map<string, PublishedRun[]>();
  for (const run of runs) {
    byExperiment.set(run.doc.experimentId, [
      ...(byExperiment.get(run.doc.experimentId) ?? []),
      run,
    ]);
  }
  for (const list of byExperiment.values()) {
    list.sort((a, b) =>
      b.startedAtMs - a.startedAtMs || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0)
    );
  }
  const out = new Map<string, { run: PublishedRun; ordinals: Map<number, Candidate> }>();
  await Promise.all(pairs.map(async ({ experimentId, evalId }) => {
    const run = byExperiment.get(experimentId)?.find((r) =>
      r.doc.expectedSlots.some((s) => s.evalId === evalId)
    );
    if (!run) return;
    const ordinals = new Map<number, Candidate>();
    for (const slot of run.doc.expectedSlots.filter((s) => s.evalId === evalId)) {
      const member = await reader.member(run, slotIdOf(evalId, slot.ordinal));
      const ref = member.attempt;
      const stored = ref ? await reader.attempt(ref.originRunId, ref.attemptId) : null;
      ordinals.set(slot.ordinal, {
        run,
        ordinal: slot.ordinal,
        stored,
        originRunId: ref?.originRunId ?? null,
        attemptId: ref?.attemptId ?? null,
        inputFingerprint: slot.inputFingerprint,
      });
    }
    out.set(pairKey(experimentId, evalId), { run, ordinals });
  }));
  return out;
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
    if (timeoutMs !== null && c.stored.doc.durationMs > timeoutMs) {
      return run("duration-exceeds-timeout", null, source);
    }
    return { action: "carry", source };
  };
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
