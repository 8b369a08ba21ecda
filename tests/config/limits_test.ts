/** Upper bounds of numeric definition options (docs/limits.md): every timer stays ≤ 2^31 − 1 ms. */
import assert from "node:assert/strict";
import { DefinitionError, MAX_TIMER_MS } from "../../src/_shared/mod.ts";
import { completeEvidenceCoverage, defineAgent, scriptedAgent } from "../../src/agents/mod.ts";
import { defineEval, defineExperiment } from "../../src/discovery/mod.ts";
import { defineSandbox, localSandbox } from "../../src/sandbox/mod.ts";

const agent = defineAgent({
  name: "fake",
  evidenceCoverage: completeEvidenceCoverage,
  send: () => Promise.resolve({ status: "completed", events: [] }),
});

/** The error `fn` throws, which must name `path` and the bound. */
function rejection(fn: () => unknown): Error & { path?: string; option?: string } {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof Error, String(error));
    return error;
  }
  assert.fail("expected a rejection");
}

Deno.test("defineExperiment() rejects attempts, maxConcurrency, timeoutMs and budget above their limits", () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ attempts: 100_000_000 }, "attempts", /attempts must be an integer ≤ 1000, got 100000000/],
    [{ maxConcurrency: 1e20 }, "maxConcurrency", /maxConcurrency must be an integer ≤ 1000/],
    [{ timeoutMs: 2 ** 31 }, "timeoutMs", /timeoutMs must be an integer ≤ 2147483647/],
    [{ budget: 1e12 }, "budget", /budget must be a number ≤ 1000000/],
  ];
  for (const [def, path, message] of cases) {
    // deno-lint-ignore no-explicit-any
    const error = rejection(() => defineExperiment({ agent, ...def } as any));
    assert.ok(error instanceof DefinitionError, String(error));
    assert.equal(error.path, path);
    assert.match(error.message, message);
  }
  const max = defineExperiment({ agent, attempts: 1000, maxConcurrency: 1000, budget: 1_000_000 });
  assert.deepEqual([max.attempts, max.maxConcurrency, max.budget], [1000, 1000, 1_000_000]);
});

Deno.test("defineEval() rejects a timeoutMs that a timer cannot hold", () => {
  const error = rejection(() => defineEval({ timeoutMs: MAX_TIMER_MS + 1, test: () => {} }));
  assert.ok(error instanceof DefinitionError, String(error));
  assert.equal(error.path, "timeoutMs");
  assert.equal(defineEval({ timeoutMs: MAX_TIMER_MS, test: () => {} }).timeoutMs, MAX_TIMER_MS);
});

Deno.test("localSandbox() and defineSandbox() reject lifetimeMs and recommendedConcurrency above their limits", () => {
  const lifetime = rejection(() => localSandbox({ lifetimeMs: 1e15 }));
  assert.equal(lifetime.option, "lifetimeMs");
  assert.match(lifetime.message, /lifetimeMs must be ≤ 2147483647, got 1000000000000000/);
  const cap = rejection(() =>
    defineSandbox({
      name: "vm",
      create: () => Promise.reject(new Error("unused")),
      recommendedConcurrency: 1e9,
    })
  );
  assert.equal(cap.option, "recommendedConcurrency");
  assert.match(cap.message, /recommendedConcurrency must be ≤ 1000/);
});

Deno.test("scriptedAgent() rejects delayMs and retryAfterMs that a timer cannot hold", () => {
  const delay = rejection(() =>
    scriptedAgent({ script: [{ when: "hi", reply: { text: "x", delayMs: 1e20 } }] })
  );
  assert.match(delay.message, /delayMs must be a number ≤ 2147483647/);
  const retry = rejection(() =>
    scriptedAgent({
      script: [{
        when: "hi",
        reply: { text: "x", reject: { reason: "rate_limit", retryAfterMs: 2 ** 40 } },
      }],
    })
  );
  assert.match(retry.message, /retryAfterMs must be a number ≤ 2147483647/);
});
