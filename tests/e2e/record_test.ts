/**
 * Reading the Record on the real CLI (cli.md §2.5, §2.6, §9.4): damaged published Runs, the
 * unpublished-Run warning, `clean`, and the three `show` scopes, on copies of `carry_project`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, type TempProject, tempProject } from "../_helpers/cli.ts";
import { frame, scanLog } from "../../src/record/log.ts";
import { readRunFiles, type RunFiles } from "../_helpers/record_files.ts";
import { tree } from "./_coordination.ts";

type Json = Record<string, unknown>;

const WARNING_TAIL =
  "ignored (in progress, or left by a killed process; niceeval clean removes leftovers)";

interface Ran {
  /** Absolute Record root as the CLI names it. */
  readonly root: string;
  /** RunId by experimentId. */
  readonly runs: Map<string, string>;
  /** attempt_start events by `<experimentId>:<evalId>#<ordinal>`. */
  readonly attempts: Map<string, Json>;
}

/** Runs `exp <args> --json` (exit 0) and collects its Runs and Attempts. */
async function run(p: TempProject, args: string[]): Promise<Ran> {
  const r = await p.run(["exp", ...args, "--json"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const events = ndjson(r.stdout);
  const start = events[0]!;
  return {
    root: start.recordRoot as string,
    runs: new Map((start.runs as Json[]).map((x) => [x.experimentId as string, x.runId as string])),
    attempts: new Map(
      events.filter((e) => e.type === "attempt_start").map((
        e,
      ) => [`${e.experimentId}:${e.evalId}#${e.ordinal}`, e]),
    ),
  };
}

/** Asserts the two ERR-5 lines of a `record-invalid` for `file`, and nothing on stdout. */
function assertInvalid(
  r: { code: number; stdout: string; stderr: string },
  what: string,
  file: string,
  runDir: string,
) {
  assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
  // Issue 18.8: with --json the error is also one `error` event on stdout; nothing else is.
  if (what.includes("--json")) {
    const events = r.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(events.map((e) => [e.type, e.code]), [["error", "record-invalid"]], what);
  } else assert.equal(r.stdout, "", what);
  const lines = r.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 2, `${what}: ${r.stderr}`);
  assert.ok(lines[0]!.startsWith(`error: ${file}: `), `${what}: ${lines[0]}`);
  assert.ok(lines[0]!.endsWith(" [record-invalid]"), `${what}: ${lines[0]}`);
  assert.ok(lines[1]!.startsWith(`hint: move ${runDir} out of `), `${what}: ${lines[1]}`);
}

/** One damage of a published Run's log: the bytes of the damaged log. */
interface LogDamage {
  readonly name: string;
  damage(bytes: Uint8Array, other: RunFiles, own: RunFiles): Uint8Array;
}

const frames = (bytes: Uint8Array): Uint8Array[] =>
  scanLog(bytes).entries.map((e) => bytes.slice(e.offset, e.offset + e.length));
const concatBytes = (parts: readonly Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
};
const firstOf = (bytes: Uint8Array, kind: string) =>
  scanLog(bytes).entries.findIndex((e) => e.value.record === kind);

const LOG_DAMAGES: readonly LogDamage[] = [
  { name: "truncated", damage: (bytes) => bytes.slice(0, Math.floor(bytes.length / 2)) },
  {
    name: "a flipped byte",
    damage: (bytes) => {
      const out = bytes.slice();
      const at = scanLog(bytes).entries[firstOf(bytes, "attempt")]!;
      const i = at.offset + at.length - 10;
      out[i] = out[i]! ^ 0x01;
      return out;
    },
  },
  {
    name: "a wrong checksum",
    damage: (bytes) => {
      const out = bytes.slice();
      const at = scanLog(bytes).entries[firstOf(bytes, "member")]!;
      const space = out.indexOf(0x20, at.offset);
      out[space + 1] = out[space + 1] === 0x30 ? 0x31 : 0x30;
      return out;
    },
  },
  {
    name: "an attempt record of the wrong shape",
    damage: (bytes) => {
      const parts = frames(bytes);
      const i = firstOf(bytes, "attempt");
      const value = scanLog(bytes).entries[i]!.value as Json;
      parts[i] = frame(
        JSON.stringify({ ...value, attempt: { ...(value.attempt as Json), format: 7 } }),
      );
      return concatBytes(parts);
    },
  },
  {
    name: "no end record",
    damage: (bytes) => concatBytes(frames(bytes).slice(0, -1)),
  },
  {
    name: "the end record first",
    damage: (bytes) => {
      const parts = frames(bytes);
      return concatBytes([parts.at(-1)!, ...parts.slice(0, -1)]);
    },
  },
  {
    name: "a member record of another Run",
    damage: (bytes, other) => {
      const parts = frames(bytes);
      const entries = scanLog(bytes).entries;
      const i = entries.findIndex((e) =>
        e.value.record === "member" && other.members.has((e.value.member as Json).slotId as string)
      );
      const slotId = (entries[i]!.value.member as Json).slotId as string;
      parts[i] = frame(JSON.stringify({ record: "member", member: other.members.get(slotId) }));
      return concatBytes(parts);
    },
  },
  {
    name: "an Attempt recorded twice",
    damage: (bytes) => {
      const parts = frames(bytes);
      const i = firstOf(bytes, "attempt");
      return concatBytes([...parts.slice(0, i + 1), parts[i]!, ...parts.slice(i + 1)]);
    },
  },
];

Deno.test("niceeval show and exp: a truncated or malformed file of any kind in a published Run exits 2 naming it exits 2", async (t) => {
  await using p = await tempProject("carry_project");
  const ran = await run(p, ["direct"]);
  const runId = ran.runs.get("direct/base")!;
  const runDir = `runs/${runId}`;
  const attempt = ran.attempts.get("direct/base:standalone#0")!;
  const own = await readRunFiles(ran.root, runId);
  const other = await readRunFiles(ran.root, ran.runs.get("direct/other")!);
  const before = await tree(ran.root);
  // The --json forms report the error the same way (ERR-4), checked once.
  const readers = (json: boolean) => [
    ["show"],
    ["show", "--run", runId],
    ["show", attempt.locator as string],
    ["exp", "direct", "--dry"],
    ["exp", "direct"],
    ...(json
      ? [["show", "--json"], ["exp", "direct", "--dry", "--json"], ["exp", "direct", "--json"]]
      : []),
  ];
  const header = join(ran.root, runDir, "run.json");
  const original = await Deno.readTextFile(header);
  await t.step("truncated run.json", async () => {
    await Deno.writeTextFile(header, original.slice(0, Math.floor(original.length / 2)));
    for (const args of readers(true)) {
      assertInvalid(await p.run(args), args.join(" "), header, runDir);
    }
  });
  await t.step("malformed run.json", async () => {
    // Valid JSON of the wrong shape: the schema check names the file too.
    await Deno.writeTextFile(header, JSON.stringify({ ...JSON.parse(original), format: 7 }));
    for (const args of [["show"], ["exp", "direct"]]) {
      assertInvalid(await p.run(args), args.join(" "), header, runDir);
    }
  });
  await t.step("run.json naming another Run", async () => {
    const otherId = ran.runs.get("direct/other")!;
    await Deno.writeTextFile(header, JSON.stringify({ ...JSON.parse(original), runId: otherId }));
    for (const args of [["show"], ["exp", "direct", "--dry"]]) {
      assertInvalid(await p.run(args), args.join(" "), header, runDir);
    }
  });
  await Deno.writeTextFile(header, original);
  const log = join(ran.root, runDir, "records.log");
  const bytes = await Deno.readFile(log);
  // Every reader sees the truncated log; each other damage is read by one reader in turn, so
  // every reader meets several kinds of damage (the reader's unit tests check each kind).
  for (const [i, damage] of LOG_DAMAGES.entries()) {
    await t.step(`records.log with ${damage.name}`, async () => {
      await Deno.writeFile(log, damage.damage(bytes, other, own));
      const all = readers(damage.name === "truncated");
      for (const args of damage.name === "truncated" ? all : [all[i % all.length]!]) {
        assertInvalid(await p.run(args), `${damage.name}: ${args.join(" ")}`, log, runDir);
      }
    });
  }
  await Deno.writeFile(log, bytes);
  await t.step("truncated record.json", async () => {
    const path = join(ran.root, "record.json");
    const original = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, original.slice(0, 10));
    for (const args of [["show"], ["exp", "direct", "--dry"], ["exp", "direct"]]) {
      const r = await p.run(args);
      assert.equal(r.code, 2, args.join(" "));
      const lines = r.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 2, r.stderr);
      assert.ok(lines[0]!.startsWith(`error: ${path}: invalid JSON`), lines[0]);
      assert.ok(lines[0]!.endsWith(" [record-invalid]"), lines[0]);
      assert.equal(lines[1], `hint: fix or move ${path}, then run the command again`);
    }
    await Deno.writeTextFile(path, original);
  });
  assert.deepEqual(await tree(ran.root), before, "no command wrote to the Record");
  assert.equal((await p.run(["show"])).code, 0);
});

