/** Short flags (issue 18.2): `-t` for `--grep`, accepted only where a flag table declares it. */
import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import {
  EXP_FLAGS,
  EXP_LIST_FLAGS,
  firstPositionalIndex,
  type FlagSpec,
  parseFlags,
} from "../../src/cli/flags.ts";
import { expOptions } from "../../src/cli/exp_options.ts";

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    return error;
  }
  assert.fail("expected a UsageError");
}

const exp = (...args: string[]) => parseFlags(args, EXP_FLAGS, "exp");

Deno.test("issue 18.2: -t is --grep, repeatable, with a separate or an inline value", () => {
  const flags = exp("openai", "-t", "capital", "--grep", "river", "-t=2+2", "geo");
  assert.deepEqual(flags.positionals, ["openai", "geo"]);
  assert.deepEqual(flags.values.get("grep"), ["capital", "river", "2+2"]);
  assert.equal(flags.values.has("t"), false);
  // A value may start with a single dash; after `--`, -t is a positional.
  assert.deepEqual(exp("-t", "-x").values.get("grep"), ["-x"]);
  assert.deepEqual(exp("--", "-t", "x").positionals, ["-t", "x"]);
});

Deno.test("issue 18.2: -t without a value names the flag as typed", () => {
  for (const args of [["-t"], ["-t", "--json"]]) {
    const e = usage(() => exp(...args));
    assert.equal(e.message, "-t requires a value <regex|text>");
    assert.equal(e.hint, "see niceeval exp --help");
  }
  assert.equal(usage(() => exp("--grep")).message, "--grep requires a value <regex|text>");
});

Deno.test("issue 18.2: a short flag is accepted only where declared", () => {
  const list = usage(() => parseFlags(["-t", "x"], EXP_LIST_FLAGS, "exp list"));
  assert.equal(list.message, "unknown flag -t");
  // Other single letters stay unknown on exp too; the long name is not a short one.
  assert.equal(usage(() => exp("-x")).message, "unknown flag -x");
  assert.equal(usage(() => exp("-T", "x")).message, "unknown flag -T");
  assert.equal(usage(() => exp("-grep", "x")).message, "unknown flag -grep");
  const custom: FlagSpec[] = [{ name: "name", short: "n", value: "<v>", description: "" }];
  assert.deepEqual(parseFlags(["-n", "a"], custom, "x").values.get("name"), ["a"]);
});

Deno.test("issue 18.2: firstPositionalIndex() skips the value of -t (exp -t list is no exp list)", () => {
  assert.equal(firstPositionalIndex(["-t", "list"], EXP_FLAGS), -1);
  assert.equal(firstPositionalIndex(["-t", "x", "list"], EXP_FLAGS), 2);
  assert.equal(firstPositionalIndex(["-t=x", "list"], EXP_FLAGS), 1);
});

Deno.test("issue 18.2: expOptions() checks --grep early and --last-failed reruns failed Attempts", () => {
  const bad = usage(() => expOptions(exp("-t", "a(")));
  assert.equal(bad.message, '--grep requires a regular expression, got "a(" (unterminated group)');
  const options = expOptions(exp("-t", "a", "-t", "b", "--last-failed"));
  assert.deepEqual(options.grep, ["a", "b"]);
  assert.equal(options.lastFailed, true);
  assert.equal(options.rerun, "failed");
  assert.equal(expOptions(exp("--last-failed", "--rerun", "all")).rerun, "all");
  const plain = expOptions(exp());
  assert.equal(plain.grep, undefined);
  assert.equal(plain.lastFailed, undefined);
  assert.equal(plain.rerun, "none");
  const teardown = usage(() => expOptions(exp("db", "--teardown", "-t", "x")));
  assert.equal(teardown.message, "--grep cannot be combined with --teardown");
});
