/**
 * Scores on the real CLI (issue 18, item 7; docs/scores.md): earned out of possible with a
 * percentage, `passAt` failing a low score in the headline, RESULTS, FAILURES, JUnit, `show`,
 * NDJSON and the exit code, also when the failed result is reused; definition errors exit 2 and
 * name the file. Item 11: nothing scored prints no mean.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";

type Json = Record<string, unknown>;

/** The lines of `text`. */
function lines(text: string): string[] {
  return text.split("\n");
}

/** The Attempt's locator in a permanent `✗` line or a table, by eval. */
function locatorIn(stdout: string, evalId: string): string {
  const line = lines(stdout).find((l) => l.includes(evalId) && /@1[0-9A-Z]{12}/.test(l));
  assert.ok(line, stdout);
  return line.match(/@1[0-9A-Z]{12}/)![0];
}

async function withProject(body: (p: TempProject) => Promise<void>): Promise<void> {
  await using p = await tempProject("score_project");
  await body(p);
}

Deno.test("issue 18.7: RESULTS shows earned/possible and a percentage where points are declared", async () => {
  await withProject(async (p) => {
    const capped = await p.run(["exp", "det", "score/capped"]);
    assert.equal(capped.code, 0, capped.stdout + capped.stderr);
    assert.match(capped.stdout, /^SCORED {2}/m);
    assert.match(capped.stdout, /^ {2}1 scored · 0 skipped · 0 errored {2}\(0 reused\)$/m);
    assert.match(capped.stdout, /^ {2}det {2}score 2\/4 \(50%\) · 1\/1 complete · /m);
    // Two t.score(1) without maxPoints: the possible score is unknown, no maximum is made up.
    const direct = await p.run(["exp", "det", "score/direct"]);
    assert.equal(direct.code, 0, direct.stdout + direct.stderr);
    assert.match(direct.stdout, /^ {2}det {2}score 2 · 1\/1 complete · /m);
    const run = await p.run(["show", "--run", runIdOf(capped.stdout)]);
    assert.match(run.stdout, /^det {9}score\/capped {2}#0 {7}scored 2\/4 \(50%\) /m);
  });
});

/** The RunId of the single `niceeval show --run <id>` NEXT line. */
function runIdOf(stdout: string): string {
  const id = stdout.match(/niceeval show --run (\S+)/)?.[1];
  assert.ok(id, stdout);
  return id;
}

Deno.test("issue 18.7: a score below passAt fails: headline, RESULTS, FAILURES, JUnit, exit 1", async () => {
  await withProject(async (p) => {
    const r = await p.run(["exp", "det", "score/handles", "--junit", "junit.xml"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const out = lines(r.stdout);
    const locator = locatorIn(r.stdout, "score/handles  det#0");
    const at = out.indexOf(`✗ score/handles  det#0  failed  ${locator}`);
    assert.notEqual(at, -1, r.stdout);
    assert.equal(out[at + 1], "    score 1/2 (50%) below passAt 1.5");
    assert.match(r.stdout, /^FAILED {2}/m);
    assert.ok(out.includes("  0 scored · 1 failed · 0 skipped · 0 errored  (0 reused)"), r.stdout);
    assert.ok(
      out.includes(
        "    score/handles  score 1/2 (50%) · 1/1 complete · 1 failed (below passAt 1.5)",
      ),
      r.stdout,
    );
    const failures = out.indexOf("FAILURES  1 failed · 0 errored");
    assert.deepEqual(out.slice(failures + 1, failures + 3), [
      "  score below passAt 1.5  (1×)",
      `    ✗ ${locator}  det  score/handles#0`,
    ]);
    const xml = await p.read("junit.xml");
    assert.match(xml, /<testsuite name="det" tests="1" failures="1" errors="0" skipped="0"/);
    assert.ok(
      xml.includes(
        `<failure type="score" message="score 1/2 (50%) below passAt 1.5">` +
          `score 1/2 (50%) below passAt 1.5\n` +
          `includes("Bye") · expected Bye · received Hello!\n` +
          `locator: ${locator}\ndetails: niceeval show ${locator}</failure>`,
      ),
      xml,
    );
    assert.ok(xml.includes("<system-out>score 1/2 (50%)</system-out>"), xml);

    // Reused, it is still failed: the Record keeps the passAt it ran with.
    const again = await p.run(["exp", "det", "score/handles"]);
    assert.equal(again.code, 1, again.stdout + again.stderr);
    assert.ok(
      lines(again.stdout).includes("  0 scored · 1 failed · 0 skipped · 0 errored  (1 reused)"),
      again.stdout,
    );
    assert.ok(
      lines(again.stdout).includes(
        `    ✗ ${locator}  det  score/handles#0  (reused from ${locator})`,
      ),
      again.stdout,
    );

    const shown = await p.run(["show", locator]);
    assert.equal(shown.code, 0, shown.stderr);
    assert.equal(lines(shown.stdout)[0], `Attempt ${locator} · failed`);
    assert.ok(lines(shown.stdout).includes("  score       1/2 (50%) · passAt 1.5"), shown.stdout);
    const project = await p.run(["show"]);
    assert.match(
      project.stdout,
      /^ {2}score\/handles {2}score 1\/2 \(50%\) · 1\/1 complete · 1 failed \(below passAt 1\.5\) /m,
    );
  });
});

Deno.test("issue 18.7: JSON carries possible and passAt next to score", async () => {
  await withProject(async (p) => {
    const r = await p.run(["exp", "det", "score/handles", "score/direct", "--json"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const events = ndjson(r.stdout);
    const end = (evalId: string) =>
      events.find((e) => e.type === "attempt_end" && e.evalId === evalId)!;
    assert.deepEqual(
      ["verdict", "score", "possible", "passAt"].map((k) => end("score/handles")[k]),
      ["failed", 1, 2, 1.5],
    );
    assert.deepEqual(
      ["verdict", "score", "possible", "passAt"].map((k) => end("score/direct")[k]),
      ["scored", 2, null, null],
    );
    const line = events.find((e) => e.type === "eval" && e.evalId === "score/handles")!;
    assert.deepEqual(
      ["verdict", "failed", "score", "possible", "passAt"].map((k) => line[k]),
      ["failed", 1, 1, 2, 1.5],
    );
    const show = JSON.parse((await p.run(["show", "--json"])).stdout) as Json;
    const row = (show.rows as Json[]).find((x) => x.evalId === "score/handles")!;
    const attempt = row.attempt as Json;
    assert.deepEqual([attempt.verdict, attempt.possible, attempt.passAt], ["failed", 2, 1.5]);
  });
});

Deno.test("issue 18.11: nothing scored prints no mean (OUT-H13)", async () => {
  await withProject(async (p) => {
    const r = await p.run(["exp", "det", "score/throws"]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(
      lines(r.stdout).includes("    score/throws  score — · 0/1 complete · 1 errored"),
      r.stdout,
    );
    assert.doesNotMatch(r.stdout, /score 0 /);
  });
});

Deno.test("issue 18.7: invalid maxPoints and passAt exit 2 naming the file", async () => {
  await withProject(async (p) => {
    const cases: [string, string][] = [
      [
        `defineScoreEval({ maxPoints: 2, passAt: 3, test() {} })`,
        "passAt must be at most maxPoints (2), got 3",
      ],
      [
        `defineScoreEval({ passAt: "80%", test() {} })`,
        `passAt must be a number of points ≥ 0, got "80%": for a share of the possible score, ` +
        `write that share of maxPoints (0.8 × maxPoints)`,
      ],
      [`defineScoreEval({ passAt: -1, test() {} })`, "passAt must be a finite number ≥ 0, got -1"],
      [
        `defineScoreEval({ maxPoints: 0, test() {} })`,
        "maxPoints must be a finite number > 0, got 0",
      ],
      [
        `defineEval({ passAt: 1, test() {} })`,
        "passAt is an option of defineScoreEval: a defineEval eval passes or fails on its checks",
      ],
    ];
    for (const [definition, message] of cases) {
      const name = definition.startsWith("defineEval") ? "defineEval" : "defineScoreEval";
      await p.write(
        join("evals", "score", "bad.eval.ts"),
        `import { ${name} } from "niceeval";\n\nexport default ${definition};\n`,
      );
      const r = await p.run(["exp", "det"]);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.ok(
        r.stderr.includes(`error: evals/score/bad.eval.ts: ${message} [`),
        r.stderr,
      );
    }
  });
});
