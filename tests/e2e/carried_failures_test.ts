/**
 * Issue 18, items 1 and 10, on the real CLI: `carried_failures_project` has `farewell`, which
 * always fails two assertions, and `broken`, which always errors with one long, multi-line
 * message. Run twice, the second run reuses the failures of `farewell` (errors run again):
 * FAILURES and JUnit must explain the reused failures exactly like the fresh ones, and list the
 * identical errors once, whole.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type CliResult, tempProject } from "../_helpers/cli.ts";

const ENV = { CI: "1" };
/** The message `broken` throws, as one line. */
const BROKEN = "upstream unavailable the upstream service refused every request of this Attempt; " +
  "it answered 503 Service Unavailable with a body that explains the outage at length, ".repeat(4)
    .trim() +
  " at evals/broken.eval.ts:10:11";
const SHAPE = 'includes("Goodbye") · expected Goodbye · received Hello!';

/** The locator of each `✗ <evalId>  <experimentId>#<o>  <verdict>  @<locator>` line, by slot. */
function locators(stdout: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of stdout.matchAll(/^✗ (\S+) {2}agent#(\d) {2}\w+ {2}(@\w+)$/gm)) {
    found.set(`${m[1]}#${m[2]}`, m[3]!);
  }
  return found;
}

/** The FAILURES panel of a human run, up to NEXT. */
function failures(r: CliResult): string[] {
  const lines = r.stdout.split("\n");
  return lines.slice(lines.indexOf("FAILURES  2 failed · 2 errored"), lines.indexOf("NEXT"));
}

/** The `<testcase>` element of `name` in a JUnit document. */
function testcase(xml: string, name: string): string {
  const start = xml.indexOf(`<testcase name="${name}"`);
  assert.ok(start >= 0, xml);
  return xml.slice(start, xml.indexOf("</testcase>", start));
}

Deno.test("issue 18.10 and 18.1: reused failures read like fresh ones in FAILURES and JUnit; identical errors are listed once, whole", async () => {
  await using p = await tempProject("carried_failures_project");
  const fresh = await p.run(["exp", "--attempts", "2", "--junit", "fresh.xml"], { env: ENV });
  assert.equal(fresh.code, 1, fresh.stderr);
  const first = locators(fresh.stdout);
  const reused = await p.run(["exp", "--attempts", "2", "--junit", "reused.xml"], { env: ENV });
  assert.equal(reused.code, 1, reused.stderr);
  assert.match(reused.stdout, /\n {2}2 of 4 reused from earlier runs · 2 to run\n/);
  const second = locators(reused.stdout);
  assert.deepEqual([...second.keys()].sort(), ["broken#0", "broken#1"], reused.stdout);

  assert.deepEqual(failures(fresh), [
    "FAILURES  2 failed · 2 errored",
    `  ${SHAPE}  (2×)`,
    `    ✗ ${first.get("farewell#0")}  agent  farewell#0`,
    `    ✗ ${first.get("farewell#1")}  agent  farewell#1`,
    `  error test-threw: ${BROKEN}  (2×)`,
    `    ✗ ${first.get("broken#0")}  agent  broken#0`,
    "    … 1 more",
    `    details: niceeval show ${first.get("broken#0")}`,
  ]);
  assert.deepEqual(failures(reused), [
    "FAILURES  2 failed · 2 errored",
    `  ${SHAPE}  (2×)`,
    `    ✗ ${first.get("farewell#0")}  agent  farewell#0  (reused from ${first.get("farewell#0")})`,
    `    ✗ ${first.get("farewell#1")}  agent  farewell#1  (reused from ${first.get("farewell#1")})`,
    `  error test-threw: ${BROKEN}  (2×)`,
    `    ✗ ${second.get("broken#0")}  agent  broken#0`,
    "    … 1 more",
    `    details: niceeval show ${second.get("broken#0")}`,
  ]);

  const freshXml = await Deno.readTextFile(join(p.dir, "fresh.xml"));
  const reusedXml = await Deno.readTextFile(join(p.dir, "reused.xml"));
  for (const ordinal of [0, 1]) {
    const locator = first.get(`farewell#${ordinal}`)!;
    const failure =
      `<failure type="assertion" message="${
        SHAPE.replaceAll('"', "&quot;")
      }">${SHAPE}\nincludes("See you") · expected See you · received Hello!\n` +
      `locator: ${locator}\ndetails: niceeval show ${locator}</failure>`;
    const name = `farewell [agent#${ordinal}]`;
    assert.ok(testcase(freshXml, name).includes(failure), freshXml);
    assert.ok(testcase(reusedXml, name).includes(failure), reusedXml);
    assert.match(
      testcase(reusedXml, name),
      new RegExp(`</failure>\n {6}<system-out>carried from ${locator} \\(run [0-9a-f-]{36}\\)`),
    );
  }
});
