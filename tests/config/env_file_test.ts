import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import { missingEnvEntries, parseEnvFile } from "../../src/config/mod.ts";

function invalid(text: string): UsageError {
  try {
    parseEnvFile(text);
  } catch (error) {
    assert.ok(error instanceof UsageError, String(error));
    return error;
  }
  assert.fail(`expected env.invalid-line for ${JSON.stringify(text)}`);
}

Deno.test("parseEnvFile() reads KEY=value lines with an optional export prefix (rule 1.1.4)", () => {
  assert.deepEqual(
    parseEnvFile("A=1\nexport B=two\n  C = spaced  \nexport   D=x=y\nE=\nF=a b\n"),
    [["A", "1"], ["B", "two"], ["C", "spaced"], ["D", "x=y"], ["E", ""], ["F", "a b"]],
  );
});

Deno.test("parseEnvFile() skips blank lines and # comments", () => {
  assert.deepEqual(parseEnvFile("\n# comment\n   # indented\n\nK=v\n\n"), [["K", "v"]]);
});

Deno.test("parseEnvFile() keeps single-quoted values literal", () => {
  assert.deepEqual(parseEnvFile(`K='a\\nb "q" #x'`), [["K", 'a\\nb "q" #x']]);
  assert.deepEqual(parseEnvFile("K=''"), [["K", ""]]);
});

Deno.test('parseEnvFile() expands \\n, \\t, \\" and \\\\ in double quotes', () => {
  assert.deepEqual(parseEnvFile(String.raw`K="a\nb\tc\"d\\e"`), [["K", 'a\nb\tc"d\\e']]);
  assert.deepEqual(parseEnvFile(`K="it's # fine"`), [["K", "it's # fine"]]);
});

Deno.test("parseEnvFile() accepts CRLF line endings and a byte-order mark", () => {
  assert.deepEqual(parseEnvFile("\uFEFFA=1\r\nB=2\r\n"), [["A", "1"], ["B", "2"]]);
});

Deno.test("parseEnvFile() rejects any other line with env.invalid-line and its number (rule 1.1.4)", () => {
  const lines = [
    "just text",
    "=value",
    "1KEY=x",
    "MY-KEY=x",
    'K="unterminated',
    "K='unterminated",
    'K="bad \\q escape"',
    'K="a"b"',
    "K='a'b'",
    'K="x" trailing',
    'K=ab"c',
    "export",
  ];
  for (const line of lines) {
    const e = invalid(`OK=1\n# note\n${line}\nLATER=2`);
    assert.equal(e.code, "env.invalid-line", line);
    assert.equal(e.message, ".env:3: expected KEY=value");
    assert.ok(e.hint.length > 0);
  }
});

Deno.test("parseEnvFile() never puts the value into the error", () => {
  const secret = "sk-live-0123456789abcdef";
  const e = invalid(`OPENAI_API_KEY "${secret}`);
  for (const text of [e.message, e.hint, String(e.stack)]) assert.ok(!text.includes(secret));
  assert.equal(e.message, ".env:1: expected KEY=value");
});

Deno.test("missingEnvEntries() never overrides a set variable, even an empty one (rule 1.1.3)", () => {
  const parsed = parseEnvFile("A=1\nB=2\nC=3\n");
  assert.deepEqual(missingEnvEntries(parsed, { B: "set", C: "" }), [["A", "1"]]);
});

Deno.test("missingEnvEntries() takes the last value of a key given twice", () => {
  assert.deepEqual(missingEnvEntries(parseEnvFile("A=1\nB=x\nA=2\n"), {}), [["A", "2"], [
    "B",
    "x",
  ]]);
});

Deno.test("missingEnvEntries() treats Object.prototype names as ordinary keys", () => {
  const parsed = parseEnvFile("constructor=1\ntoString=2\n");
  assert.deepEqual(missingEnvEntries(parsed, {}), [["constructor", "1"], ["toString", "2"]]);
});
