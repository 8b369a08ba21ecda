/** Every abort listener the scheduler adds to the Invocation's signals is gone once a run ended. */
import assert from "node:assert/strict";
import type { ExperimentHookContext } from "../../src/discovery/mod.ts";
import { fakePlan } from "../_fakes/plan.ts";
import { tempProject } from "../coordination/_helpers.ts";
import { finish, startCoordinated, withSharedState } from "./_lifecycle_harness.ts";

/** Counts the abort listeners on every signal while `body` runs (the prototype is restored). */
async function countingAbortListeners<T>(
  body: (live: (signal: AbortSignal) => number) => Promise<T>,
): Promise<T> {
  const proto = EventTarget.prototype;
  const { addEventListener: add, removeEventListener: remove } = proto;
  const live = new WeakMap<EventTarget, Set<unknown>>();
  const setOf = (target: EventTarget) => {
    let set = live.get(target);
    if (!set) live.set(target, set = new Set());
    return set;
  };
  proto.addEventListener = function (this: EventTarget, type, listener, options) {
    if (type === "abort" && this instanceof AbortSignal && !this.aborted) {
      setOf(this).add(listener);
    }
    return add.call(this, type, listener, options);
  };
  proto.removeEventListener = function (this: EventTarget, type, listener, options) {
    if (type === "abort") setOf(this).delete(listener);
    return remove.call(this, type, listener, options);
  };
  try {
    return await body((signal) => live.get(signal)?.size ?? 0);
  } finally {
    proto.addEventListener = add;
    proto.removeEventListener = remove;
  }
}

Deno.test("runPlan() leaves no abort listener on the interrupt signals once the run ended", async () => {
  await using project = await tempProject();
  const hook = (_ctx: ExperimentHookContext) => {};
  const plan = withSharedState(
    fakePlan({
      evals: ["a", "b"],
      experiments: [
        { id: "E1", setup: hook, teardown: hook },
        { id: "E2", setup: hook, teardown: hook },
      ],
    }),
    { E1: "db/one", E2: "db/two" },
  );
  await countingAbortListeners(async (live) => {
    const run = startCoordinated(plan, { cap: 2, root: project.root });
    assert.ok(live(run.force.signal) > 0, "the run listens for a second interrupt");
    await finish(run);
    assert.equal(live(run.interrupt.signal), 0);
    assert.equal(live(run.force.signal), 0);
  });
});
