import assert from "node:assert/strict";
import { AssertionAuthoringError } from "../../src/_shared/errors.ts";
import {
  excludes,
  hasSections,
  includes,
  includesUrl,
  pattern,
  similarity,
} from "../../src/expect/mod.ts";
import { countSections, findUrls, levenshtein } from "../../src/expect/text_matchers.ts";
import { checkOne } from "./_turns.ts";

Deno.test("includes() returns matched when the subject contains the text", async () => {
  const entry = await checkOne("It is sunny today", includes("sunny"));
  assert.equal(entry.result, "matched");
  assert.equal(entry.criterion, 'includes("sunny")');
  assert.equal(entry.matcher, "includes");
});

Deno.test("includes() returns mismatched with expected and received when the text is absent", async () => {
  const entry = await checkOne("It rains", includes("sunny"));
  assert.equal(entry.result, "mismatched");
  assert.equal(entry.status, "failed");
  assert.equal(entry.expected, "sunny");
  assert.equal(entry.received, "It rains");
});

Deno.test("includes() compares case-insensitively with ignoreCase", async () => {
  assert.equal((await checkOne("SUNNY", includes("sunny"))).result, "mismatched");
  const match = includes("sunny", { ignoreCase: true });
  assert.equal((await checkOne("SUNNY", match)).result, "matched");
  assert.equal(match.name, 'includes("sunny", { ignoreCase: true })');
});

Deno.test("includes() returns mismatched with reason not-a-string when the subject is a number", async () => {
  const entry = await checkOne(42, includes("4"));
  assert.equal(entry.result, "mismatched");
  assert.equal(entry.reason, "not-a-string");
  assert.equal(entry.received, 42);
});

Deno.test("includes() truncates a long received subject to about 200 characters", async () => {
  const entry = await checkOne("x".repeat(1000), includes("y"));
  assert.equal(typeof entry.received, "string");
  assert.ok((entry.received as string).length <= 201);
});

Deno.test("includes() throws not-supported for the LATER option stripComments", () => {
  assert.throws(
    () => includes("a", { stripComments: true } as never),
    (e: unknown) => e instanceof AssertionAuthoringError && e.code === "not-supported",
  );
});

Deno.test("includes() throws a TypeError when the text is not a string", () => {
  assert.throws(() => includes(3 as never), TypeError);
});

Deno.test("excludes() returns mismatched when the subject contains the text", async () => {
  assert.equal((await checkOne("an error occurred", excludes("error"))).result, "mismatched");
  assert.equal((await checkOne("all fine", excludes("error"))).result, "matched");
  assert.equal(
    (await checkOne("ERROR", excludes("error", { ignoreCase: true }))).result,
    "mismatched",
  );
});

Deno.test("excludes() returns mismatched with reason not-a-string when the subject is undefined", async () => {
  const entry = await checkOne(undefined, excludes("x"));
  assert.equal(entry.reason, "not-a-string");
  assert.equal(entry.received, "undefined");
});

Deno.test("pattern() resets lastIndex so a global RegExp matches on every evaluation", async () => {
  const re = /hello/g;
  const match = pattern(re);
  assert.equal((await checkOne("hello world", match)).result, "matched");
  assert.equal((await checkOne("hello world", match)).result, "matched");
  re.lastIndex = 3;
  assert.equal((await checkOne("hello", match)).result, "matched");
  assert.equal(match.name, "pattern(/hello/g)");
});

Deno.test("pattern() returns mismatched with reason not-a-string when the subject is an object", async () => {
  const entry = await checkOne({ text: "hello" }, pattern(/hello/));
  assert.equal(entry.reason, "not-a-string");
});

Deno.test("includesUrl() counts distinct URLs after trimming trailing punctuation", () => {
  const urls = findUrls(
    "See https://a.example/x. Also (https://a.example/x), and http://b.example/y?q=1; " +
      "[link](https://c.example/z)!",
  );
  assert.deepEqual(urls, ["https://a.example/x", "http://b.example/y?q=1", "https://c.example/z"]);
});

Deno.test("includesUrl() returns matched only with at least min distinct URLs", async () => {
  const text = "https://a.example and https://a.example, then https://b.example.";
  assert.equal((await checkOne(text, includesUrl(2))).result, "matched");
  assert.equal((await checkOne(text, includesUrl(3))).result, "mismatched");
  assert.equal((await checkOne("no links", includesUrl())).result, "mismatched");
  assert.equal((await checkOne("ftp://x.example", includesUrl())).result, "mismatched");
});

Deno.test("includesUrl() returns mismatched with reason not-a-string when the subject is null", async () => {
  assert.equal((await checkOne(null, includesUrl())).reason, "not-a-string");
});

Deno.test("includesUrl() throws a RangeError when min is negative or fractional", () => {
  assert.throws(() => includesUrl(-1), RangeError);
  assert.throws(() => includesUrl(1.5), RangeError);
});

Deno.test("hasSections() counts ATX headings and ignores fenced code", () => {
  const markdown = [
    "# Title",
    "text",
    "```md",
    "# not a heading",
    "```",
    "## Second",
    "~~~~",
    "### still code",
    "~~~",
    "### still code (the fence needs four tildes to close)",
    "~~~~",
    "#hashtag is not a heading",
    "    # indented code is not a heading",
    "###### Six",
  ].join("\n");
  assert.equal(countSections(markdown), 3);
});

Deno.test("hasSections() treats an unclosed fence as code to the end", () => {
  assert.equal(countSections("# A\n```\n# B\n# C"), 1);
});

Deno.test("hasSections() returns matched with at least min headings (default 2)", async () => {
  assert.equal((await checkOne("# A\n## B", hasSections())).result, "matched");
  assert.equal((await checkOne("# A\ntext", hasSections())).result, "mismatched");
  assert.equal((await checkOne("# A", hasSections(1))).result, "matched");
  assert.equal((await checkOne(5, hasSections())).reason, "not-a-string");
});

Deno.test("similarity() measures 1 - levenshtein / max length over code points", async () => {
  assert.equal(levenshtein([..."kitten"], [..."sitting"]), 3);
  const entry = await checkOne("kitten", similarity("sitting"));
  assert.equal(entry.entry, "measurement");
  assert.equal(entry.measurement, 1 - 3 / 7);
  assert.equal(entry.result, null);
});

Deno.test("similarity() counts an astral character as one code point", async () => {
  const entry = await checkOne("a😀", similarity("ab"));
  assert.equal(entry.measurement, 0.5);
});

Deno.test("similarity() gives 1 when both strings are empty and 0 for a non-string", async () => {
  assert.equal((await checkOne("", similarity(""))).measurement, 1);
  assert.equal((await checkOne("", similarity("abc"))).measurement, 0);
  assert.equal((await checkOne(123, similarity("123"))).measurement, 0);
});

Deno.test("includes() returns a frozen match that carries no evaluation in its enumerable keys", () => {
  const match = includes("a");
  assert.ok(Object.isFrozen(match));
  assert.deepEqual(Object.keys(match).sort(), ["domain", "kind", "name"]);
  assert.equal(match.kind, "boolean");
  assert.equal(match.domain, "value");
});
