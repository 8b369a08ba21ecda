/**
 * The secret canary (cli.md CLI-8, JUNIT-5): credentials planted in the environment and in `.env`
 * are echoed by an agent, test bodies, a sandbox command and experiment hooks in every way they
 * can be; afterwards no byte niceeval wrote — stdout, stderr, NDJSON, JUnit, every file of the
 * Record and of the state directory — may hold any of them, in any encoding.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { type CliResult, ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";
import { readRunFiles } from "../_helpers/record_files.ts";
import { decodeData } from "../../src/report/view/html.ts";

/** Credentials of the environment; `.env` of `secret_canary_project` adds three more. */
const ENV = {
  OPENAI_API_KEY: "sk-proc-CANARY-openai-1f2e3d",
  MY_SERVICE_TOKEN: "tok-CANARY-service-9a8b7c",
};

/** Every planted value: the environment's, `.env`'s applied ones and its shadowed one. */
const CANARIES = [
  ENV.OPENAI_API_KEY,
  ENV.MY_SERVICE_TOKEN,
  "sk-ant-CANARY-dotenv-4d5e6f",
  `pw"CANARY\\dotenv<&>'x`,
  "sk-shadowed-CANARY-dotenv-7a7a7a",
];

/** The fixture's own files: written by the test author, not by niceeval. */
const SOURCES = new Set([
  ".env",
  "niceeval.config.ts",
  "agents",
  "evals",
  "experiments",
  "support",
]);

/** A value as raw text, inside a JSON string, and XML-escaped as attribute and as text. */
function encodings(value: string): string[] {
  const xmlText = value.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
  const xmlAttr = xmlText.replaceAll('"', "&quot;").replaceAll("'", "&apos;");
  return [...new Set([value, JSON.stringify(value).slice(1, -1), xmlText, xmlAttr])];
}

/** Every file below `dir` (recursively), skipping the top-level names in `skip`. */
async function filesBelow(dir: string, skip = new Set<string>()): Promise<string[]> {
  const out: string[] = [];
  const walk = async (path: string) => {
    for await (const entry of Deno.readDir(path)) {
      const full = join(path, entry.name);
      if (path === dir && skip.has(entry.name)) continue;
      if (entry.isDirectory) await walk(full);
      else if (entry.isFile) out.push(full);
    }
  };
  await walk(dir);
  return out.sort();
}

/** Runs the CLI with the canary environment and keeps both streams as outputs to check. */
async function capture(
  p: TempProject,
  outputs: Map<string, string>,
  args: string[],
): Promise<CliResult> {
  const r = await p.run(args, { env: ENV });
  assert.notEqual(r.code, 3, `niceeval ${args.join(" ")}: ${r.stdout}${r.stderr}`);
  outputs.set(`stdout of niceeval ${args.join(" ")}`, r.stdout);
  outputs.set(`stderr of niceeval ${args.join(" ")}`, r.stderr);
  return r;
}

