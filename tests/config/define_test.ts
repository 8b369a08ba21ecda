import assert from "node:assert/strict";
import { readBrand } from "../../src/_shared/brand.ts";
import { DefinitionError, type DefinitionErrorCode } from "../../src/_shared/errors.ts";
import { defineConfig, rampOf } from "../../src/config/mod.ts";

// deno-lint-ignore no-explicit-any
const config = (def: Record<string, unknown>) => defineConfig(def as any);

function assertRejects(
  fn: () => unknown,
  code: DefinitionErrorCode,
  path: string,
  message?: string | RegExp,
): void {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof DefinitionError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.path, path);
    if (typeof message === "string") assert.equal(error.message, message);
    else if (message) assert.match(error.message, message);
    return;
  }
  assert.fail(`expected a DefinitionError at ${path}`);
}

Deno.test("defineConfig() applies the defaults of §6.3 and freezes the result", () => {
  const c = defineConfig({});
  assert.ok(Object.isFrozen(c));
  assert.deepEqual(readBrand(c), { kind: "config", version: 1 });
  assert.deepEqual(c.pricing, {});
  assert.deepEqual(c.maxSandboxes, {});
  assert.deepEqual(c.createsPerSecond, {});
  assert.equal(c.maxBuildConcurrency, 2);
  for (const key of ["maxConcurrency", "timeoutMs", "ramp"]) assert.ok(!(key in c), key);
});

Deno.test("defineConfig() keeps valid options", () => {
  const c = defineConfig({
    maxConcurrency: 4,
    timeoutMs: 60_000,
    pricing: {
      "gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
      "openai/*": { inputPerMTok: 0, outputPerMTok: 0 },
    },
    maxSandboxes: { docker: 3 },
    maxBuildConcurrency: 1,
    createsPerSecond: { e2b: 0.5 },
  });
  assert.equal(c.maxConcurrency, 4);
  assert.equal(c.timeoutMs, 60_000);
  assert.deepEqual(c.pricing["gpt-5"], {
    inputPerMTok: 1.25,
    outputPerMTok: 10,
    cacheReadPerMTok: 0.125,
  });
  assert.ok(Object.isFrozen(c.pricing["gpt-5"]));
  assert.deepEqual(c.maxSandboxes, { docker: 3 });
  assert.deepEqual(c.createsPerSecond, { e2b: 0.5 });
});

Deno.test("defineConfig() rejects maxConcurrency together with ramp at path ramp (S9, rule 6.3.1)", () => {
  assertRejects(
    () => config({ maxConcurrency: 4, ramp: { from: 1, to: 8 } }),
    "definition.invalid-value",
    "ramp",
    "ramp cannot be combined with maxConcurrency",
  );
});

Deno.test("defineConfig() fills ramp defaults (RAMP-1)", () => {
  assert.deepEqual(defineConfig({ ramp: { from: 2, to: 20 } }).ramp, {
    from: 2,
    to: 20,
    step: 4,
    windowMs: 30_000,
  });
  assert.deepEqual(defineConfig({ ramp: { from: 3, to: 3 } }).ramp?.step, 1);
  assert.deepEqual(rampOf({ from: 1, to: 2, step: 5, windowMs: 1000 }, "ramp"), {
    from: 1,
    to: 2,
    step: 5,
    windowMs: 1000,
  });
});

Deno.test("defineConfig() validates ramp fields", () => {
  assertRejects(() => config({ ramp: { from: 4, to: 2 } }), "definition.invalid-value", "ramp.to");
  assertRejects(
    () => config({ ramp: { from: 0, to: 2 } }),
    "definition.invalid-value",
    "ramp.from",
  );
  assertRejects(() => config({ ramp: { to: 2 } }), "definition.missing-option", "ramp.from");
  assertRejects(
    () => config({ ramp: { from: 1, to: 2, windowMs: 999 } }),
    "definition.invalid-value",
    "ramp.windowMs",
  );
  assertRejects(
    () => config({ ramp: { from: 1, to: 2, step: 0 } }),
    "definition.invalid-value",
    "ramp.step",
  );
  assertRejects(
    () => config({ ramp: { from: 1, to: 2, stpe: 1 } }),
    "definition.unknown-option",
    "ramp.stpe",
  );
});

Deno.test("defineConfig() rejects experiment options as unknown (rule 6.3.2)", () => {
  for (const key of ["agent", "model", "flags", "attempts", "sandbox"]) {
    assertRejects(() => config({ [key]: 1 }), "definition.unknown-option", key);
  }
  assertRejects(
    () => config({ maxConcurency: 4 }),
    "definition.unknown-option",
    "maxConcurency",
    'unknown defineConfig option "maxConcurency" (did you mean "maxConcurrency"?)',
  );
});

