/**
 * Replays a run's events against the grant rule of PRIO-1: an `attempt_start` must not go to a
 * slot while a slot with a smaller key could have used the same capacity — its group predecessor
 * ended (CHAIN-1), its experiment runs below its cap (EXP-1) and no running Attempt holds its
 * exclusive lane (LANE). Sound for suites in which a capped experiment with more than one permit
 * has no groups and no lane, and a laned experiment has neither cap nor groups: there, the
 * permit and lane holders that have not started yet are always the smallest waiting keys.
 */
import type { RunEvent } from "../../src/_shared/mod.ts";
import type { Plan } from "../../src/plan/mod.ts";
import { GroupLanes } from "../../src/scheduler/group_lanes.ts";
import { priorityOrder } from "../../src/scheduler/keys.ts";
import { slotName } from "../_fakes/plan.ts";

/** One line per `attempt_start` that a smaller eligible key should have had. */
export function priorityViolations(plan: Plan, g0: number, events: readonly RunEvent[]): string[] {
  const { order, rank } = priorityOrder(plan, g0);
  const predecessor = new Map<number, number>();
  for (const lane of new GroupLanes(plan).lanes()) {
    lane.positions.forEach((p, i) => i > 0 && predecessor.set(p, lane.positions[i - 1]!));
  }
  const started = new Set<number>();
  const ended = new Set<number>();
  const running = new Map<string, number>();
  const bump = (key: string | null, by: number) => {
    if (key !== null) running.set(key, (running.get(key) ?? 0) + by);
  };
  const laneOf = (p: number) => plan.experiments[plan.slots[p]!.experimentIndex]!.laneKey;
  const eligible = (p: number): boolean => {
    const previous = predecessor.get(p);
    if (previous !== undefined && !ended.has(previous)) return false;
    const experiment = plan.experiments[plan.slots[p]!.experimentIndex]!;
    const cap = experiment.maxConcurrency;
    if (cap !== null && (running.get(`e:${experiment.id}`) ?? 0) >= cap) return false;
    const lane = laneOf(p);
    return lane === null || (running.get(`l:${lane}`) ?? 0) === 0;
  };
  const violations: string[] = [];
  for (const e of events) {
    if (e.type !== "attempt_start" && e.type !== "attempt_end") continue;
    const p = e.slot.position;
    const by = e.type === "attempt_start" ? 1 : -1;
    if (e.type === "attempt_start") {
      for (const j of order) {
        if (rank[j.position]! >= rank[p]!) break;
        if (!started.has(j.position) && eligible(j.position)) {
          violations.push(`${slotName(e.slot)} started while ${slotName(j)} could have`);
        }
      }
      started.add(p);
    } else ended.add(p);
    bump(`e:${e.slot.experimentId}`, by);
    const lane = laneOf(p);
    bump(lane === null ? null : `l:${lane}`, by);
  }
  return violations;
}
