/** Section A of scenarios.md: the global cap G, its source and the PLAN line (CAP-1 … CAP-5). */
import assert from "node:assert/strict";
import type { Plan } from "../../src/plan/mod.ts";
import { planLines } from "../../src/report/mod.ts";
import {
  capAnnotation,
  customProviderDefaults,
  exclusiveSerialWarnings,
  PROVIDER_DEFAULTS,
  type ProviderLookup,
  resolvePlanCap,
} from "../../src/scheduler/mod.ts";
import { evalIds, type FakeExperimentSpec, fakePlan } from "../_fakes/plan.ts";

function planOf(...experiments: FakeExperimentSpec[]): Plan {
  return fakePlan({ evals: ["a", "b"], experiments });
}

function line1(plan: Plan, options: Parameters<typeof resolvePlanCap>[1] = {}): string {
  const cap = resolvePlanCap(plan, options);
  return planLines({ plan, cap: cap.cap, capAnnotation: capAnnotation(cap) })[1]!;
}

Deno.test("S1 --max-concurrency wins over config maxConcurrency", () => {
  const plan = planOf({ id: "x", provider: "docker" });
  assert.deepEqual(resolvePlanCap(plan, { flag: 19, config: 4 }), {
    cap: 19,
    source: "flag",
    provider: null,
  });
  assert.match(line1(plan, { flag: 19, config: 4 }), /concurrency 19 \(from flag\)/);
});

Deno.test("S2 config maxConcurrency applies without a flag", () => {
  const plan = planOf({ id: "x", provider: "docker" });
  assert.equal(resolvePlanCap(plan, { config: 4 }).cap, 4);
  assert.match(line1(plan, { config: 4 }), /concurrency 4 \(from config\)/);
});

Deno.test("S3 only vercel pairs give G = 1 from the vercel default", () => {
  const plan = planOf({ id: "x", provider: "vercel" }, { id: "y", provider: "vercel" });
  assert.deepEqual(resolvePlanCap(plan, {}), {
    cap: 1,
    source: "provider-default",
    provider: "vercel",
  });
  assert.match(line1(plan), /concurrency 1 \(from vercel default\)/);
});

Deno.test("S4 docker and e2b pairs give the docker default of 10", () => {
  const plan = planOf({ id: "x", provider: "e2b" }, { id: "y", provider: "docker" });
  assert.equal(resolvePlanCap(plan, {}).cap, 10);
  assert.match(line1(plan), /concurrency 10 \(from docker default\)/);
});

Deno.test("S5 direct agents only give G = 10 from default", () => {
  const plan = planOf({ id: "x" }, { id: "y" });
  assert.deepEqual(resolvePlanCap(plan, {}), { cap: 10, source: "default", provider: null });
  assert.match(line1(plan), /concurrency 10 \(from default\)/);
});

Deno.test("S6 a custom provider defaults to 5, its recommendedConcurrency, or 1 when exclusive", () => {
  const plan = planOf({ id: "x", provider: "fake" });
  const lookup = (info: Parameters<typeof customProviderDefaults>[0]): ProviderLookup => (name) =>
    name === info.name ? customProviderDefaults(info) : undefined;
  assert.equal(resolvePlanCap(plan, {}).cap, 5);
  assert.equal(resolvePlanCap(plan, { lookup: lookup({ name: "fake" }) }).cap, 5);
  assert.equal(
    resolvePlanCap(plan, { lookup: lookup({ name: "fake", recommendedConcurrency: 3 }) }).cap,
    3,
  );
  const exclusive = resolvePlanCap(plan, {
    lookup: lookup({ name: "fake", recommendedConcurrency: 3, exclusive: true }),
  });
  assert.deepEqual(exclusive, { cap: 1, source: "provider-default", provider: "fake" });
});

Deno.test("S7 fully carried docker pairs do not count toward the provider default", () => {
  const plan = planOf(
    { id: "d", provider: "docker", carried: { "a#0": "passed", "b#0": "passed" } },
    { id: "e", provider: "e2b" },
  );
  assert.deepEqual(resolvePlanCap(plan, {}), {
    cap: 20,
    source: "provider-default",
    provider: "e2b",
  });
  assert.match(line1(plan), /concurrency 20 \(from e2b default\)/);
});

Deno.test("resolvePlanCap() counts every selected pair when nothing is runnable (CAP-3)", () => {
  const plan = planOf(
    { id: "d", provider: "docker", carried: { "a#0": "passed", "b#0": "passed" } },
    { id: "e", provider: "e2b", carried: { "a#0": "passed", "b#0": "failed" } },
  );
  assert.equal(resolvePlanCap(plan, {}).provider, "docker");
});

Deno.test("resolvePlanCap() breaks ties by the provider first reached in slot order (CAP-3)", () => {
  const plan = fakePlan({
    evals: ["a", "b"],
    experiments: [
      { id: "late", evals: ["b"], provider: "local" },
      { id: "early", evals: ["a"], provider: "vercel" },
    ],
  });
  // Slot order follows eval discovery: `a` (vercel) is reached before `b` (local).
  assert.deepEqual(resolvePlanCap(plan, {}), {
    cap: 1,
    source: "provider-default",
    provider: "vercel",
  });
});

Deno.test("S10 an experiment maxConcurrency never influences G", () => {
  const plan = planOf({ id: "x", provider: "docker", maxConcurrency: 50 });
  assert.equal(resolvePlanCap(plan, {}).cap, 10);
});

