/**
 * The outcomes of a run in compact form, by plan position (issue 20: memory that does not grow with
 * objects per Attempt). A passed or scored Attempt without error, skip or failed assertion, the
 * usual case, is kept as numbers in typed arrays and its ID; its report row is rebuilt on demand.
 * Any other outcome is kept as the report reads it ({@link reportedResult}).
 */
import type { AttemptResult, AttemptVerdict, SlotOutcome } from "../_shared/mod.ts";
import { latin1Text, readHex, writeHex } from "../_shared/mod.ts";
import type { PlannedSlot } from "../plan/mod.ts";
import { locatorOf } from "../record/mod.ts";
import { NO_DETAILS, type ReportedResult, reportedResult, type SlotReport } from "./_reported.ts";

const CARRIED: SlotOutcome = Object.freeze({ kind: "carried" });
/** Bytes of a UUID. */
const UUID_BYTES = 16;
/** Where each group of a UUID's text starts, and how many bytes it spells. */
const UUID_GROUPS: readonly (readonly [number, number])[] = [[0, 4], [9, 2], [14, 2], [19, 2], [
  24,
  6,
]];
const UUID_LENGTH = 36;
/** The text of one AttemptId, rebuilt in place: the dashes stay, the hex digits are rewritten. */
const UUID_TEXT = new Uint8Array(UUID_LENGTH);
for (const at of [8, 13, 18, 23]) UUID_TEXT[at] = "-".charCodeAt(0);

/** Outcomes by plan position; fed by `runPlan`'s `onOutcome`. */
export class OutcomeTable {
  /** Positions kept compact: 1 passed, 2 scored; 0 elsewhere. */
  readonly #compact: Uint8Array;
  /** {@link UUID_BYTES} bytes per compact position: its AttemptId, a lowercase UUID. */
  readonly #attemptId: Uint8Array;
  /** AttemptIds of compact positions that are not lowercase UUIDs, kept as given. */
  readonly #otherAttemptId = new Map<number, string>();
  readonly #startedAt: Float64Array;
  readonly #endedAt: Float64Array;
  /** NaN for null. */
  readonly #score: Float64Array;
  readonly #possible: Float64Array;
  readonly #passAt: Float64Array;
  readonly #cost: Float64Array;
  /** NaN when the Attempt reported no usage; a missing count in a usage is NaN too. */
  readonly #inputTokens: Float64Array;
  readonly #outputTokens: Float64Array;
  /** 1 where a usage was reported. */
  readonly #hasUsage: Uint8Array;
  /** Every outcome not kept compact. */
  readonly #other = new Map<number, SlotOutcome>();

  constructor(size: number) {
    this.#compact = new Uint8Array(size);
    this.#attemptId = new Uint8Array(size * UUID_BYTES);
    this.#startedAt = new Float64Array(size);
    this.#endedAt = new Float64Array(size);
    this.#score = new Float64Array(size);
    this.#possible = new Float64Array(size);
    this.#passAt = new Float64Array(size);
    this.#cost = new Float64Array(size);
    this.#inputTokens = new Float64Array(size);
    this.#outputTokens = new Float64Array(size);
    this.#hasUsage = new Uint8Array(size);
  }

  /** How many outcomes are kept as objects rather than numbers (tests). */
  get objectCount(): number {
    return this.#other.size;
  }

