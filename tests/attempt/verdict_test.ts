import assert from "node:assert/strict";
import { defineEval, defineScoreEval } from "niceeval";
import {
  defineScoreMatch,
  defineValueMatch,
  includes,
  isDefined,
  satisfies,
  similarity,
} from "niceeval/expect";
import { completeEvidenceCoverage, defineAgent } from "niceeval/adapter";
import { createFakeControl } from "../_fakes/control.ts";
import { diagnosticCodes, runEval, startEval, untraced } from "./_run.ts";

Deno.test("createAttemptRunner() passes an Attempt whose assertions all match", async () => {
  const result = await runEval(defineEval({
    async test(t) {
      const turn = await t.send("Say hello");
      turn.succeeded();
      t.check(t.reply, includes("Hello"));
    },
  }));
  assert.equal(result.verdict, "passed");
  assert.equal(result.outcome, "completed");
  assert.equal(result.error, null);
  assert.deepEqual(result.details.assertions.map((a) => a.status), ["passed", "passed"]);
  assert.deepEqual(diagnosticCodes(result), []);
});

Deno.test("createAttemptRunner() fails an Attempt on a gating mismatch and keeps going", async () => {
  const result = await runEval(defineEval({
    async test(t) {
      await t.send("Say hello");
      t.check(t.reply, includes("Goodbye"));
      t.check(t.reply, includes("Hello"));
    },
  }));
  assert.equal(result.verdict, "failed");
  assert.equal(result.outcome, "completed");
  assert.deepEqual(result.details.assertions.map((a) => a.status), ["failed", "passed"]);
});

Deno.test("createAttemptRunner() errors an Attempt whose body throws (test-threw)", async () => {
  const result = await runEval(defineEval({
    async test(t) {
      await t.send("Say hello");
      t.check(t.reply, includes("Hello"));
      throw new Error("boom");
    },
  }));
  assert.equal(result.verdict, "errored");
  assert.equal(result.outcome, "errored");
  assert.deepEqual(untraced(result.error), {
    code: "test-threw",
    phase: "test",
    message: "boom",
    scope: "attempt",
  });
});

Deno.test("createAttemptRunner() skips an Attempt that calls t.skip", async () => {
  let after = false;
  const result = await runEval(defineEval({
    test(t) {
      t.skip("not today");
      after = true;
    },
  }));
  assert.equal(after, false);
  assert.equal(result.verdict, "skipped");
  assert.equal(result.skipReason, "not today");
  assert.equal(result.error, null);
  assert.deepEqual(diagnosticCodes(result), []);
});

Deno.test("t.skip() registers at the call even when the signal is caught", async () => {
  const result = await runEval(defineEval({
    async test(t) {
      try {
        t.skip("flaky upstream");
      } catch {
        // ignored on purpose
      }
      await t.send("Say hello");
      t.check(t.reply, includes("Hello"));
    },
  }));
  assert.equal(result.verdict, "skipped");
  assert.equal(result.skipReason, "flaky upstream");
  assert.equal(result.details.assertions.length, 1);
});

Deno.test("t.skip() keeps the first reason and a gating mismatch still fails", async () => {
  const result = await runEval(defineEval({
    test(t) {
      t.check("rain", includes("sun"));
      try {
        t.skip("first");
      } catch { /* caught */ }
      t.skip("second");
    },
  }));
  assert.equal(result.verdict, "failed");
  assert.equal(result.skipReason, "first");
});

Deno.test("t.skip() with an empty reason is an authoring error", async () => {
  const result = await runEval(defineEval({
    test(t) {
      t.skip("  ");
    },
  }));
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "assertion-authoring-error");
  assert.equal(result.skipReason, null);
});

Deno.test("t.check() waits for pending asynchronous matchers before the verdict", async () => {
  let resolved = 0;
  const slow = defineValueMatch<string>({
    name: "slowly-hello",
    evaluate: async (v) => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
      resolved++;
      return v.includes("Hello");
    },
  });
  const result = await runEval(defineEval({
    async test(t) {
      await t.send("Say hello");
      t.check(t.reply, slow);
      t.check(
        t.reply,
        satisfies("async no", async (v: string) => {
          await Promise.resolve();
          resolved++;
          return v === "no";
        }),
      );
      t.check(t.reply, includes("niceeval"));
    },
  }));
  assert.equal(resolved, 2);
  assert.deepEqual(result.details.assertions.map((a) => a.result), [
    "matched",
    "mismatched",
    "matched",
  ]);
  assert.equal(result.verdict, "failed");
});

Deno.test("t.check() of a throwing matcher errors the entry and the verdict", async () => {
  const result = await runEval(defineEval({
    test(t) {
      t.check(
        "x",
        satisfies("throws", () => {
          throw new Error("matcher broke");
        }),
      );
    },
  }));
  assert.equal(result.verdict, "errored");
  assert.equal(result.error, null);
  assert.equal(result.details.assertions[0]?.status, "errored");
});

