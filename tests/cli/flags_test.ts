import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import {
  decimalFlag,
  EXP_FLAGS,
  EXP_LIST_FLAGS,
  firstPositionalIndex,
  forbidTogether,
  intFlag,
  LIST_FLAGS,
  oneLine,
  type ParsedFlags,
  parseFlags,
  tagsFlag,
} from "../../src/cli/flags.ts";

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    return error;
  }
  assert.fail("expected a UsageError");
}

function exp(...args: string[]): ParsedFlags {
  return parseFlags(args, EXP_FLAGS, "exp");
}

Deno.test("parseFlags() accepts --flag value and --flag=value alike (CLI-1)", () => {
  const spaced = exp("local", "--attempts", "3", "--junit", "out.xml");
  const inline = exp("local", "--attempts=3", "--junit=out.xml");
  assert.deepEqual(spaced, inline);
  assert.deepEqual(spaced.positionals, ["local"]);
  assert.deepEqual(spaced.values.get("attempts"), ["3"]);
  assert.deepEqual(spaced.values.get("junit"), ["out.xml"]);
});

Deno.test("parseFlags() accepts flags anywhere after the command (CLI-1)", () => {
  const flags = exp("--json", "local", "--tag", "smoke", "greet");
  assert.deepEqual(flags.positionals, ["local", "greet"]);
  assert.deepEqual(flags.values.get("tag"), ["smoke"]);
  assert.ok(flags.values.has("json"));
});

Deno.test("parseFlags() keeps an inline value that itself contains =", () => {
  assert.deepEqual(exp("--tag=a=b").values.get("tag"), ["a=b"]);
});

Deno.test("parseFlags() treats everything after -- as positionals (CLI-1)", () => {
  const flags = exp("local", "--", "--json", "-x", "--attempts");
  assert.deepEqual(flags.positionals, ["local", "--json", "-x", "--attempts"]);
  assert.equal(flags.values.size, 0);
});

Deno.test("parseFlags() reads --rerun greet as a bare --rerun and a positional (CLI-2)", () => {
  const flags = exp("local", "--rerun", "greet");
  assert.deepEqual(flags.positionals, ["local", "greet"]);
  assert.deepEqual(flags.values.get("rerun"), ["failed"]);
});

Deno.test("parseFlags() takes the next token as --rerun's value only when it is allowed (CLI-2)", () => {
  assert.deepEqual(exp("--rerun", "all").values.get("rerun"), ["all"]);
  assert.deepEqual(exp("--rerun", "failed").values.get("rerun"), ["failed"]);
  assert.deepEqual(exp("--rerun=all").values.get("rerun"), ["all"]);
  assert.deepEqual(exp("--rerun").values.get("rerun"), ["failed"]);
  assert.deepEqual(exp("--rerun", "--json").values.get("rerun"), ["failed"]);
});

Deno.test("parseFlags() rejects --rerun=<other> naming the allowed values", () => {
  const e = usage(() => exp("--rerun=greet"));
  assert.equal(e.code, "usage");
  assert.equal(e.message, '--rerun accepts failed or all, got "greet"');
  assert.equal(e.hint, "see niceeval exp --help");
  assert.equal(usage(() => exp("--rerun=")).code, "usage");
});

Deno.test("parseFlags() rejects a single-valued flag given twice (CLI-3)", () => {
  for (
    const args of [["--attempts", "1", "--attempts", "2"], ["--json", "--json"], [
      "--rerun",
      "--rerun=all",
    ]]
  ) {
    const e = usage(() => exp(...args));
    assert.equal(e.code, "usage");
    assert.match(e.message, /was given more than once$/);
  }
});

Deno.test("parseFlags() collects a repeatable flag in order", () => {
  assert.deepEqual(exp("--tag", "a", "--tag=b", "--tag", "a").values.get("tag"), ["a", "b", "a"]);
});

Deno.test("parseFlags() rejects a value flag without its value (CLI-3)", () => {
  for (const args of [["--attempts"], ["--junit", "--json"], ["--tag", "--"]]) {
    const e = usage(() => exp(...args));
    assert.equal(e.code, "usage");
    assert.match(e.message, /^--\S+ requires a value </);
    assert.equal(e.hint, "see niceeval exp --help");
  }
});

Deno.test("parseFlags() rejects a value on a switch", () => {
  const e = usage(() => exp("--json=yes"));
  assert.equal(e.message, '--json takes no value, got "yes"');
});

