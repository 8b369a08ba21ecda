/**
 * `niceeval view` (issue 17, item 1) on Records the real CLI wrote: the report file, its embedded
 * data against `show --json`, `--run`, `--compare`, `--open`, `--serve` and the usage errors.
 * What the page shows in a browser is tested in view_browser_test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../../src/cli/main.ts";
import { decodeData } from "../../src/report/view/html.ts";
import { createFakeIo } from "../_fakes/io.ts";
import { drain, ndjson, readUntil, type TempProject, tempProject } from "../_helpers/cli.ts";

type Json = Record<string, unknown>;

/** The model a report embeds. */
function modelOf(html: string): Json {
  const match = html.match(
    /<script type="application\/octet-stream" data-encoding="gzip\+base64" id="niceeval-data">([^<]*)<\/script>/,
  );
  assert.ok(match, "the report has no data block");
  return JSON.parse(decodeData(match[1]!));
}

/** Runs `exp <experiment>`; returns the RunId it published. */
async function exp(p: TempProject, experiment: string): Promise<string> {
  const r = await p.run(["exp", experiment, "--json"]);
  const receipt = ndjson(r.stdout).find((e) => e.type === "receipt");
  assert.ok(receipt, r.stdout + r.stderr);
  return (receipt.runIds as string[])[0]!;
}

/** Per experiment, the counts `show --json` rows give. */
function showCounts(rows: Json[]): Map<string, Json> {
  const counts = new Map<string, Json>();
  for (const row of rows) {
    const id = row.experimentId as string;
    const c = counts.get(id) ?? { slots: 0, passed: 0, failed: 0, errored: 0, scored: 0 };
    c.slots = (c.slots as number) + 1;
    const verdict = (row.attempt as Json | null)?.verdict as string | undefined;
    if (verdict !== undefined && verdict in c) c[verdict] = (c[verdict] as number) + 1;
    counts.set(id, c);
  }
  return counts;
}