Deno.test("orStop() resolves with the refined subject and stops only the awaiting path", async () => {
  const seen: string[] = [];
  const result = await runEval(defineEval({
    async test(t) {
      const turn = await t.send("Say hello");
      const text = await t.check(turn.message as string | undefined, isDefined()).orStop();
      seen.push(text);
      const branch = (async () => {
        await t.check(text, includes("Goodbye")).orStop();
        seen.push("unreachable");
      })();
      await branch.catch(() => seen.push("branch stopped"));
      t.check(text, includes("Hello"));
      seen.push("main continued");
    },
  }));
  assert.deepEqual(seen, ["Hello, niceeval!", "branch stopped", "main continued"]);
  assert.equal(result.verdict, "failed");
  assert.equal(result.error, null);
  assert.equal(result.details.assertions.length, 3);
});

Deno.test("orStop() propagating out of the body is a normal end, not test-threw", async () => {
  let after = false;
  const result = await runEval(defineEval({
    async test(t) {
      await t.check("rain", includes("sun")).orStop();
      after = true;
      t.check("x", includes("x"));
    },
  }));
  assert.equal(after, false);
  assert.equal(result.verdict, "failed");
  assert.equal(result.error, null);
  assert.equal(result.details.assertions.length, 1);
});

Deno.test("orStop() that is never awaited errors the Attempt (orstop-not-awaited)", async () => {
  const result = await runEval(defineEval({
    test(t) {
      t.check("sun", includes("sun")).orStop();
    },
  }));
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "orstop-not-awaited");
  assert.equal(result.details.assertions[0]?.status, "passed");
});

Deno.test("an assertion authoring error errors the Attempt even when caught", async () => {
  const result = await runEval(defineEval({
    test(t) {
      try {
        (t.check as (...args: unknown[]) => unknown)("only one");
      } catch { /* caught */ }
      t.check("x", includes("x"));
    },
  }));
  assert.equal(result.verdict, "errored");
  assert.equal(result.error?.code, "assertion-authoring-error");
  assert.equal(result.error?.phase, "test");
});

Deno.test("a caught authoring error is the Attempt's error even when the body throws later", async () => {
  const result = await runEval(defineEval({
    test(t) {
      try {
        t.check("x", includes("x")).key("bad key!");
      } catch { /* caught */ }
      throw new Error("later failure");
    },
  }));
  assert.equal(result.error?.code, "assertion-authoring-error");
  assert.match(result.error?.message ?? "", /key/);
});

Deno.test("a handle configured after orStop() is an authoring error", async () => {
  const result = await runEval(defineEval({
    async test(t) {
      const handle = t.check("x", includes("x"));
      await handle.orStop();
      try {
        handle.label("late");
      } catch { /* caught */ }
    },
  }));
  assert.equal(result.error?.code, "assertion-authoring-error");
  assert.match(result.error?.message ?? "", /after \.orStop\(\)/);
});

Deno.test("an Attempt without assertions passes with the eval-no-assertions warning", async () => {
  const result = await runEval(defineEval({
    async test(t) {
      await t.send("Say hello");
    },
  }));
  assert.equal(result.verdict, "passed");
  assert.deepEqual(diagnosticCodes(result), ["eval-no-assertions"]);
  assert.equal(result.details.diagnostics[0]?.level, "warning");
});

Deno.test("a skipped Attempt without assertions gets no eval-no-assertions warning", async () => {
  const result = await runEval(defineEval({
    test(t) {
      t.skip("nothing to do");
    },
  }));
  assert.deepEqual(diagnosticCodes(result), []);
});

Deno.test("assertions registered after the body settled are discarded with assertion-after-settle", async () => {
  let release!: () => void;
  const late = new Promise<void>((resolve) => release = resolve);
  let lateRegistered = false;
  const agent = defineAgent({
    name: "late",
    evidenceCoverage: completeEvidenceCoverage,
    send: () => Promise.resolve({ status: "completed", events: [] }),
    teardown: async () => {
      release();
      await Promise.resolve();
    },
  });
  const result = await runEval(
    defineEval({
      test(t) {
        t.check("x", includes("x"));
        void (async () => {
          await late;
          t.check("y", includes("y")).label("too late");
          lateRegistered = true;
        })();
      },
    }),
    { agent },
  );
  assert.equal(lateRegistered, true);
  assert.equal(result.verdict, "passed");
  assert.equal(result.details.assertions.length, 1);
  assert.deepEqual(diagnosticCodes(result), ["assertion-after-settle"]);
});

Deno.test("t.diagnostic() keeps one diagnostic per (code, dedupeKey) and never changes the verdict", async () => {
  const result = await runEval(defineEval({
    test(t) {
      t.diagnostic({ code: "slow-tool", level: "warning", message: "a", dedupeKey: "k" });
      t.diagnostic({ code: "slow-tool", level: "warning", message: "b", dedupeKey: "k" });
      t.diagnostic({ code: "slow-tool", level: "warning", message: "c", dedupeKey: "other" });
      t.diagnostic({ code: "slow-tool", level: "error", message: "d" });
      t.diagnostic({ code: "slow-tool", level: "error", message: "e" });
      t.diagnostic({ code: "other", level: "warning", message: "f", dedupeKey: "k" });
      t.check("x", includes("x"));
    },
  }));
  assert.equal(result.verdict, "passed");
  assert.deepEqual(result.details.diagnostics.map((d) => d.message), ["a", "c", "d", "e", "f"]);
});

