import assert from "node:assert/strict";
import type { ScoreTestContext, SessionHandle, TestContext, TurnHandle } from "niceeval";
import type { OrderedAssertions, PassBooleanHandle, ScoreBooleanHandle } from "niceeval/expect";

type Has<T, K extends PropertyKey> = K extends keyof T ? true : false;

Deno.test("TestContext types: sessions and turns have order assertions, t has none (§3.2, §3.3)", () => {
  const checks: {
    tHasToolOrder: Has<TestContext, "toolOrder">;
    sessionIsOrdered: SessionHandle extends OrderedAssertions<"pass"> ? true : false;
    turnIsOrdered: TurnHandle extends OrderedAssertions<"pass"> ? true : false;
    sessionUsage: Has<SessionHandle, "usage">;
  } = { tHasToolOrder: false, sessionIsOrdered: true, turnIsOrdered: true, sessionUsage: true };
  assert.deepEqual(Object.values(checks), [false, true, true, true]);
});

Deno.test("TestContext types: handles follow the eval kind and t.score exists for score evals only", () => {
  const checks: {
    passHandle: ReturnType<TestContext["succeeded"]> extends PassBooleanHandle ? true : false;
    scoreHandle: ReturnType<ScoreTestContext["succeeded"]> extends ScoreBooleanHandle ? true
      : false;
    passScoreIsNever: ReturnType<TestContext["score"]> extends never ? true : false;
    scoreScore: ReturnType<ScoreTestContext["score"]> extends never ? true : false;
  } = { passHandle: true, scoreHandle: true, passScoreIsNever: true, scoreScore: false };
  assert.deepEqual(Object.values(checks), [true, true, true, false]);
});
