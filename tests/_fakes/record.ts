/** Writes small published Runs through the real Record writer, for reader and carry tests. */
import { type AttemptResult, type NotDispatchedReason, sha256Hex } from "../../src/_shared/mod.ts";
import { digestOf, RecordWriter, type RunSpec, slotIdOf } from "../../src/record/mod.ts";
import { createFakeClock } from "./clock.ts";
import { createSeededRandom } from "./random.ts";

/** How one slot of a written Run is filled. */
export type SlotFill =
  | { readonly kind: "executed"; readonly result: AttemptResult }
  | { readonly kind: "not-dispatched"; readonly reason: NotDispatchedReason }
  | { readonly kind: "carried"; readonly originRunId: string; readonly attemptId: string }
  /** A started Attempt that never settled: nothing of it is in the log, the Run stays unpublished. */
  | { readonly kind: "reserved"; readonly attemptId: string };

/** One slot of a written Run. */
export interface FakeSlot {
  readonly evalId: string;
  readonly ordinal: number;
  readonly fill: SlotFill;
  readonly inputFingerprint?: string;
}

/**
 * A deterministic lowercase UUID v4 for a short test name (`uuidOf("r1")`): Record readers accept
 * only UUIDs as RunIds and AttemptIds (REC-1), so tests name them through this.
 */
export function uuidOf(name: string): string {
  const h = sha256Hex(name);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${
    h.slice(20, 32)
  }`;
}

/** Identity digests used by fake Runs. */
export const CONFIG_A = digestOf({ config: "a" });
export const CONFIG_B = digestOf({ config: "b" });
export const INPUT_1 = digestOf({ input: 1 });
export const INPUT_2 = digestOf({ input: 2 });

/**
 * The spec of a Run of experiment "exp" with one pass slot (ordinal 0) per eval ID, nothing
 * carried, every slot with configuration A and input 1.
 */
export function passRunSpec(runId: string, startedAt: number, evalIds: readonly string[]): RunSpec {
  const slots = evalIds.map((evalId, position) => ({
    position,
    slotId: slotIdOf(evalId, 0),
    evalId,
    ordinal: 0,
    kind: "pass" as const,
    groupId: null,
    inputFingerprint: INPUT_1,
    executionIdentityDigest: digestOf({ configHash: CONFIG_A, inputFingerprint: INPUT_1 }),
    carried: null,
  }));
  return {
    header: {
      runId,
      invocationId: uuidOf(`inv-${runId}`),
      experimentId: "exp",
      niceevalVersion: "0.1.0",
      startedAt,
      config: { agent: "det", model: null, flags: {}, provider: null, configHash: CONFIG_A },
      options: { attempts: 1, earlyExit: false, timeoutMs: null, budgetUSD: null, rerun: "none" },
      expectedSlots: slots.map(({ carried: _, position: __, ...slot }) => slot),
    },
    slots,
  };
}

/** Writes one Run of `experimentId` with the given slots; returns whether it was published. */
export async function writeRun(
  root: string,
  options: {
    runId: string;
    experimentId: string;
    startedAt: number;
    configHash?: string;
    slots: readonly FakeSlot[];
  },
): Promise<string[]> {
  const clock = createFakeClock(options.startedAt);
  const writer = new RecordWriter(root, {
    clock,
    random: createSeededRandom(options.startedAt % 997),
  });
  const configHash = options.configHash ?? CONFIG_A;
  const slots = options.slots.map((s, position) => {
    const inputFingerprint = s.inputFingerprint ?? INPUT_1;
    return {
      position,
      slotId: slotIdOf(s.evalId, s.ordinal),
      evalId: s.evalId,
      ordinal: s.ordinal,
      kind: "pass" as const,
      groupId: null,
      inputFingerprint,
      executionIdentityDigest: digestOf({ configHash, inputFingerprint }),
      carried: s.fill.kind === "carried"
        ? { originRunId: s.fill.originRunId, attemptId: s.fill.attemptId }
        : null,
    };
  });
  const spec: RunSpec = {
    header: {
      runId: options.runId,
      invocationId: uuidOf("inv-" + options.runId),
      experimentId: options.experimentId,
      niceevalVersion: "0.1.0",
      startedAt: options.startedAt,
      config: { agent: "det", model: null, flags: {}, provider: null, configHash },
      options: { attempts: 1, earlyExit: false, timeoutMs: null, budgetUSD: null, rerun: "none" },
      expectedSlots: slots.map((
        { slotId, evalId, ordinal, kind, groupId, inputFingerprint, executionIdentityDigest },
      ) => ({
        slotId,
        evalId,
        ordinal,
        kind,
        groupId,
        inputFingerprint,
        executionIdentityDigest,
      })),
    },
    slots,
  };
  await writer.begin([spec]);
  options.slots.forEach((s, position) => {
    const slot = {
      position,
      experimentId: options.experimentId,
      evalId: s.evalId,
      ordinal: s.ordinal,
    };
    const fill = s.fill;
    if (fill.kind === "executed" || fill.kind === "reserved") {
      const attemptId = fill.kind === "executed" ? fill.result.attemptId : fill.attemptId;
      writer.handle({ type: "attempt_start", at: clock.now(), slot, attemptId });
    }
    if (fill.kind === "executed") {
      writer.handle({
        type: "attempt_end",
        at: clock.now(),
        slot,
        result: {
          ...fill.result,
          experimentId: options.experimentId,
          evalId: s.evalId,
          ordinal: s.ordinal,
        },
      });
    }
    if (fill.kind === "not-dispatched") {
      writer.handle({ type: "not_dispatched", at: clock.now(), slot, reason: fill.reason });
    }
  });
  await writer.flush();
  return await writer.finish("completed");
}

/** The execution identity digest `writeRun` records for a config and input. */
export function digestFor(configHash: string, inputFingerprint: string): string {
  return digestOf({ configHash, inputFingerprint });
}