Deno.test("t.diagnostic() keeps JSON data and drops data that is not JSON", async () => {
  const result = await runEval(defineEval({
    test(t) {
      t.diagnostic({ code: "with-data", level: "warning", message: "ok", data: { n: 1 } });
      t.diagnostic({
        code: "bad-data",
        level: "warning",
        message: "bad",
        data: { n: 10n } as never,
      });
      t.check("x", includes("x"));
    },
  }));
  assert.equal(result.verdict, "passed");
  const [ok, bad] = result.details.diagnostics;
  assert.deepEqual(ok?.data, { n: 1 });
  assert.equal(bad?.data, null);
  assert.doesNotThrow(() => JSON.stringify(result.details));
});

Deno.test("t.log() and t.progress() report activity; only t.log() is kept", async () => {
  const control = createFakeControl();
  const result = await startEval(
    defineEval({
      test(t) {
        t.progress({ message: "step 1", current: 1, total: 2 });
        t.log("step 2");
        t.check("x", includes("x"));
      },
    }),
    { control },
  ).result;
  assert.ok(control.activities.includes("running eval · step 1"));
  assert.ok(control.activities.includes("running eval · step 2"));
  assert.deepEqual(result.details.logs.map((l) => l.text), ["step 2"]);
});

Deno.test("score eval: t.score and .score(points) earn points and the outcome is scored", async () => {
  const result = await runEval(defineScoreEval({
    async test(t) {
      await t.send("Say hello");
      t.check(t.reply, includes("Hello")).score(2);
      t.check(t.reply, includes("Goodbye")).score(3);
      t.check(t.reply, similarity("Hello, niceeval!")).score(4);
      t.score(0.5);
    },
  }));
  assert.equal(result.kind, "score");
  assert.equal(result.verdict, "scored");
  assert.equal(result.outcome, "completed");
  // A t.score without maxPoints leaves the possible score unknown (docs/scores.md).
  assert.deepEqual(result.scoreResult, { state: "complete", earned: 6.5, possible: null });
  assert.equal(result.possible, null);
  assert.equal(result.passAt, null);
  assert.equal(result.score, 6.5);
  assert.deepEqual(diagnosticCodes(result), []);
});

Deno.test("issue 18.7: maxPoints is the possible score and a score below passAt is failed", async () => {
  const result = await runEval(defineScoreEval({
    maxPoints: 4,
    passAt: 3,
    test(t) {
      t.score(1);
      t.score(1);
    },
  }));
  assert.equal(result.verdict, "failed");
  assert.equal(result.outcome, "completed");
  assert.deepEqual(result.scoreResult, { state: "complete", earned: 2, possible: 4 });
  assert.deepEqual([result.score, result.possible, result.passAt], [2, 4, 3]);
  const met = await runEval(
    defineScoreEval({ maxPoints: 4, passAt: 2, test: (t) => void t.score(2) }),
  );
  assert.equal(met.verdict, "scored");
});

Deno.test("score eval: an unavailable contribution makes the score partial", async () => {
  const unavailable = defineScoreMatch<string>({
    name: "judge-ish",
    score: () => ({ unavailable: "no judge" }),
  });
  const result = await runEval(defineScoreEval({
    test(t) {
      t.check("a", includes("a")).score(1);
      t.check("a", unavailable).score(5);
    },
  }));
  assert.equal(result.verdict, "scored");
  assert.deepEqual(result.scoreResult, {
    state: "partial",
    earned: 1,
    reasons: ["source-unavailable"],
    possible: 6,
  });
  assert.equal(result.score, 1);
});

Deno.test("score eval: an execution error without contributions is unavailable", async () => {
  const result = await runEval(defineScoreEval({
    test() {
      throw new Error("no data");
    },
  }));
  assert.equal(result.verdict, "errored");
  assert.deepEqual(result.scoreResult, { state: "unavailable", reasons: ["execution-errored"] });
  assert.equal(result.score, null);
});

Deno.test("score eval: t.skip gives an unavailable not-applicable score", async () => {
  const result = await runEval(defineScoreEval({
    test(t) {
      t.score(1);
      t.skip("n/a");
    },
  }));
  assert.equal(result.verdict, "skipped");
  assert.deepEqual(result.scoreResult, { state: "unavailable", reasons: ["not-applicable"] });
  assert.equal(result.score, null);
});

Deno.test("t.score() in a pass eval is an authoring error", async () => {
  const result = await runEval(defineEval({
    test(t) {
      try {
        (t.score as (n: number) => unknown)(1);
      } catch { /* caught */ }
    },
  }));
  assert.equal(result.error?.code, "assertion-authoring-error");
});