Deno.test("S11 PLAN line 1 names capped experiments only", () => {
  const plan = fakePlan({
    evals: evalIds(2),
    experiments: [{ id: "fast" }, { id: "slow", maxConcurrency: 1 }],
  });
  const line = line1(plan, { flag: 4 });
  assert.ok(line.endsWith(" · slow ≤1"), line);
  assert.ok(!line.includes("fast"), line);
});

Deno.test("S12 PLAN line 2 counts carried ordinals and is absent when nothing is carried", () => {
  const evals = evalIds(9);
  const carried: Record<string, "passed"> = {};
  for (const id of evals.slice(0, 6)) carried[`${id}#0`] = "passed";
  const plan = fakePlan({ evals, experiments: [{ id: "x", attempts: 5, carried }] });
  const cap = resolvePlanCap(plan, { flag: 4 });
  const lines = planLines({ plan, cap: cap.cap, capAnnotation: capAnnotation(cap) });
  assert.equal(lines[2], "  6 of 45 reused from earlier runs · 39 to run");
  const fresh = fakePlan({ evals, experiments: [{ id: "x", attempts: 5 }] });
  assert.equal(planLines({ plan: fresh, cap: 4, capAnnotation: "from flag" }).length, 2);
});

Deno.test("issue 18.3: a local pair beside a direct-agent pair leaves G at 10 (from default)", () => {
  const plan = planOf({ id: "local", provider: "local" }, { id: "direct" });
  assert.deepEqual(resolvePlanCap(plan, {}), { cap: 10, source: "default", provider: null });
  assert.match(line1(plan), /concurrency 10 \(from default\)/);
});

Deno.test("issue 18.3: local pairs alone still give G = 1 (from local default)", () => {
  const plan = planOf({ id: "x", provider: "local" }, { id: "y", provider: "local" });
  assert.deepEqual(resolvePlanCap(plan, {}), {
    cap: 1,
    source: "provider-default",
    provider: "local",
  });
  assert.match(line1(plan), /concurrency 1 \(from local default\)/);
});

Deno.test("issue 18.3: an exclusive provider beside docker leaves the docker default", () => {
  const plan = planOf({ id: "l", provider: "local" }, { id: "d", provider: "docker" });
  assert.match(line1(plan), /concurrency 10 \(from docker default\)/);
});

Deno.test("issue 18.3: exclusive providers only give 1, named by the first reached", () => {
  const lookup: ProviderLookup = (name) =>
    name === "solo" ? customProviderDefaults({ name, exclusive: true }) : PROVIDER_DEFAULTS[name];
  const plan = planOf({ id: "s", provider: "solo" }, { id: "l", provider: "local" });
  assert.deepEqual(resolvePlanCap(plan, { lookup }), {
    cap: 1,
    source: "provider-default",
    provider: "solo",
  });
  // With a direct pair beside them, neither exclusive provider counts.
  const mixed = planOf({ id: "s", provider: "solo" }, { id: "l", provider: "local" }, { id: "d" });
  assert.deepEqual(resolvePlanCap(mixed, { lookup }), {
    cap: 10,
    source: "default",
    provider: null,
  });
});

Deno.test("issue 18.3: a direct pair counts as the none row (10) beside other providers", () => {
  const e2b = planOf({ id: "e", provider: "e2b" }, { id: "d" });
  assert.match(line1(e2b), /concurrency 10 \(from default\)/);
  const vercel = planOf({ id: "d" }, { id: "v", provider: "vercel" });
  assert.match(line1(vercel), /concurrency 1 \(from vercel default\)/);
  // A tie at 10 goes to the row reached first in slot order.
  const directFirst = fakePlan({
    evals: ["a", "b"],
    experiments: [{ id: "d", evals: ["a"] }, { id: "k", evals: ["b"], provider: "docker" }],
  });
  assert.match(line1(directFirst), /concurrency 10 \(from default\)/);
  const dockerFirst = fakePlan({
    evals: ["a", "b"],
    experiments: [{ id: "d", evals: ["b"] }, { id: "k", evals: ["a"], provider: "docker" }],
  });
  assert.match(line1(dockerFirst), /concurrency 10 \(from docker default\)/);
});

Deno.test("issue 18.3: a fully carried direct pair does not stop the local default", () => {
  const plan = planOf(
    { id: "d", carried: { "a#0": "passed", "b#0": "passed" } },
    { id: "l", provider: "local" },
  );
  assert.match(line1(plan), /concurrency 1 \(from local default\)/);
});

Deno.test("issue 18.3 and 18.6: the local lane warning names a default limit in words, a flag as the flag (LANE-4)", () => {
  const plan = fakePlan({
    evals: evalIds(2),
    experiments: [{ id: "l", provider: "local" }, { id: "d" }],
  });
  const message = (capSource?: "default" | "flag" | "config") =>
    exclusiveSerialWarnings(plan, { gmax: 10, at: 0, ...(capSource ? { capSource } : {}) })
      .map((w) => w.type === "diagnostic" ? w.message : "");
  assert.deepEqual(message("default"), [
    'the "local" provider runs attempts one at a time; the concurrency limit 10 does not apply to it',
  ]);
  assert.deepEqual(message("config"), [
    'the "local" provider runs attempts one at a time; maxConcurrency 10 of the config does not apply to it',
  ]);
  assert.deepEqual(message("flag"), [
    'the "local" provider runs attempts one at a time; --max-concurrency 10 does not apply to it',
  ]);
  assert.deepEqual(message(), message("flag"));
});
