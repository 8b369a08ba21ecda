import assert from "node:assert/strict";
import { AssertionAuthoringError } from "../../src/_shared/errors.ts";
import {
  includes,
  isDefined,
  isStopSignal,
  satisfies,
  similarity,
  toolMatch,
} from "../../src/expect/mod.ts";
import { recorder, snapshot, turn } from "./_turns.ts";

function isCode(code: string) {
  return (e: unknown) => e instanceof AssertionAuthoringError && e.code === code;
}

Deno.test("createAssertionRecorder() registers an entry at the call with group path and call site", () => {
  let path = ["outer"];
  const r = recorder("pass", { groupPath: () => path, callSite: () => "evals/w.eval.ts:7" });
  r.check("sunny", includes("sunny")).group("inner");
  path = ["changed"];
  const [entry] = r.seal();
  assert.deepEqual(entry?.group, ["outer", "inner"]);
  assert.equal(entry?.source, "evals/w.eval.ts:7");
  assert.equal(entry?.index, 0);
});

Deno.test("check() does not throw on a mismatch and keeps going", () => {
  const r = recorder();
  r.check("rain", includes("sunny"));
  r.check("sunny", includes("sunny"));
  assert.deepEqual(r.seal().map((e) => e.status), ["failed", "passed"]);
});

Deno.test("check() captures the subject so later mutation does not change an async entry", async () => {
  const r = recorder();
  const subject = { sky: "sunny" };
  r.check(
    subject,
    satisfies("sunny", async (v: { sky: string }) => {
      await Promise.resolve();
      return v.sky === "sunny";
    }),
  );
  subject.sky = "rain";
  await r.pending();
  assert.equal(r.seal()[0]?.result, "matched");
});

Deno.test("check() throws check-arguments unless given exactly two arguments", () => {
  const r = recorder();
  assert.throws(() => r.check("a"), isCode("check-arguments"));
  assert.throws(() => r.check("a", includes("a"), "extra"), isCode("check-arguments"));
  assert.equal(r.authoringErrors.length, 2);
  assert.equal(r.seal().length, 0);
});

Deno.test("check() throws match-domain-mismatch for a tool match and not-a-match for other values", () => {
  const r = recorder();
  assert.throws(() => r.check("a", toolMatch("x") as never), isCode("match-domain-mismatch"));
  assert.throws(() => r.check("a", "sunny" as never), isCode("not-a-match"));
});

Deno.test("check() accepts a match made by another copy of the API", () => {
  const foreign = Object.freeze({
    kind: "boolean",
    domain: "value",
    name: "foreign()",
    [Symbol.for("niceeval.match")]: {
      version: 1,
      kind: "boolean",
      base: "foreign",
      short: "foreign()",
      channels: [],
      evaluate: (v: unknown) => ({ result: v === 1 ? "matched" : "mismatched" }),
    },
  });
  const r = recorder();
  r.check(1, foreign as never);
  assert.equal(r.seal()[0]?.result, "matched");
  assert.equal(r.seal()[0]?.matcher, "foreign");
});

Deno.test("scoped() reads the snapshot at each call, so later turns do not change an entry", () => {
  const turns = [turn({ status: "failed" })];
  let calls = 0;
  const r = recorder();
  const scoped = r.scoped(() => {
    calls++;
    return snapshot([...turns], "attempt");
  });
  scoped.succeeded();
  turns.length = 0;
  turns.push(turn());
  scoped.succeeded();
  assert.equal(calls, 2);
  assert.deepEqual(r.seal().map((e) => e.result), ["mismatched", "matched"]);
});

Deno.test("key(), label() and group() may each be called once per handle", () => {
  const r = recorder();
  const handle = r.check("a", includes("a")).key("k1").label("mentions a").group("g");
  assert.throws(() => handle.key("k2"), isCode("handle-option-repeated"));
  assert.throws(() => handle.label("again"), isCode("handle-option-repeated"));
  assert.throws(() => handle.group("again"), isCode("handle-option-repeated"));
  const [entry] = r.seal();
  assert.equal(entry?.key, "k1");
  assert.equal(entry?.criterion, "mentions a");
  assert.equal(entry?.label, "mentions a");
  assert.equal(r.authoringErrors.length, 3);
});