  /** Stores the final outcome of `slot`. */
  record(slot: PlannedSlot, outcome: SlotOutcome): void {
    const p = slot.position;
    if (outcome.kind === "carried") {
      this.#other.set(p, CARRIED);
      return;
    }
    if (outcome.kind !== "executed" || !this.#keepCompact(p, outcome.result)) {
      this.#other.set(
        p,
        outcome.kind === "executed"
          ? { kind: "executed", result: reportedResult(outcome.result) }
          : outcome,
      );
    }
  }

  /**
   * The report row of a compact position, rebuilt from its numbers; undefined for any other
   * position (read its {@link outcome} instead).
   */
  compactRow(slot: PlannedSlot, runId: string): SlotReport | undefined {
    return this.#compact[slot.position] === 0 ? undefined : new CompactRow(this, slot, runId);
  }

  /** The outcome of a position not kept compact. */
  outcome(position: number): SlotOutcome | undefined {
    return this.#other.get(position);
  }

  /** The result of a compact position, rebuilt (`experimentId` … `kind` come from the slot). */
  resultAt(slot: PlannedSlot): ReportedResult {
    const p = slot.position;
    return {
      attemptId: this.attemptIdAt(p),
      experimentId: slot.experimentId,
      evalId: slot.evalId,
      ordinal: slot.ordinal,
      kind: slot.kind,
      verdict: this.verdictAt(p),
      score: nullable(this.#score[p]!),
      possible: nullable(this.#possible[p]!),
      passAt: nullable(this.#passAt[p]!),
      skipReason: null,
      error: null,
      startedAt: this.#startedAt[p]!,
      endedAt: this.#endedAt[p]!,
      usage: this.#hasUsage[p] === 1 ? this.#usageAt(p) : null,
      estimatedCostUSD: nullable(this.#cost[p]!),
      details: NO_DETAILS,
    };
  }

  verdictAt(position: number): AttemptVerdict {
    return this.#compact[position] === 2 ? "scored" : "passed";
  }

  attemptIdAt(position: number): string {
    const other = this.#otherAttemptId.get(position);
    if (other !== undefined) return other;
    let at = position * UUID_BYTES;
    for (const [from, count] of UUID_GROUPS) {
      writeHex(this.#attemptId, at, count, UUID_TEXT, from);
      at += count;
    }
    return latin1Text(UUID_TEXT);
  }

  #storeAttemptId(position: number, id: string): void {
    let at = position * UUID_BYTES;
    let uuid = id.length === UUID_LENGTH;
    for (const [from, count] of UUID_GROUPS) {
      if (!uuid) break;
      uuid = (from === 0 || id[from - 1] === "-") && readHex(id, from, count, this.#attemptId, at);
      at += count;
    }
    if (!uuid) this.#otherAttemptId.set(position, id);
  }

  scoreAt(position: number): number | null {
    return nullable(this.#score[position]!);
  }

  possibleAt(position: number): number | null {
    return nullable(this.#possible[position]!);
  }

  passAtAt(position: number): number | null {
    return nullable(this.#passAt[position]!);
  }

  durationAt(position: number): number {
    return this.#endedAt[position]! - this.#startedAt[position]!;
  }

  #usageAt(p: number): ReportedResult["usage"] {
    const usage: { inputTokens?: number; outputTokens?: number } = {};
    if (!Number.isNaN(this.#inputTokens[p])) usage.inputTokens = this.#inputTokens[p]!;
    if (!Number.isNaN(this.#outputTokens[p])) usage.outputTokens = this.#outputTokens[p]!;
    return usage;
  }

  /** Keeps `r` as numbers when nothing but numbers and its ID is worth keeping. */
  #keepCompact(p: number, r: AttemptResult): boolean {
    if (r.verdict !== "passed" && r.verdict !== "scored") return false;
    if (r.error !== null || r.skipReason !== null) return false;
    if (r.details.assertions.some((a) => a.status === "failed")) return false;
    this.#compact[p] = r.verdict === "scored" ? 2 : 1;
    this.#storeAttemptId(p, r.attemptId);
    this.#startedAt[p] = r.startedAt;
    this.#endedAt[p] = r.endedAt;
    this.#score[p] = r.score ?? NaN;
    this.#possible[p] = r.possible ?? NaN;
    this.#passAt[p] = r.passAt ?? NaN;
    this.#cost[p] = r.estimatedCostUSD ?? NaN;
    this.#hasUsage[p] = r.usage === null ? 0 : 1;
    this.#inputTokens[p] = r.usage?.inputTokens ?? NaN;
    this.#outputTokens[p] = r.usage?.outputTokens ?? NaN;
    return true;
  }
}

function nullable(value: number): number | null {
  return Number.isNaN(value) ? null : value;
}

/** The row of a compact position: every field read from the table when asked for. */
class CompactRow implements SlotReport {
  readonly slot: PlannedSlot;
  readonly originRunId: string;
  readonly #table: OutcomeTable;

  constructor(table: OutcomeTable, slot: PlannedSlot, runId: string) {
    this.#table = table;
    this.slot = slot;
    this.originRunId = runId;
  }

  get state(): "executed" {
    return "executed";
  }
  get verdict(): AttemptVerdict {
    return this.#table.verdictAt(this.slot.position);
  }
  get attemptId(): string {
    return this.#table.attemptIdAt(this.slot.position);
  }
  get locator(): string {
    return locatorOf(this.attemptId);
  }
  get result(): ReportedResult {
    return this.#table.resultAt(this.slot);
  }
  get reason(): null {
    return null;
  }
  get message(): null {
    return null;
  }
  get score(): number | null {
    return this.#table.scoreAt(this.slot.position);
  }
  get possible(): number | null {
    return this.#table.possibleAt(this.slot.position);
  }
  get passAt(): number | null {
    return this.#table.passAtAt(this.slot.position);
  }
  get durationMs(): number {
    return this.#table.durationAt(this.slot.position);
  }
}