Deno.test("niceeval show, exp and exp --dry: unpublished Runs are ignored with one warning each; clean removes only them exits 0", async (t) => {
  await using p = await tempProject("carry_project");
  const ran = await run(p, ["direct"]);
  const root = ran.root;
  const published = [...ran.runs.values()];
  const baseRun = ran.runs.get("direct/base")!;
  // A killed Run with a later start and everything but its marker, a Run with a non-empty
  // marker, and one whose marker is a directory: all three are unpublished (REC-10).
  const killed = "0b9e6f5c-3d2a-4e8f-9a71-2c4d5e6f7a8b";
  await Deno.mkdir(join(root, "runs", killed));
  for (const entry of await tree(join(root, "runs", baseRun))) {
    const from = join(root, "runs", baseRun, entry);
    const to = join(root, "runs", killed, entry);
    if (entry.endsWith("/")) await Deno.mkdir(to, { recursive: true });
    else if (entry !== "complete") await Deno.copyFile(from, to);
  }
  const runJson = join(root, "runs", killed, "run.json");
  const doc = JSON.parse(await Deno.readTextFile(runJson));
  await Deno.writeTextFile(
    runJson,
    JSON.stringify({ ...doc, runId: killed, startedAt: "2099-01-01T00:00:00.000Z" }),
  );
  await Deno.mkdir(join(root, "runs", "bad-marker"));
  await Deno.writeTextFile(join(root, "runs", "bad-marker", "complete"), "x");
  await Deno.mkdir(join(root, "runs", "dir-marker", "complete"), { recursive: true });
  const temps = [
    join(root, ".record.json.tmp-0123abcd"),
    join(root, "runs", baseRun, ".run.json.tmp-89abcdef"),
  ];
  for (const temp of temps) await Deno.writeTextFile(temp, "{");
  const warning = `3 unpublished run(s) in ${root} ${WARNING_TAIL}`;

  await t.step("show: one line on stderr; --json: one problem", async () => {
    const human = await p.run(["show"]);
    assert.equal(human.code, 0, human.stderr);
    assert.equal(human.stderr, `! ${warning}\n`);
    const json = await p.run(["show", "--json"]);
    assert.equal(json.stderr, "");
    assert.deepEqual(JSON.parse(json.stdout).problems, [
      { code: "record-unpublished-runs", message: warning },
    ]);
  });
  await t.step(
    "exp --dry: one line on stderr; --json: one problem, sources only published",
    async () => {
      const human = await p.run(["exp", "direct", "--dry"]);
      assert.equal(human.code, 0, human.stderr);
      assert.equal(human.stderr, `! ${warning}\n`);
      assert.ok(!human.stdout.includes("unpublished"));
      const json = await p.run(["exp", "direct", "--dry", "--json"]);
      assert.equal(json.stderr, "");
      const plan = JSON.parse(json.stdout);
      assert.deepEqual(plan.problems, [{ code: "record-unpublished-runs", message: warning }]);
      assert.equal(plan.reused, 6);
      for (const row of plan.rows as Json[]) {
        assert.ok(
          published.includes(row.sourceRunId as string),
        );
      }
    },
  );
  await t.step("exp: one warning line, or one warning event with --json", async () => {
    const human = await p.run(["exp", "direct"], { env: { CI: "1" } });
    assert.equal(human.code, 0, human.stderr);
    assert.deepEqual(human.stdout.split("\n").filter((l) => l.includes("unpublished")), [
      `! ${warning}`,
    ]);
    const json = await p.run(["exp", "direct", "--json"]);
    const warnings = ndjson(json.stdout).filter((e) => e.code === "record-unpublished-runs");
    assert.deepEqual(warnings.map((e) => [e.type, e.message]), [["warning", warning]]);
  });
  await t.step(
    "clean: removes the three and the temp files, even beside a damaged Run",
    async () => {
      const log = join(root, "runs", baseRun, "records.log");
      const intact = await Deno.readFile(log);
      await Deno.writeFile(log, intact.slice(0, intact.length - 3));
      const runs = (await tree(join(root, "runs"))).filter((e) => /^[^/]+\/$/.test(e));
      const keep = runs.filter((e) => !["bad-marker/", "dir-marker/", `${killed}/`].includes(e));
      const kept = new Map<string, string[]>();
      for (const dir of keep) kept.set(dir, await tree(join(root, "runs", dir)));
      const clean = await p.run(["clean"]);
      assert.equal(clean.code, 0, clean.stderr);
      assert.equal(
        clean.stdout,
        `removed 3 unpublished run(s) from ${root}\n` +
          `removed 2 leftover temp file(s) from ${root}\n`, // issue 18.11
      );
      const after = (await tree(join(root, "runs"))).filter((e) => /^[^/]+\/$/.test(e));
      assert.deepEqual(after, keep);
      for (const dir of keep) {
        const expected = kept.get(dir)!.filter((e) => !e.includes(".tmp-"));
        assert.deepEqual(await tree(join(root, "runs", dir)), expected, dir);
      }
      for (const temp of temps) await assert.rejects(Deno.stat(temp), Deno.errors.NotFound);
      assert.deepEqual(
        await Deno.readFile(log),
        intact.slice(0, intact.length - 3),
        "a published Run is never touched",
      );
      await Deno.writeFile(log, intact);
    },
  );
  await t.step("afterwards: no warning, and nothing left to clean", async () => {
    const show = await p.run(["show"]);
    assert.deepEqual([show.code, show.stderr], [0, ""]);
    assert.equal((await p.run(["clean"])).stdout, `nothing to clean in ${root}\n`);
    const missing = await p.run(["clean", "--record", "nowhere"]);
    assert.equal(
      missing.stdout,
      `nothing to clean in ${join(await Deno.realPath(p.dir), "nowhere")}\n`,
    );
  });
});