Deno.test("defineConfig() rejects LATER options as unsupported", () => {
  for (const key of ["reporters", "judge", "name", "workspace", "telemetry", "report", "theme"]) {
    assertRejects(() => config({ [key]: [] }), "definition.unsupported-option", key);
  }
});

Deno.test("defineConfig() rejects the computed keys id, evaluationKind and configHash as reserved", () => {
  for (const key of ["id", "evaluationKind", "configHash"]) {
    assertRejects(() => config({ [key]: "x" }), "definition.reserved-option", key);
  }
});

Deno.test("defineConfig() rejects invalid values naming the path", () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ maxConcurrency: 0 }, "maxConcurrency"],
    [{ maxConcurrency: 2.5 }, "maxConcurrency"],
    [{ timeoutMs: "60s" }, "timeoutMs"],
    [{ maxBuildConcurrency: 0 }, "maxBuildConcurrency"],
    [{ pricing: [] }, "pricing"],
    [{ pricing: { m: { inputPerMTok: -1, outputPerMTok: 1 } } }, "pricing['m'].inputPerMTok"],
    [{ pricing: { m: { inputPerMTok: 1, outputPerMTok: NaN } } }, "pricing['m'].outputPerMTok"],
    [{ maxSandboxes: { docker: 1.5 } }, "maxSandboxes.docker"],
    [{ maxSandboxes: 3 }, "maxSandboxes"],
    [{ createsPerSecond: { e2b: 0 } }, "createsPerSecond.e2b"],
  ];
  for (const [def, path] of cases) {
    assertRejects(() => config(def), "definition.invalid-value", path);
  }
  assertRejects(
    () => config({ pricing: { m: { inputPerMTok: 1 } } }),
    "definition.missing-option",
    "pricing['m'].outputPerMTok",
  );
  assertRejects(
    () => config({ pricing: { m: { inputPerMTok: 1, outputPerMTok: 1, cached: 1 } } }),
    "definition.unknown-option",
    "pricing['m'].cached",
  );
});

Deno.test("defineConfig() rejects values above the limits of docs/limits.md", () => {
  const cases: [Record<string, unknown>, string, string][] = [
    [{ maxConcurrency: 1e20 }, "maxConcurrency", "an integer ≤ 1000"],
    [{ maxConcurrency: 1001 }, "maxConcurrency", "an integer ≤ 1000"],
    [{ timeoutMs: 2 ** 31 }, "timeoutMs", "an integer ≤ 2147483647"],
    [{ maxBuildConcurrency: 65 }, "maxBuildConcurrency", "an integer ≤ 64"],
    [{ ramp: { from: 1, to: 1e9 } }, "ramp.to", "an integer ≤ 1000"],
    [{ ramp: { from: 1, to: 2, step: 5000 } }, "ramp.step", "an integer ≤ 1000"],
    [{ ramp: { from: 1, to: 2, windowMs: 2 ** 31 } }, "ramp.windowMs", "an integer ≤ 2147483647"],
    [{ maxSandboxes: { docker: 1e6 } }, "maxSandboxes.docker", "an integer ≤ 1000"],
    [{ createsPerSecond: { e2b: 1e-12 } }, "createsPerSecond.e2b", "a number ≥ 0.001"],
    [{ createsPerSecond: { e2b: 1e6 } }, "createsPerSecond.e2b", "a number ≤ 1000"],
    [
      { pricing: { m: { inputPerMTok: 1e300, outputPerMTok: 1 } } },
      "pricing['m'].inputPerMTok",
      "a number ≤ 1000000",
    ],
  ];
  for (const [def, path, expected] of cases) {
    assertRejects(
      () => config(def),
      "definition.invalid-value",
      path,
      new RegExp(`must be ${expected},`),
    );
  }
  const max = config({ maxConcurrency: 1000, timeoutMs: 2 ** 31 - 1, maxBuildConcurrency: 64 });
  assert.deepEqual([max.maxConcurrency, max.timeoutMs], [1000, 2 ** 31 - 1]);
});

Deno.test("defineConfig() accepts exact pricing keys and <prefix>/* patterns only (rule 6.3.3)", () => {
  const price = { inputPerMTok: 1, outputPerMTok: 1 };
  for (const key of ["gpt-5", "openai/*", "a/b/*", "anthropic/claude-x"]) {
    assert.deepEqual(Object.keys(defineConfig({ pricing: { [key]: price } }).pricing), [key]);
  }
  for (const key of ["", "*", "gpt-*", "/*", "a/*/b", "a/**"]) {
    assertRejects(
      () => config({ pricing: { [key]: price } }),
      "definition.invalid-value",
      `pricing['${key}']`,
      /must be an exact model name or a pattern <prefix>\/\*$/,
    );
  }
});