Deno.test("niceeval exp: no canary credential reaches any stream or file in any mode exits 1", async (t) => {
  await using p = await tempProject("secret_canary_project");
  const outputs = new Map<string, string>();
  let locators: string[] = [];
  let runId = "";

  await t.step("exp in human mode and with --json, both with --junit", async () => {
    const human = await capture(p, outputs, ["exp", "--junit", "junit.xml"]);
    assert.equal(human.code, 1, human.stdout + human.stderr);
    assert.match(human.stdout, /test-threw: thrown with \*\*\* \| \*\*\*/);
    assert.match(human.stdout, /teardown of canary failed: experiment teardown failed with \*\*\*/);
    assert.match(human.stdout, /experiment setup console\.log \*\*\*/);
    await Deno.mkdir(join(p.dir, "reports"));
    const json = await capture(p, outputs, [
      "exp",
      "--json",
      "--rerun=all",
      "--junit",
      "reports/junit.xml",
    ]);
    assert.equal(json.code, 1, json.stdout + json.stderr);
    const events = ndjson(json.stdout); // throws on any line that is not JSON (ERR-4)
    locators = events.filter((e) => e.type === "attempt_start").map((e) => e.locator as string);
    runId = (events[0]!.runs as { runId: string }[])[0]!.runId;
    assert.equal(locators.length, 3);
    assert.match(json.stdout, /thrown with \*\*\*/);
    // Console output outside an Attempt goes to stderr under --json, redacted.
    assert.match(json.stderr, /experiment setup console\.error \*\*\*/);
  });

  await t.step("show in every scope, exp --dry and list, human and --json", async () => {
    const commands = [
      ["show"],
      ["show", "--run", runId],
      ["exp", "--dry"],
      ["list"],
      ...locators.map((locator) => ["show", locator]),
    ];
    for (const args of commands) {
      await capture(p, outputs, args);
      await capture(p, outputs, [...args, "--json"]);
    }
    // The HTML report of view embeds every Attempt's documents: the project's and one Run's.
    await capture(p, outputs, ["view"]);
    await capture(p, outputs, ["view", "--run", runId, "--out", "run-report.html"]);
    const echo = outputs.get(`stdout of niceeval show ${locators[0]}`)!;
    assert.match(echo, /body console\.log \*\*\*/);
    assert.match(echo, /received sandbox says \*\*\*/);
  });

  await t.step("no encoding of any canary in any output or file", async () => {
    const files = [
      ...await filesBelow(p.dir, SOURCES),
      ...await filesBelow(p.stateDir),
    ];
    const texts = new Map(outputs);
    for (const file of files) {
      const name = file.startsWith(p.stateDir)
        ? `state dir: ${relative(p.stateDir, file)}`
        : relative(p.dir, file);
      const text = await Deno.readTextFile(file);
      texts.set(name, text);
      // A report's data is compressed: its leaks are looked for in the inflated text.
      const data = /id="niceeval-data">([^<]*)</.exec(text)?.[1];
      if (data !== undefined) texts.set(`${name} data`, decodeData(data));
    }
    const names = [...texts.keys()];
    const logs = names.filter((n) => n.endsWith("/records.log"));
    assert.equal(logs.length, 2, "the log of each of the two Runs is checked");
    for (const kind of ["junit.xml", "records.log", "report.html data"]) {
      const redacted = names.filter((n) => n.endsWith(kind) && texts.get(n)!.includes("***"));
      assert.ok(redacted.length > 0, `no ${kind} shows a redacted value: the echoes did not run`);
    }
    // Each document of the log shows a redacted echo: the echoes reached every record kind.
    const run = await readRunFiles(join(p.dir, ".niceeval", "record"), runId);
    const docs = [...run.attempts.values()];
    for (const kind of ["attempt", "assertions", "events"] as const) {
      const redacted = docs.filter((d) => JSON.stringify(d[kind]).includes("***"));
      assert.ok(redacted.length > 0, `no ${kind} record shows a redacted value`);
    }
    assert.ok(
      run.diagnostics.some((d) => JSON.stringify(d).includes("***")),
      "no diagnostic record shows a redacted value",
    );
    let checks = 0;
    const leaks: string[] = [];
    for (const [name, text] of texts) {
      for (const canary of CANARIES) {
        for (const form of encodings(canary)) {
          checks++;
          if (text.includes(form)) leaks.push(`${name}: ${form}`);
        }
      }
      // Any piece of a canary long enough to hold its marker is a leak too.
      checks++;
      if (text.includes("CANARY")) leaks.push(`${name}: a piece of a canary`);
    }
    assert.deepEqual(leaks, [], `${leaks.length} leak(s) in ${checks} checks`);
    assert.ok(files.some((f) => f.startsWith(p.stateDir)), "the state directory was not checked");
    // 36 streams (2 exp runs, 16 readers, stdout and stderr each) and 12 files: the 3 files of each
    // of two Runs (run.json, records.log, complete), record.json, the 2 JUnit reports, the 2 HTML
    // reports and the lock.
    assert.equal(outputs.size, 36);
    const written = names.filter((n) => !outputs.has(n) && !n.endsWith(" data")).map((n) =>
      n.replace(/runs\/[0-9a-f-]{36}\//, "runs/<RunId>/").replace(
        /roots\/[0-9a-f]{64}/,
        "roots/<hash>",
      )
    );
    assert.deepEqual(written, [
      ".niceeval/record/record.json",
      ".niceeval/record/runs/<RunId>/complete",
      ".niceeval/record/runs/<RunId>/records.log",
      ".niceeval/record/runs/<RunId>/run.json",
      ".niceeval/record/runs/<RunId>/complete",
      ".niceeval/record/runs/<RunId>/records.log",
      ".niceeval/record/runs/<RunId>/run.json",
      ".niceeval/report.html",
      "junit.xml",
      "reports/junit.xml",
      "run-report.html",
      "state dir: roots/<hash>.lock",
    ]);
  });
});