Deno.test("niceeval show: --run, @locator and the project-current scope render the Record exits 0", async (t) => {
  await using p = await tempProject("carry_project");
  const first = await run(p, ["direct"]);
  const second = await run(p, ["direct/base", "--attempts", "3"]);
  const r1 = first.runs.get("direct/base")!;
  const r2 = second.runs.get("direct/base")!;
  const loc = (ran: Ran, slot: string) => ran.attempts.get(slot)!.locator as string;

  await t.step(
    "--run: one row per planned slot, carried ones pointing at their origin",
    async () => {
      const r = await p.run(["show", "--run", r2.slice(0, 8)]);
      assert.equal(r.code, 0, r.stderr);
      const lines = r.stdout.trimEnd().split("\n");
      assert.match(lines[0]!, new RegExp(`^Run ${r2} · direct/base · \\S+Z · 6 slots$`));
      assert.match(
        lines[1]!,
        /^Experiment +Eval +Attempt +Result +Duration +Tokens +Cost +Details$/,
      );
      // Duration, Tokens and Cost: carry_project's agents report no usage and have no price.
      const rows = lines.slice(2).map((l) => {
        const cells = l.split(/ {2,}/);
        assert.match(cells.slice(4, 7).join("|"), /^(\d+m )?\d+(\.\d)?s\|—\|—$/, l);
        return [...cells.slice(0, 4), ...cells.slice(7)];
      });
      assert.deepEqual(rows, [
        [
          "direct/base",
          "standalone",
          "#0",
          `using result ${loc(first, "direct/base:standalone#0")}`,
          `from run ${r1}`,
        ],
        [
          "direct/base",
          "standalone",
          "#1",
          `using result ${loc(first, "direct/base:standalone#1")}`,
          `from run ${r1}`,
        ],
        ["direct/base", "standalone", "#2", "passed", loc(second, "direct/base:standalone#2")],
        [
          "direct/base",
          "uses_helper",
          "#0",
          `using result ${loc(first, "direct/base:uses_helper#0")}`,
          `from run ${r1}`,
        ],
        [
          "direct/base",
          "uses_helper",
          "#1",
          `using result ${loc(first, "direct/base:uses_helper#1")}`,
          `from run ${r1}`,
        ],
        ["direct/base", "uses_helper", "#2", "passed", loc(second, "direct/base:uses_helper#2")],
      ]);
      const json = await p.run(["show", "--run", r1, "--run", r2, "--json"]);
      const doc = JSON.parse(json.stdout);
      assert.equal(doc.scope, "runs");
      assert.deepEqual(
        (doc.rows as Json[]).map((row) => `${row.runId}:${row.state}`),
        [
          ...Array(4).fill(`${r1}:executed`),
          ...[0, 0, 1, 0, 0, 1].map((x) => `${r2}:${x ? "executed" : "carried"}`),
        ],
      );
    },
  );
  await t.step("--run errors: unknown, too short, ambiguous", async () => {
    const unknown = await p.run(["show", "--run", "ffffffff"]);
    assert.deepEqual([unknown.code, /\[run-not-found\]/.test(unknown.stderr)], [2, true]);
    const short = await p.run(["show", "--run", r1.slice(0, 7)]);
    assert.equal(short.code, 2);
    assert.match(
      short.stderr,
      /\[run-not-found\]\nhint: give a full RunId or a unique prefix of at least 8 characters\n$/,
    );
    // A second published Run sharing the first 8 characters makes that prefix ambiguous.
    const twin = `${r1.slice(0, 8)}-0000-4000-8000-000000000000`;
    const twinDir = join(first.root, "runs", twin);
    await Deno.mkdir(twinDir);
    const doc = JSON.parse(await Deno.readTextFile(join(first.root, "runs", r1, "run.json")));
    await Deno.writeTextFile(join(twinDir, "run.json"), JSON.stringify({ ...doc, runId: twin }));
    await Deno.writeTextFile(join(twinDir, "complete"), "");
    const ambiguous = await p.run(["show", "--run", r1.slice(0, 8)]);
    assert.equal(ambiguous.code, 2);
    assert.match(ambiguous.stderr, /matches 2 runs \[run-ambiguous\]\nhint: use more characters: /);
    assert.ok(ambiguous.stderr.includes(r1) && ambiguous.stderr.includes(twin), ambiguous.stderr);
    await Deno.remove(twinDir, { recursive: true });
  });
  await t.step("@locator: one Attempt in full, typed in any case", async () => {
    const locator = loc(second, "direct/base:standalone#2");
    const typed = "@l" + locator.slice(2).toLowerCase();
    const r = await p.run(["show", typed]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split("\n");
    assert.deepEqual(lines.slice(0, 4), [
      `Attempt ${locator} · passed`,
      "  experiment  direct/base (agent base, model model-a)",
      "  eval        standalone #2",
      `  run         ${r2}`,
    ]);
    assert.match(lines[4]!, /^ {2}started {5}\S+Z · \d/);
    assert.ok(lines.includes("Assertions"));
    assert.ok(lines.some((l) => /^ {2}✓ /.test(l)), r.stdout);
    assert.deepEqual(lines.slice(lines.indexOf("Turns")), [
      "Turns",
      "  > Anything else  (completed)",
      "    Hello!",
    ]);
    const carried = await p.run(["show", loc(first, "direct/base:standalone#0")]);
    assert.ok(carried.stdout.includes(`\n  run         ${r1}\n`), carried.stdout);
  });
  await t.step("@locator --json: the three stored documents", async () => {
    const attempt = second.attempts.get("direct/base:standalone#2")!;
    const r = await p.run(["show", attempt.locator as string, "--json"]);
    const doc = JSON.parse(r.stdout);
    assert.equal(doc.scope, "attempt");
    const stored = (await readRunFiles(second.root, r2)).attempts.get(
      attempt.attemptId as string,
    )!;
    assert.deepEqual(doc.attempt["attempt.json"], stored.attempt);
    assert.deepEqual(doc.attempt["assertions.json"], stored.assertions);
    assert.deepEqual(doc.attempt["events.json"], stored.events);
    assert.deepEqual([doc.rows.length, doc.rows[0].attempt.locator], [1, attempt.locator]);
  });
  await t.step("@locator errors: malformed, not found, with another scope", async () => {
    const malformed = await p.run(["show", "@1ABC"]);
    assert.deepEqual([malformed.code, /\[malformed-locator\]/.test(malformed.stderr)], [2, true]);
    const missing = await p.run(["show", "@1000000000000"]);
    assert.deepEqual([missing.code, /\[locator-not-found\]/.test(missing.stderr)], [2, true]);
    const both = await p.run(["show", loc(first, "direct/base:standalone#0"), "--run", r1]);
    assert.deepEqual([both.code, /\[usage\]/.test(both.stderr)], [2, true]);
  });
  await t.step("project-current: what a rerun would see, with its coverage", async () => {
    const direct = ["--experiment", "direct/base", "--experiment", "direct/other"];
    const r = await p.run(["show", ...direct]);
    assert.equal(r.code, 0, r.stderr);
    // The median duration varies; no usage and no price: tokens and cost are unknown.
    const measures = / {2}(\d+m )?\d+(\.\d)?s {2}— {2}— {2}@/;
    assert.deepEqual(r.stdout.trimEnd().split("\n").map((l) => l.replace(measures, "  @")), [
      "direct/base   4/4 passed (100%)",
      `  standalone   2/2 passed  ${loc(first, "direct/base:standalone#1")}`,
      `  uses_helper  2/2 passed  ${loc(first, "direct/base:uses_helper#1")}`,
      "direct/other  2/2 passed (100%)",
      `  standalone   1/1 passed  ${loc(first, "direct/other:standalone#0")}`,
      `  uses_helper  1/1 passed  ${loc(first, "direct/other:uses_helper#0")}`,
      "Runs",
      `  direct/base   ${r2}`,
      `  direct/other  ${first.runs.get("direct/other")}`,
    ]);
    const text = await p.read("experiments/direct/base.ts");
    await p.write("experiments/direct/base.ts", text.replace("temperature: 0", "temperature: 1"));
    const changed = await p.run(["show", "--experiment", "direct/base", "--json"]);
    const rows = JSON.parse(changed.stdout).rows as Json[];
    assert.equal(rows.length, 4);
    assert.ok(
      rows.every((row) =>
        row.state === "missing" && row.reason === "identity-changed" && row.attempt === null
      ),
    );
    const human = await p.run(["show", "--experiment", "direct/base"]);
    assert.deepEqual(human.stdout.trimEnd().split("\n").slice(-5), [
      "Result coverage",
      "  direct/base  standalone#0  identity-changed",
      "  direct/base  standalone#1  identity-changed",
      "  direct/base  uses_helper#0  identity-changed",
      "  direct/base  uses_helper#1  identity-changed",
    ]);
  });
});
