import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import { expOptions } from "../../src/cli/exp_options.ts";
import { EXP_FLAGS, parseFlags } from "../../src/cli/flags.ts";

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

Deno.test("expOptions() splits the selector from the eval prefixes (FLAG-1, FLAG-2)", () => {
  const o = options("models/openai", "greet", "tool", "--tag", "smoke");
  assert.equal(o.selector, "models/openai");
  assert.deepEqual(o.evalPrefixes, ["greet", "tool"]);
  assert.deepEqual(o.positionals, ["models/openai", "greet", "tool"]);
  assert.deepEqual(o.tags, ["smoke"]);
});

Deno.test("expOptions() leaves every setting unset when no flag is given", () => {
  const o = options();
  assert.equal(o.selector, undefined);
  assert.deepEqual(o.evalPrefixes, []);
  assert.equal(o.rerun, "none");
  assert.equal(o.json, false);
  assert.equal(o.dry, false);
  for (const key of ["attempts", "maxConcurrency", "timeoutMs", "budget", "earlyExit", "junit"]) {
    assert.ok(!(key in o), key);
  }
});

Deno.test("expOptions() maps the numeric flags", () => {
  const o = options(
    "--attempts",
    "3",
    "--max-concurrency=7",
    "--timeout",
    "1500",
    "--budget",
    "0.25",
  );
  assert.equal(o.attempts, 3);
  assert.equal(o.maxConcurrency, 7);
  assert.equal(o.timeoutMs, 1500);
  assert.equal(o.budget, 0.25);
});

Deno.test("expOptions() maps the rerun tiers (CLI-2)", () => {
  assert.equal(options("--rerun").rerun, "failed");
  assert.equal(options("--rerun=failed").rerun, "failed");
  assert.equal(options("--rerun", "all").rerun, "all");
  const o = options("local", "--rerun", "greet");
  assert.equal(o.rerun, "failed");
  assert.deepEqual(o.evalPrefixes, ["greet"]);
});

Deno.test("expOptions() maps --early-exit and --no-early-exit", () => {
  assert.equal(options("--early-exit").earlyExit, true);
  assert.equal(options("--no-early-exit").earlyExit, false);
});

Deno.test("expOptions() rejects --early-exit with --no-early-exit (FLAG-4)", () => {
  const e = usage(() => options("--early-exit", "--no-early-exit"));
  assert.equal(e.code, "usage");
  assert.equal(e.message, "--early-exit cannot be combined with --no-early-exit");
});

Deno.test("expOptions() rejects --dry with --junit (FLAG-4)", () => {
  const e = usage(() => options("--dry", "--junit", "x.xml"));
  assert.equal(e.message, "--dry cannot be combined with --junit");
});

Deno.test("expOptions() rejects bad numbers naming flag and value (ERR-7)", () => {
  assert.equal(
    usage(() => options("--attempts", "0")).message,
    '--attempts requires an integer ≥ 1, got "0"',
  );
  assert.equal(
    usage(() => options("--max-concurrency", "2.5")).message,
    '--max-concurrency requires an integer ≥ 1, got "2.5"',
  );
  assert.equal(
    usage(() => options("--timeout=0")).message,
    '--timeout requires a duration ≥ 1ms, got "0"',
  );
  assert.equal(
    usage(() => options("--budget=-2")).message,
    '--budget requires a decimal ≥ 0, got "-2"',
  );
});

Deno.test("expOptions() rejects numbers above the limits of docs/limits.md", () => {
  const cases: [string[], string][] = [
    [["--attempts", "100000000"], '--attempts requires an integer ≤ 1000, got "100000000"'],
    [
      ["--max-concurrency", "100000000"],
      '--max-concurrency requires an integer ≤ 1000, got "100000000"',
    ],
    [["--timeout", "2147483648"], '--timeout requires a duration ≤ 2147483647ms, got "2147483648"'],
    [["--budget", "1e20"], '--budget requires a decimal ≥ 0, got "1e20"'],
    [["--budget", "1000000.01"], '--budget requires a decimal ≤ 1000000, got "1000000.01"'],
  ];
  for (const [args, message] of cases) assert.equal(usage(() => options(...args)).message, message);
  const max = options("--attempts=1000", "--max-concurrency=1000", "--timeout=2147483647");
  assert.deepEqual([max.attempts, max.maxConcurrency, max.timeoutMs], [1000, 1000, 2147483647]);
});

Deno.test("expOptions() rejects a number with whitespace, a sign or an exponent", () => {
  for (const raw of [" 1", "1 ", "+1", "1e2", "\t3"]) {
    assert.equal(
      usage(() => options("--attempts", raw)).message,
      `--attempts requires an integer ≥ 1, got ${JSON.stringify(raw)}`,
    );
  }
  assert.equal(
    usage(() => options("--budget", " 1")).message,
    '--budget requires a decimal ≥ 0, got " 1"',
  );
});

Deno.test("expOptions() rejects empty --junit, --record and --tag values", () => {
  assert.equal(usage(() => options("--junit=")).message, "--junit requires a file path");
  assert.equal(usage(() => options("--record=")).message, "--record requires a directory path");
  assert.equal(usage(() => options("--tag=")).message, "--tag requires a non-empty tag");
});

Deno.test("issue 18.8: --timeout takes ms, s and m; a plain number is ms", () => {
  const cases: [string, number][] = [
    ["5000", 5000],
    ["500ms", 500],
    ["5s", 5000],
    ["2m", 120_000],
    ["1ms", 1],
    ["2147483s", 2_147_483_000],
    ["35791m", 2_147_460_000],
  ];
  for (const [value, ms] of cases) assert.equal(options("--timeout", value).timeoutMs, ms, value);
  const bad: [string, string][] = [
    [
      "5x",
      '--timeout requires a duration: a whole number with ms, s or m (plain numbers are ms), got "5x"',
    ],
    [
      "1.5s",
      '--timeout requires a duration: a whole number with ms, s or m (plain numbers are ms), got "1.5s"',
    ],
    [
      "5 s",
      '--timeout requires a duration: a whole number with ms, s or m (plain numbers are ms), got "5 s"',
    ],
    [
      "5S",
      '--timeout requires a duration: a whole number with ms, s or m (plain numbers are ms), got "5S"',
    ],
    ["0s", '--timeout requires a duration ≥ 1ms, got "0s"'],
    ["35792m", '--timeout requires a duration ≤ 2147483647ms, got "35792m"'],
  ];
  for (const [value, message] of bad) {
    const error = usage(() => options(`--timeout=${value}`));
    assert.equal(error.message, message, value);
  }
  assert.equal(
    usage(() => options("--timeout", "2147484s")).hint,
    "pass at most 2147483647ms, 2147483s or 35791m (limits: docs/limits.md)",
  );
  assert.equal(
    usage(() => options("--timeout", "s")).hint,
    "pass for example --timeout 30s, --timeout 2m or --timeout 5000",
  );
});