Deno.test("niceeval view: writes one report whose numbers equal show --json, and --run, --compare (issue 17)", async (t) => {
  await using p = await tempProject("compare_project");
  const before = await exp(p, "before");
  const after = await exp(p, "after");

  await t.step("the default report of the project's current results", async () => {
    const r = await p.run(["view"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, ".niceeval/report.html\n");
    assert.match(r.stderr, /^report: 2 experiments, 24 Attempts, 2 Runs \(\d+ kB\)\n$/);
    const html = await p.read(".niceeval/report.html");
    assert.doesNotMatch(html, /(?:src|href)="(?:https?:)?\/\//, "no network reference");
    const model = modelOf(html);
    assert.equal(model.format, "niceeval.view");
    assert.equal(model.scope, "project-current");
    const show = JSON.parse((await p.run(["show", "--json"])).stdout);
    const expected = showCounts(show.rows);
    const experiments = model.experiments as Json[];
    assert.deepEqual(experiments.map((e) => e.id), ["after", "before"]);
    for (const e of experiments) {
      const c = e.counts as Json;
      assert.deepEqual(
        {
          slots: e.slots,
          passed: c.passed,
          failed: c.failed,
          errored: c.errored,
          scored: c.scored,
        },
        expected.get(e.id as string),
      );
    }
    const withAttempt = (show.rows as Json[]).filter((row) => row.attempt !== null);
    assert.equal((model.attempts as Json[]).length, withAttempt.length);
    assert.deepEqual(
      (model.attempts as Json[]).map((a) => a.locator).sort(),
      withAttempt.map((row) => (row.attempt as Json).locator).sort(),
    );
    assert.deepEqual((model.runs as Json[]).map((run) => run.runId), [after, before]);
    assert.equal(model.compare, null);
  });

  await t.step("--run reports one stored Run; --compare adds the comparison", async () => {
    const r = await p.run(["view", "--run", before, "--compare", before, after, "--out", "r.html"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "r.html\n");
    const model = modelOf(await p.read("r.html"));
    assert.equal(model.scope, "runs");
    assert.deepEqual((model.experiments as Json[]).map((e) => e.id), ["before"]);
    const compare = model.compare as Json;
    assert.equal(compare.format, "niceeval.compare");
    assert.deepEqual(compare.counts, {
      regressed: 1,
      fixed: 1,
      "still-failing": 1,
      "still-passing": 2,
      new: 1,
      gone: 1,
    });
  });

  await t.step("bad input is one usage error each, and nothing is written", async () => {
    await Deno.mkdir(join(p.dir, "adir"));
    const cases: [string[], RegExp][] = [
      [["--out", "adir"], /--out "adir" cannot be written: it is a directory \[usage\]/],
      [["--out", "missing/r.html"], /its directory does not exist \[usage\]/],
      [["--port", "8080"], /--port applies to view --serve only \[usage\]/],
      [["--serve", "--port", "70000"], /--port requires an integer ≤ 65535/],
      [["--compare", before], /--compare takes exactly two Runs or experiments, got 1 \[usage\]/],
      [["--run", before, "--experiment", "before"], /--experiment applies to the project scope/],
      [["--run", "nope-nope-nope"], /no published run "nope-nope-nope" \[run-not-found\]/],
      [["stray"], /unexpected argument "stray" \[usage\]/],
    ];
    for (const [args, message] of cases) {
      // In-process: the same main() as the binary, without a process start per case.
      const io = createFakeIo({ cwd: p.dir });
      const out = args.includes("--out") ? [] : ["--out", "x.html"];
      const code = await main(["view", ...args, ...out], io);
      assert.equal(code, 2, `${args.join(" ")}: ${io.stderr.text()}`);
      assert.equal(io.stdout.text(), "");
      assert.match(io.stderr.text(), message, args.join(" "));
      assert.match(io.stderr.text(), /\nhint: /);
    }
    await assert.rejects(Deno.stat(join(p.dir, "x.html")), Deno.errors.NotFound);
  });
});

Deno.test("niceeval view --run: two Runs of one experiment point to --compare (issue 17)", async () => {
  await using p = await tempProject("compare_project");
  const first = await exp(p, "before");
  const second = (await p.run(["exp", "before", "--rerun", "all", "--json"])).stdout;
  const again = (ndjson(second).find((e) => e.type === "receipt")!.runIds as string[])[0]!;
  const r = await p.run(["view", "--run", first, "--run", again]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /are both Runs of experiment "before" \[usage\]/);
  assert.match(r.stderr, new RegExp(`hint: compare them with niceeval view --compare ${first}`));
});

Deno.test("niceeval view --open: starts $BROWSER on the written report (issue 17)", async () => {
  await using p = await tempProject("compare_project");
  await p.write(
    "browser.sh",
    '#!/bin/sh\nprintf "%s" "$1" > opened.tmp && mv opened.tmp opened.txt\n',
  );
  await Deno.chmod(join(p.dir, "browser.sh"), 0o755);
  const watcher = Deno.watchFs(p.dir);
  try {
    const r = await p.run(["view", "--open"], { env: { BROWSER: join(p.dir, "browser.sh") } });
    assert.equal(r.code, 0, r.stderr);
    for await (const event of watcher) {
      if (event.paths.some((path) => path.endsWith("opened.txt"))) break;
    }
  } finally {
    watcher.close();
  }
  assert.equal(await p.read("opened.txt"), join(p.dir, ".niceeval", "report.html"));
});

Deno.test("niceeval view --open: a missing browser is a warning; the report is still written (issue 17)", async () => {
  await using p = await tempProject("compare_project");
  const r = await p.run(["view", "--open"], { env: { BROWSER: "no-such-browser-xyz" } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, ".niceeval/report.html\n");
  assert.match(
    r.stderr,
    /! could not open the report: no-such-browser-xyz was not found; set BROWSER/,
  );
});

Deno.test("niceeval view --serve: serves on 127.0.0.1 and rebuilds once a Run is published (issue 17)", async () => {
  await using p = await tempProject("compare_project");
  await exp(p, "before");
  const child = p.spawn(["view", "--serve"]);
  const stderr = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  try {
    const { lines, rest } = await readUntil(child, (line) => line.startsWith("http://"));
    const url = lines.at(-1)!;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const first = modelOf(await (await fetch(url)).text());
    assert.equal((first.runs as Json[]).length, 1);
    const missing = await fetch(new URL("other", url));
    assert.equal(missing.status, 404);
    await missing.body?.cancel();
    const after = await exp(p, "after");
    const second = modelOf(await (await fetch(url)).text());
    assert.deepEqual((second.runs as Json[]).map((r) => r.runId)[0], after);
    child.kill("SIGINT");
    assert.equal((await child.status).code, 0);
    assert.equal(await drain(rest), "");
    const errors = await drain(stderr);
    assert.match(errors, /^serving report: 2 experiments, 12 Attempts, 1 Run .*; Ctrl-C stops\n/);
    assert.match(errors, /\nrebuilt report: 2 experiments, 24 Attempts, 2 Runs /);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await child.status;
  }
});

Deno.test("niceeval view: a Record of the v1 layout is reported like a v2 one (issue 17)", async () => {
  await using p = await tempProject("record_v1_project");
  const r = await p.run(["view", "--record", "record", "--out", "v1.html"]);
  assert.equal(r.code, 0, r.stderr);
  const model = modelOf(await p.read("v1.html"));
  const show = JSON.parse((await p.run(["show", "--record", "record", "--json"])).stdout);
  const withAttempt = (show.rows as Json[]).filter((row) => row.attempt !== null);
  assert.ok(withAttempt.length > 0, "the fixture has current results");
  const attempts = model.attempts as Json[];
  assert.deepEqual(
    attempts.map((a) => a.locator).sort(),
    withAttempt.map((row) => (row.attempt as Json).locator).sort(),
  );
  // Each Attempt's documents were read from its v1 files.
  for (const a of attempts) assert.ok((a.assertions as Json[]).length > 0, `${a.locator}`);
  assert.equal((model.runs as Json[]).length, 5);
});
