/** `--ramp`, `--no-ramp` and the run's ramp (CAP-1, RAMP-1, RAMP-2, FLAG-4). */
import assert from "node:assert/strict";
import { join } from "node:path";
import { UsageError } from "../../src/_shared/errors.ts";
import { expOptions } from "../../src/cli/exp_options.ts";
import { EXP_FLAGS, parseFlags } from "../../src/cli/flags.ts";
import { parseRampRange, resolveRamp } from "../../src/cli/ramp_options.ts";
import { defineConfig } from "../../src/config/mod.ts";

function options(...args: string[]) {
  return expOptions(parseFlags(args, EXP_FLAGS, "exp"));
}

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    return error;
  }
  assert.fail("expected a UsageError");
}

async function withProject(fn: (root: string) => Promise<void> | void): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "niceeval-ramp-options-" });
  try {
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("RAMP-1: --ramp <from>:<to> parses; --no-ramp is a switch", () => {
  assert.deepEqual(options("--ramp", "4:16").ramp, { from: 4, to: 16 });
  assert.equal(options("--no-ramp").noRamp, true);
  assert.equal(options().noRamp, false);
});

Deno.test("RAMP-2: an invalid --ramp is ramp-invalid", () => {
  for (const bad of ["5:2", "0:4", "4", "a:b", "4:1001", "2:3:4", "-1:4"]) {
    const error = usage(() => options("--ramp", bad));
    assert.equal(error.code, "ramp-invalid", bad);
    assert.match(error.message, /--ramp must be <from>:<to>/);
  }
  assert.equal(usage(() => parseRampRange("9:1", "ramp set <from>:<to>")).code, "ramp-invalid");
});

Deno.test("CAP-1 FLAG-4: --ramp with --max-concurrency or --no-ramp is a usage error", () => {
  assert.match(usage(() => options("--ramp", "2:4", "--max-concurrency", "3")).message, /ramp/);
  assert.match(usage(() => options("--ramp", "2:4", "--no-ramp")).message, /no-ramp/);
});

Deno.test("S145 RAMP-2: --max-concurrency turns a config ramp off and says so", async () => {
  await withProject((projectRoot) => {
    const config = defineConfig({ ramp: { from: 2, to: 8 } });
    const out = resolveRamp({ maxConcurrency: 3 }, config, { noRamp: false, projectRoot });
    assert.deepEqual(out, { ramp: null, disabled: true });
    const plain = resolveRamp({ maxConcurrency: 3 }, defineConfig({}), {
      noRamp: false,
      projectRoot,
    });
    assert.deepEqual(plain, { ramp: null, disabled: false });
  });
});

Deno.test("S152 RAMP-1: --ramp 4:16 without a config step steps by 3 with the default window", async () => {
  await withProject((projectRoot) => {
    const out = resolveRamp({ ramp: { from: 4, to: 16 } }, defineConfig({}), {
      noRamp: false,
      projectRoot,
    });
    assert.deepEqual(out.ramp, {
      from: 4,
      to: 16,
      step: 3,
      windowMs: 30_000,
      source: "flag",
      held: null,
    });
  });
});

Deno.test("RAMP-1: --ramp keeps a written config step and windowMs, not a defaulted step", async () => {
  await withProject((projectRoot) => {
    const given = defineConfig({ ramp: { from: 1, to: 2, step: 5, windowMs: 2000 } });
    const kept = resolveRamp({ ramp: { from: 4, to: 16 } }, given, { noRamp: false, projectRoot });
    assert.deepEqual([kept.ramp?.step, kept.ramp?.windowMs], [5, 2000]);
    const defaulted = defineConfig({ ramp: { from: 1, to: 2, windowMs: 2000 } });
    const own = resolveRamp({ ramp: { from: 4, to: 16 } }, defaulted, {
      noRamp: false,
      projectRoot,
    });
    assert.deepEqual([own.ramp?.step, own.ramp?.windowMs], [3, 2000]);
  });
});

Deno.test("CAP-1: --ramp beats config maxConcurrency; --no-ramp skips the config ramp", async () => {
  await withProject((projectRoot) => {
    const capped = defineConfig({ maxConcurrency: 5 });
    const flag = resolveRamp({ ramp: { from: 2, to: 4 } }, capped, { noRamp: false, projectRoot });
    assert.equal(flag.ramp?.source, "flag");
    const ramped = defineConfig({ ramp: { from: 2, to: 8 } });
    assert.equal(resolveRamp({}, ramped, { noRamp: false, projectRoot }).ramp?.source, "config");
    assert.deepEqual(resolveRamp({}, ramped, { noRamp: true, projectRoot }), {
      ramp: null,
      disabled: false,
    });
  });
});

Deno.test("S154 RAMP-9: a hold already in the control file is read for PLAN", async () => {
  await withProject(async (projectRoot) => {
    const dir = join(projectRoot, ".niceeval", "coordination", "ramp");
    await Deno.mkdir(dir, { recursive: true });
    await Deno.writeTextFile(
      join(dir, "control.json"),
      JSON.stringify({
        schema: "niceeval.ramp-control/v1",
        seq: 1,
        hold: { reason: "quota", since: "2026-12-01T00:00:00.000Z", by: "pid 1@h" },
        range: null,
      }),
    );
    const out = resolveRamp({}, defineConfig({ ramp: { from: 2, to: 8 } }), {
      noRamp: false,
      projectRoot,
    });
    assert.equal(out.ramp?.held, "quota");
  });
});