Deno.test("parseFlags() suggests a known flag within edit distance 2 (ERR-6)", () => {
  const e = usage(() => exp("--atempts", "2"));
  assert.equal(e.code, "usage");
  assert.equal(e.message, "unknown flag --atempts");
  assert.equal(e.hint, "did you mean --attempts?");
  assert.equal(usage(() => exp("--jsno")).hint, "did you mean --json?");
  assert.equal(usage(() => exp("--dyr=1")).message, "unknown flag --dyr");
});

Deno.test("parseFlags() points at the command's help when no flag is near (ERR-6)", () => {
  const e = usage(() => exp("--frobnicate"));
  assert.equal(e.message, "unknown flag --frobnicate");
  assert.equal(e.hint, "see niceeval exp --help");
  assert.equal(
    usage(() => parseFlags(["--attempts", "2"], EXP_LIST_FLAGS, "exp list")).hint,
    "see niceeval exp list --help",
  );
});

Deno.test("parseFlags() treats single-dash words as unknown flags", () => {
  const e = usage(() => exp("-json"));
  assert.equal(e.message, "unknown flag -json");
  assert.equal(e.hint, "did you mean --json?");
});

Deno.test("parseFlags() keeps a lone - as a positional", () => {
  assert.deepEqual(exp("-").positionals, ["-"]);
});

const REJECTED_LINES: readonly [string, string, string][] = [
  [
    "agent",
    "--agent is not an exp option; the agent is part of the experiment file",
    "add a file under experiments/ that calls defineExperiment({ agent })",
  ],
  [
    "model",
    "--model is not an exp option; the model is part of the experiment file",
    'add a file under experiments/ with defineExperiment({ agent, model: "<name>" })',
  ],
  ["force", "--force is not an exp option", "use --rerun all to execute every Attempt again"],
  [
    "keep-sandbox",
    "--keep-sandbox is not available yet",
    "inspect a failed Attempt with niceeval show @<locator>",
  ],
];

Deno.test("parseFlags() rejects --agent, --model, --force and --keep-sandbox with the texts of cli.md §3.3", () => {
  for (const [flag, message, hint] of REJECTED_LINES) {
    for (
      const args of [[`--${flag}`], [`--${flag}`, "x"], [`--${flag}=x`], ["local", `--${flag}=`]]
    ) {
      const e = usage(() => exp(...args));
      assert.equal(e.code, "flag-rejected", args.join(" "));
      assert.equal(e.message, message);
      assert.equal(e.hint, hint);
    }
  }
});

Deno.test("parseFlags() rejects the cli.md §3.3 flags on exp list too", () => {
  const e = usage(() => parseFlags(["--model=x"], EXP_LIST_FLAGS, "exp list"));
  assert.equal(e.code, "flag-rejected");
});

Deno.test("parseFlags() reports --model as an unknown flag outside exp", () => {
  const e = usage(() => parseFlags(["--model", "x"], LIST_FLAGS, "list"));
  assert.equal(e.code, "usage");
  assert.equal(e.message, "unknown flag --model");
});

Deno.test("parseFlags() treats Object.prototype names as unknown flags", () => {
  for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
    const e = usage(() => exp(`--${name}`));
    assert.equal(e.code, "usage", name);
    assert.equal(e.message, `unknown flag --${name}`);
    assert.equal(typeof e.hint, "string");
  }
});

const CAP = { max: 1000 };

Deno.test("intFlag() parses integers ≥ the minimum and names flag and value otherwise (ERR-7)", () => {
  assert.equal(intFlag(exp("--attempts", "12"), "attempts", CAP), 12);
  assert.equal(intFlag(exp(), "attempts", CAP), undefined);
  for (const raw of ["0", "2.5", "-1", "abc", "", "1e3", "0x10"]) {
    const e = usage(() => intFlag(exp(`--max-concurrency=${raw}`), "max-concurrency", CAP));
    assert.equal(e.code, "usage");
    assert.equal(e.message, `--max-concurrency requires an integer ≥ 1, got "${raw}"`);
  }
});

Deno.test("intFlag() words the message exactly as ERR-7 shows", () => {
  const e = usage(() => intFlag(exp("--attempts", "0"), "attempts", CAP));
  assert.equal(e.message, '--attempts requires an integer ≥ 1, got "0"');
});