Deno.test("key() enforces the key pattern and uniqueness within the attempt", () => {
  const r = recorder();
  assert.throws(() => r.check("a", includes("a")).key("-bad"), isCode("invalid-key"));
  assert.throws(() => r.check("a", includes("a")).key("x".repeat(129)), isCode("invalid-key"));
  r.check("a", includes("a")).key("A1._:-z");
  assert.throws(
    () => r.scoped(() => snapshot([])).succeeded().key("A1._:-z"),
    isCode("duplicate-key"),
  );
});

Deno.test("label() and group() require a non-empty string", () => {
  const r = recorder();
  assert.throws(() => r.check("a", includes("a")).label(""), isCode("invalid-value"));
  assert.throws(() => r.check("a", includes("a")).group(3 as never), isCode("invalid-value"));
});

Deno.test("configuration after orStop() throws and is recorded even when caught", async () => {
  const r = recorder();
  const handle = r.check("a", includes("a"));
  const stop = handle.orStop();
  try {
    handle.label("late");
  } catch {
    // The test body may catch it; the recorder still has it.
  }
  assert.throws(() => handle.optional(), isCode("handle-configured-after-orstop"));
  assert.equal(r.authoringErrors.length, 2);
  assert.equal(await stop, "a");
});

Deno.test("configuration after the body settled throws handle-configured-after-settle", () => {
  const r = recorder();
  const handle = r.check("a", includes("a"));
  r.settle();
  assert.throws(() => handle.key("k"), isCode("handle-configured-after-settle"));
  assert.equal(r.authoringErrors.length, 1);
});

Deno.test("registrations after settle() are discarded and counted", () => {
  const r = recorder();
  r.check("a", includes("a"));
  r.settle();
  const late = r.check("b", includes("b"));
  late.label("ignored");
  r.scoped(() => snapshot([])).succeeded();
  assert.equal(r.discardedAfterSettle, 2);
  assert.equal(r.seal().length, 1);
  assert.equal(r.authoringErrors.length, 0);
});

Deno.test("atLeast() and gate() accept only finite numbers in [0, 1]", () => {
  const r = recorder();
  const handle = r.check("a", similarity("a"));
  for (const bad of [1.5, -0.1, NaN, Infinity, "0.5"]) {
    assert.throws(() => handle.atLeast(bad as never), isCode("invalid-value"));
    assert.throws(() => handle.gate(bad as never), isCode("invalid-value"));
  }
  handle.atLeast(0).gate(1);
  assert.equal(r.seal()[0]?.gateThreshold, 1);
});

Deno.test("gate() on a Boolean entry takes no threshold", () => {
  const r = recorder();
  const handle = r.check("a", includes("a")).gate();
  assert.throws(() => (handle.gate as (n: number) => unknown)(0.5), isCode("invalid-value"));
});

Deno.test("score() on a handle requires finite points > 0", () => {
  const r = recorder("score");
  const handle = r.check("a", includes("a"));
  for (const bad of [0, -1, Infinity, NaN]) {
    assert.throws(() => handle.score(bad), isCode("invalid-value"));
  }
});

Deno.test("score() directly requires a score eval and finite points ≥ 0", () => {
  assert.throws(() => recorder("pass").score(1), isCode("score-in-pass-eval"));
  const r = recorder("score");
  assert.throws(() => r.score(-1), isCode("invalid-value"));
  assert.throws(() => r.score(NaN), isCode("invalid-value"));
  r.score(0).label("nothing");
  r.score(2);
  const entries = r.seal();
  assert.deepEqual(entries.map((e) => e.score), [{ points: 0, earned: 0 }, {
    points: 2,
    earned: 2,
  }]);
  assert.deepEqual(entries.map((e) => e.criterion), ["nothing", "score 2"]);
  assert.equal(entries[0]?.entry, "direct-score");
});

Deno.test("handles expose only the methods of their eval kind", () => {
  const pass = recorder("pass").check("a", includes("a")) as unknown as Record<string, unknown>;
  assert.equal(typeof pass.optional, "function");
  assert.equal(pass.score, undefined);
  const score = recorder("score").check("a", includes("a")) as unknown as Record<string, unknown>;
  assert.equal(typeof score.score, "function");
  assert.equal(score.optional, undefined);
  assert.equal(score.gate, undefined);
});

Deno.test("orStop() resolves with the subject when matched", async () => {
  const r = recorder();
  const subject = { id: 1 };
  const value = await r.check(subject as { id: number } | undefined, isDefined()).orStop();
  assert.equal(value, subject);
});

Deno.test("orStop() rejects with a stop signal when mismatched, without changing the entry", async () => {
  const r = recorder();
  const stop = r.check("rain", includes("sunny")).orStop();
  await assert.rejects(stop, (e: unknown) => isStopSignal(e));
  assert.equal(r.seal()[0]?.status, "failed");
});

