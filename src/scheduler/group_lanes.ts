/**
 * Group lanes (scheduling.md GRP-1 … GRP-3, GRP-6, CHAIN-1): the runnable slots of one
 * (Experiment, eval group) run strictly one after another, members in normalized Eval-ID order
 * with each member's ordinals consecutive. A physical failure of the group sandbox either stops the
 * lane (`stop-group`) or lets the next slot create a replacement (`replace-sandbox`) until the same
 * phase fails twice.
 */
import type { RunEvent } from "../_shared/mod.ts";
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import type { GroupSandboxPhase } from "./control.ts";

/** What a settled slot's failure means for its lane. */
type GroupDecision =
  | { readonly action: "replace"; readonly phase: GroupSandboxPhase }
  | { readonly action: "stop"; readonly phase: GroupSandboxPhase };

interface Lane {
  readonly experimentIndex: number;
  readonly experimentId: string;
  readonly groupId: string;
  readonly onUnavailable: "stop-group" | "replace-sandbox";
  /** Plan positions in lane order. */
  readonly positions: readonly number[];
  readonly settled: Map<number, { promise: Promise<void>; resolve: () => void }>;
  readonly failures: Map<GroupSandboxPhase, number>;
  /** Failures reported by the slot currently running, by position. */
  readonly reported: Map<number, GroupSandboxPhase>;
  stoppedIn: GroupSandboxPhase | null;
}

/** The group lanes of one plan. */
export class GroupLanes {
  readonly #lanes = new Map<string, Lane>();
  readonly #byPosition = new Map<number, Lane>();
  /** Successor entries to run when the slot at a position settles (see {@link onPredecessorSettled}). */
  readonly #entries = new Map<number, () => void>();
  readonly #settledPositions = new Set<number>();

  constructor(plan: Plan) {
    const grouped = plan.slots.filter((s) => s.groupId !== null && s.carry.action === "run");
    grouped.sort((a, b) =>
      a.experimentIndex - b.experimentIndex || compare(a.evalId, b.evalId) ||
      a.ordinal - b.ordinal
    );
    for (const slot of grouped) {
      const key = `${slot.experimentIndex}\u0000${slot.groupId}`;
      let lane = this.#lanes.get(key);
      if (!lane) {
        lane = {
          experimentIndex: slot.experimentIndex,
          experimentId: slot.experimentId,
          groupId: slot.groupId!,
          onUnavailable: slot.sandbox?.onUnavailable ?? "stop-group",
          positions: [],
          settled: new Map(),
          failures: new Map(),
          reported: new Map(),
          stoppedIn: null,
        };
        this.#lanes.set(key, lane);
      }
      (lane.positions as number[]).push(slot.position);
      let resolve!: () => void;
      const promise = new Promise<void>((r) => resolve = r);
      lane.settled.set(slot.position, { promise, resolve });
      this.#byPosition.set(slot.position, lane);
    }
  }

  /** The lane order of every group lane, as plan positions (for tests and the panel). */
  lanes(): { experimentId: string; groupId: string; positions: readonly number[] }[] {
    return [...this.#lanes.values()].map((l) => ({
      experimentId: l.experimentId,
      groupId: l.groupId,
      positions: l.positions,
    }));
  }

  /** The settlement of the slot before `slot` in its lane, or null when there is none (CHAIN-1). */
  predecessor(slot: PlannedSlot): Promise<void> | null {
    const lane = this.#byPosition.get(slot.position);
    if (!lane) return null;
    const i = lane.positions.indexOf(slot.position);
    return i > 0 ? lane.settled.get(lane.positions[i - 1]!)!.promise : null;
  }

  /**
   * Runs `enter` synchronously in the step that settles `slot`'s predecessor, before its wait
   * resolves: the successor takes its places at its first gate before the predecessor's permit
   * and global slot are released, and is ranked for them (PRIO-1, PRIO-7). Nothing happens when
   * there is no predecessor or it already settled.
   */
  onPredecessorSettled(slot: PlannedSlot, enter: () => void): void {
    const lane = this.#byPosition.get(slot.position);
    if (!lane) return;
    const i = lane.positions.indexOf(slot.position);
    const previous = lane.positions[i - 1];
    if (previous === undefined || this.#settledPositions.has(previous)) return;
    this.#entries.set(previous, enter);
  }

  /** Marks `slot` settled (any outcome): the next slot of its lane may go. Idempotent. */
  settle(slot: PlannedSlot): void {
    const lane = this.#byPosition.get(slot.position);
    if (!lane || this.#settledPositions.has(slot.position)) return;
    this.#settledPositions.add(slot.position);
    const enter = this.#entries.get(slot.position);
    this.#entries.delete(slot.position);
    enter?.();
    lane.settled.get(slot.position)?.resolve();
  }

  /** The phase that stopped `slot`'s lane, or null while it runs on. */
  stoppedIn(slot: PlannedSlot): GroupSandboxPhase | null {
    return this.#byPosition.get(slot.position)?.stoppedIn ?? null;
  }

  /** The other positions of `slot`'s lane (for counting unstarted slots). */
  positionsOf(slot: PlannedSlot): readonly number[] {
    return this.#byPosition.get(slot.position)?.positions ?? [];
  }

  /** The running `slot` saw its group sandbox fail in `phase`; the first report wins. */
  report(slot: PlannedSlot, phase: GroupSandboxPhase): void {
    const lane = this.#byPosition.get(slot.position);
    if (lane && !lane.reported.has(slot.position)) lane.reported.set(slot.position, phase);
  }

  /** Decides at the settlement of `slot`: nothing, a replacement, or a stopped lane (GRP-6). */
  decide(slot: PlannedSlot): GroupDecision | null {
    const lane = this.#byPosition.get(slot.position);
    const phase = lane?.reported.get(slot.position);
    if (!lane || phase === undefined || lane.stoppedIn !== null) return null;
    const count = (lane.failures.get(phase) ?? 0) + 1;
    lane.failures.set(phase, count);
    if (lane.onUnavailable === "replace-sandbox" && count < 2) return { action: "replace", phase };
    lane.stoppedIn = phase;
    return { action: "stop", phase };
  }

  /** The group id and experiment of `slot`'s lane. */
  describe(slot: PlannedSlot): { experimentId: string; groupId: string } | undefined {
    const lane = this.#byPosition.get(slot.position);
    return lane ? { experimentId: lane.experimentId, groupId: lane.groupId } : undefined;
  }
}

/**
 * The GRP-6 diagnostic of a lane decision: a replacement warning, or an error that counts the
 * lane's `unstarted` slots.
 */
export function groupDiagnostic(
  decision: GroupDecision,
  lane: { readonly experimentId: string; readonly groupId: string },
  o: { readonly unstarted: number; readonly at: number },
): RunEvent {
  const { phase } = decision;
  const { experimentId, groupId } = lane;
  const data = { experimentId, evalGroupId: groupId, phase };
  const replace = decision.action === "replace";
  return {
    type: "diagnostic",
    at: o.at,
    level: replace ? "warning" : "error",
    code: replace ? "eval-group-replacing-sandbox" : "eval-group-unavailable",
    message: replace
      ? `the sandbox of eval group ${groupId} failed in ${phase}; the next member gets a new one`
      : `the sandbox of eval group ${groupId} failed in ${phase}; ${o.unstarted} unstarted slot(s) skipped`,
    experimentId,
    evalId: null,
    data: replace ? data : { ...data, unstarted: o.unstarted },
    persist: true,
  };
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