Deno.test("intFlag() rejects whitespace, signs and exponents around the digits", () => {
  for (const raw of [" 1", "1 ", "\t1", "+1", "1\n", "１", "1_000", "1,000", "1.", "٣"]) {
    const e = usage(() => intFlag(exp(`--attempts=${raw}`), "attempts", CAP));
    assert.equal(e.message, `--attempts requires an integer ≥ 1, got ${JSON.stringify(raw)}`);
  }
});

Deno.test("intFlag() rejects values above the maximum, naming the bound", () => {
  assert.equal(intFlag(exp("--attempts", "1000"), "attempts", CAP), 1000);
  for (const raw of ["1001", "100000000", "99999999999999999999", "9".repeat(400)]) {
    const e = usage(() => intFlag(exp(`--attempts=${raw}`), "attempts", CAP));
    assert.match(e.message, /^--attempts requires an integer ≤ 1000, got "9*[0-9]*…?"$/);
    assert.ok(e.message.length < 150, e.message);
  }
});

Deno.test("decimalFlag() accepts decimals ≥ 0 and rejects the rest", () => {
  const budget = { max: 1_000_000 };
  assert.equal(decimalFlag(exp("--budget", "0"), "budget", budget), 0);
  assert.equal(decimalFlag(exp("--budget", "2.75"), "budget", budget), 2.75);
  assert.equal(decimalFlag(exp("--budget", ".5"), "budget", budget), 0.5);
  for (const raw of ["-1", "abc", "", "1e3", "Infinity", "NaN", " 1", "1 ", "+1", "1.", "."]) {
    const e = usage(() => decimalFlag(exp(`--budget=${raw}`), "budget", budget));
    assert.equal(e.message, `--budget requires a decimal ≥ 0, got ${JSON.stringify(raw)}`);
  }
  const e = usage(() => decimalFlag(exp("--budget=1000000.5"), "budget", budget));
  assert.equal(e.message, '--budget requires a decimal ≤ 1000000, got "1000000.5"');
});

Deno.test("oneLine() escapes line breaks and control characters", () => {
  assert.equal(oneLine("a\nb\r\u001b[2Jc\u2028"), "a\\u000ab\\u000d\\u001b[2Jc\\u2028");
  assert.equal(oneLine("plain — ünïcode"), "plain — ünïcode");
});

Deno.test("parseFlags() shows an unknown flag with a line break quoted on one line", () => {
  const e = usage(() => exp("--a\nb"));
  assert.equal(e.message, 'unknown flag "--a\\nb"');
});

Deno.test("forbidTogether() rejects the pair whatever the order (FLAG-4)", () => {
  for (const args of [["--early-exit", "--no-early-exit"], ["--no-early-exit", "--early-exit"]]) {
    const e = usage(() => forbidTogether(exp(...args), "early-exit", "no-early-exit"));
    assert.equal(e.code, "usage");
    assert.equal(e.message, "--early-exit cannot be combined with --no-early-exit");
  }
  forbidTogether(exp("--early-exit"), "early-exit", "no-early-exit");
});

Deno.test("tagsFlag() rejects an empty tag", () => {
  assert.deepEqual(tagsFlag(exp("--tag", "a")), ["a"]);
  assert.equal(usage(() => tagsFlag(exp("--tag="))).message, "--tag requires a non-empty tag");
  assert.equal(usage(() => tagsFlag(exp("--tag", " "))).code, "usage");
});

Deno.test("firstPositionalIndex() skips flags and their values", () => {
  assert.equal(firstPositionalIndex(["list"], EXP_FLAGS), 0);
  assert.equal(firstPositionalIndex(["--json", "list"], EXP_FLAGS), 1);
  assert.equal(firstPositionalIndex(["--tag", "smoke", "list"], EXP_FLAGS), 2);
  assert.equal(firstPositionalIndex(["--junit", "list"], EXP_FLAGS), -1);
  assert.equal(firstPositionalIndex(["--rerun", "all", "x"], EXP_FLAGS), 2);
  assert.equal(firstPositionalIndex(["--rerun", "list"], EXP_FLAGS), 1);
  assert.equal(firstPositionalIndex(["--", "list"], EXP_FLAGS), 1);
  assert.equal(firstPositionalIndex(["--bogus", "list"], EXP_FLAGS), 1);
  assert.equal(firstPositionalIndex(["--json"], EXP_FLAGS), -1);
});