Deno.test("orStop() rejects for unavailable and errored entries", async () => {
  const r = recorder();
  const scoped = r.scoped(() =>
    snapshot([
      turn({ coverage: { ...turn().coverage, status: { status: "partial", reason: "x" } } }),
    ])
  );
  await assert.rejects(scoped.succeeded().orStop(), (e: unknown) => isStopSignal(e));
  const boom = satisfies("boom", () => {
    throw new Error("x");
  });
  await assert.rejects(r.check(1, boom).orStop(), (e: unknown) => isStopSignal(e));
});

Deno.test("orStop() on a pending async entry waits for its evaluation", async () => {
  const r = recorder();
  let release: (ok: boolean) => void = () => {};
  const gate = new Promise<boolean>((resolve) => release = resolve);
  const stop = r.check("a", satisfies("later", () => gate)).orStop();
  let done = false;
  const settled = stop.then(() => done = true);
  await Promise.resolve();
  assert.equal(done, false);
  release(true);
  await settled;
  assert.equal(done, true);
  await r.pending();
});

Deno.test("orStop() on a measurement requires a threshold", () => {
  const r = recorder();
  assert.throws(() => r.check("a", similarity("a")).orStop(), isCode("orstop-without-threshold"));
  assert.throws(
    () => recorder("score").check("a", similarity("a")).orStop(),
    isCode("orstop-without-threshold"),
  );
});

Deno.test("orStop() on a measurement compares with the gate, else the atLeast threshold", async () => {
  const r = recorder();
  assert.equal(await r.check("abcd", similarity("abce")).atLeast(0.75).orStop(), 0.75);
  await assert.rejects(
    r.check("abcd", similarity("abce")).atLeast(0.5).gate(0.8).orStop(),
    (e: unknown) => isStopSignal(e),
  );
  const score = recorder("score");
  assert.equal(await score.check("ab", similarity("ab")).atLeast(1).orStop(), 1);
});

Deno.test("unawaitedStops() counts orStop() results whose then was never called", async () => {
  const r = recorder();
  r.check("a", includes("a")).orStop();
  await r.check("a", includes("a")).orStop();
  await r.check("a", includes("b")).orStop().catch(() => undefined);
  assert.equal(r.unawaitedStops(), 1);
});

Deno.test("pending() resolves when every asynchronous evaluation has settled", async () => {
  const r = recorder();
  r.check(
    1,
    satisfies("async", async () => {
      await Promise.resolve();
      return true;
    }),
  );
  assert.equal(r.seal()[0]?.status, "errored");
  assert.equal(r.seal()[0]?.reason, "evaluation-pending");
  await r.pending();
  assert.equal(r.seal()[0]?.status, "passed");
});

Deno.test("seal() reports gate, optional, score and met for each entry", () => {
  const r = recorder("pass");
  r.check("a", includes("a")).optional();
  r.check("abcd", similarity("abce")).atLeast(0.9);
  r.check("abcd", similarity("abce")).gate(0.75);
  r.check("abcd", similarity("abce")).gate(0.8);
  const entries = r.seal();
  assert.deepEqual(entries.map((e) => e.gate), [true, false, true, true]);
  assert.deepEqual(entries.map((e) => e.optional), [true, false, false, false]);
  assert.deepEqual(entries.map((e) => e.met), [null, false, true, false]);
  assert.deepEqual(entries.map((e) => e.status), ["passed", "passed", "passed", "failed"]);
  assert.ok(Object.isFrozen(entries[0]));
});

Deno.test("seal() computes earned points of score entries", () => {
  const r = recorder("score");
  r.check("a", includes("a")).score(2);
  r.check("a", includes("b")).score(3);
  r.check("abcd", similarity("abce")).score(4);
  r.check("a", includes("a"));
  assert.deepEqual(r.seal().map((e) => e.score), [
    { points: 2, earned: 2 },
    { points: 3, earned: 0 },
    { points: 4, earned: 3 },
    null,
  ]);
  assert.deepEqual(r.seal().map((e) => e.gate), [false, false, false, false]);
});

Deno.test("check() keeps the identity of a deeply frozen subject", () => {
  const r = recorder();
  const subject = Object.freeze({ a: Object.freeze([1]) });
  r.check(subject, satisfies("same object", (v) => v === subject));
  assert.equal(r.seal()[0]?.result, "matched");
});
