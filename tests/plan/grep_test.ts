import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import { compileGrep, grepArgument, grepList, grepMatches } from "../../src/plan/grep.ts";

function usage(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail("expected a UsageError");
}

const CAPITAL = { id: "geo/capital", description: "What is the capital of France?" };
const ADD = { id: "math/add", description: "What is 2+2?" };
const BARE = { id: "misc/bare" };

Deno.test("issue 18.2: grepMatches() searches the ID and the description, ignoring case", () => {
  const match = (pattern: string, target: { id: string; description?: string }) =>
    grepMatches(compileGrep([pattern]), target);
  assert.equal(match("capital", CAPITAL), true);
  assert.equal(match("CAPITAL", CAPITAL), true);
  assert.equal(match("france", CAPITAL), true);
  assert.equal(match("geo/", CAPITAL), true);
  assert.equal(match("france", ADD), false);
  assert.equal(match("bare", BARE), true);
  assert.equal(match("description", BARE), false);
});

Deno.test("issue 18.2: a --grep value matches as text or as a regular expression; OR-ed", () => {
  assert.equal(grepMatches(compileGrep(["2\\+2"]), ADD), true);
  // As a regular expression "2+2" needs "22"; as text it is found.
  assert.equal(grepMatches(compileGrep(["2+2"]), ADD), true);
  assert.equal(grepMatches(compileGrep(["2+2"]), { id: "x/22" }), true);
  assert.equal(grepMatches(compileGrep(["IS 2+2?"]), ADD), true);
  assert.equal(grepMatches(compileGrep(["3+3"]), ADD), false);
  assert.equal(grepMatches(compileGrep(["capital.*france"]), CAPITAL), true);
  assert.equal(grepMatches(compileGrep(["^geo/"]), CAPITAL), true);
  assert.equal(grepMatches(compileGrep(["^capital"]), CAPITAL), false);
  const either = compileGrep(["capital", "2\\+2"]);
  assert.equal(grepMatches(either, CAPITAL), true);
  assert.equal(grepMatches(either, ADD), true);
  assert.equal(grepMatches(either, BARE), false);
  // No pattern keeps everything.
  assert.equal(grepMatches([], BARE), true);
});

Deno.test("issue 18.2: compileGrep() rejects an invalid or empty pattern with a usage error", () => {
  const bad = usage(() => compileGrep(["ok", "what("]));
  assert.equal(bad.code, "usage");
  assert.equal(
    bad.message,
    '--grep requires a regular expression, got "what(" (unterminated group)',
  );
  assert.equal(
    bad.hint,
    "escape special characters with a backslash, for example -t '2\\+2' or -t 'what\\?'",
  );
  const long = usage(() => compileGrep(["(" + "x".repeat(100)]));
  assert.match(long.message, /^--grep requires a regular expression, got "\(x{79}…" \(/);
  const empty = usage(() => compileGrep([""]));
  assert.equal(empty.message, "--grep requires a non-empty pattern");
});

Deno.test("issue 18.2: grepArgument() and grepList() quote values for hints and messages", () => {
  assert.equal(grepArgument("capital"), "-t capital");
  assert.equal(grepArgument("geo/capital-1"), "-t geo/capital-1");
  assert.equal(grepArgument("what is"), "-t 'what is'");
  assert.equal(grepArgument("it's"), "-t 'it'\\''s'");
  assert.equal(grepList(["a"]), '--grep "a"');
  assert.equal(grepList(["a", 'b"c']), '--grep "a" or "b\\"c"');
});
