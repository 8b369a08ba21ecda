/**
 * Records written in the v1 layout keep working (cli.md §9): `record_v1_project` holds a Record
 * that niceeval wrote with the v1 layout (`record.json`, `runs/<RunId>/run.json`, `members/`,
 * `attempts/<AttemptId>/`), next to the exact sources that produced it. Every test runs the real
 * CLI on a byte-exact copy and checks that `show` reads the v1 Runs, that `exp` carries from them,
 * and that a newer `record.json` is refused. The RunIds, AttemptIds and locators below are the
 * fixture's; the fixture's README says how it was made.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ndjson, REPO, type TempProject, tempProject } from "../_helpers/cli.ts";
import { tree } from "./_coordination.ts";

type Json = Record<string, unknown>;

const FIXTURE = "record_v1_project";
/** Every command names the fixture's Record root. */
const RECORD = ["--record", "record"];

/** The five published v1 Runs of the fixture, in the order they were made. */
const RUN = {
  /** `exp`: experiment `scripted`, all 6 slots executed. */
  first: "bcbc8640-30ca-4ff3-b810-69a1a9e81794",
  /** `exp`: experiment `single`, its 1 slot executed. */
  firstSingle: "9c855b83-4062-4cea-96fe-2a3f412dd3ed",
  /** `exp` again: `scripted`, all 6 slots carried from `first`. */
  second: "852a094e-7914-433d-bab4-820c46b7b833",
  /** `exp` again: `single`, its slot carried from `firstSingle`. */
  secondSingle: "8653a6e4-ee3e-403e-81ec-847e77ebf440",
  /** `exp scripted --rerun failed`: `farewell` executed again, 4 slots carried from `first`. */
  rerun: "85d78e1d-ff8d-465d-94e7-28043f57f41b",
} as const;

/** One Attempt stored in the fixture. */
interface StoredAttempt {
  /** `<experimentId>:<evalId>#<ordinal>`. */
  readonly slot: string;
  /** The Run that executed it. */
  readonly runId: string;
  readonly attemptId: string;
  readonly locator: string;
  readonly verdict: "passed" | "failed" | "scored";
  readonly score: number | null;
}

const ATTEMPTS: readonly StoredAttempt[] = [
  {
    slot: "scripted:farewell#0",
    runId: RUN.first,
    attemptId: "d94d93d2-4c49-4d45-a528-ccbd43d10383",
    locator: "@100QGVQ396HWX",
    verdict: "failed",
    score: null,
  },
  {
    slot: "scripted:farewell#1",
    runId: RUN.first,
    attemptId: "8c0a0ac6-02dc-4cd3-aaea-a6a501788cad",
    locator: "@1NSEX5GGTWEPC",
    verdict: "failed",
    score: null,
  },
  {
    slot: "scripted:greet#0",
    runId: RUN.first,
    attemptId: "5cd0a08f-6084-470e-be00-bcde5cd2d191",
    locator: "@1S7T2VZXH35BF",
    verdict: "passed",
    score: null,
  },
  {
    slot: "scripted:greet#1",
    runId: RUN.first,
    attemptId: "f8dd1937-8f05-4581-8a42-212e166cdcd6",
    locator: "@12FARR4RZD7X5",
    verdict: "passed",
    score: null,
  },
  {
    slot: "scripted:weather#0",
    runId: RUN.first,
    attemptId: "3beb3b0e-60e1-4163-ad3b-2858e414de62",
    locator: "@1ZYSQJMHBBNYC",
    verdict: "scored",
    score: 2,
  },
  {
    slot: "scripted:weather#1",
    runId: RUN.first,
    attemptId: "b3836166-e3a4-499b-9ea0-1386fefad3cf",
    locator: "@1W9W4PWC23TYQ",
    verdict: "scored",
    score: 2,
  },
  {
    slot: "single:greet#0",
    runId: RUN.firstSingle,
    attemptId: "fe76c6cb-3363-41c4-988b-96fb67468fa2",
    locator: "@1H80DEBMS5CM7",
    verdict: "passed",
    score: null,
  },
  {
    slot: "scripted:farewell#0",
    runId: RUN.rerun,
    attemptId: "c8e666dc-ae64-424e-9d26-1e38ec06fbc4",
    locator: "@11AB0PF4WBRWT",
    verdict: "failed",
    score: null,
  },
  {
    slot: "scripted:farewell#1",
    runId: RUN.rerun,
    attemptId: "643bd8cd-466f-46ce-a939-757f2f544124",
    locator: "@1A602FCD60CXD",
    verdict: "failed",
    score: null,
  },
];

const BY_LOCATOR = new Map(ATTEMPTS.map((a) => [a.locator, a]));
const attemptAt = (locator: string) => BY_LOCATOR.get(locator)!;

/** How one Run got each slot's result: `[slot, member action, locator of the Attempt]`. */
type Member = readonly [string, "executed" | "carried", string];

const FIRST_SCRIPTED: readonly Member[] = [
  ["scripted:farewell#0", "executed", "@100QGVQ396HWX"],
  ["scripted:farewell#1", "executed", "@1NSEX5GGTWEPC"],
  ["scripted:greet#0", "executed", "@1S7T2VZXH35BF"],
  ["scripted:greet#1", "executed", "@12FARR4RZD7X5"],
  ["scripted:weather#0", "executed", "@1ZYSQJMHBBNYC"],
  ["scripted:weather#1", "executed", "@1W9W4PWC23TYQ"],
];

/** What a rerun sees today: `rerun` for `scripted`, `secondSingle` for `single` (CARRY-1). */
const CURRENT: readonly Member[] = [
  ["scripted:farewell#0", "executed", "@11AB0PF4WBRWT"],
  ["scripted:farewell#1", "executed", "@1A602FCD60CXD"],
  ["scripted:greet#0", "carried", "@1S7T2VZXH35BF"],
  ["scripted:greet#1", "carried", "@12FARR4RZD7X5"],
  ["scripted:weather#0", "carried", "@1ZYSQJMHBBNYC"],
  ["scripted:weather#1", "carried", "@1W9W4PWC23TYQ"],
  ["single:greet#0", "carried", "@1H80DEBMS5CM7"],
];

const MEMBERS: Readonly<Record<string, readonly Member[]>> = {
  [RUN.first]: FIRST_SCRIPTED,
  [RUN.firstSingle]: [["single:greet#0", "executed", "@1H80DEBMS5CM7"]],
  [RUN.second]: FIRST_SCRIPTED.map(([slot, , locator]) => [slot, "carried", locator]),
  [RUN.secondSingle]: [["single:greet#0", "carried", "@1H80DEBMS5CM7"]],
  [RUN.rerun]: CURRENT.slice(0, 6),
};

/** One `show --json` row, reduced to what a reader must get right. */
function rowOf(row: Json): string {
  const a = row.attempt as Json;
  return [
    `${row.experimentId}:${row.evalId}#${row.ordinal}`,
    row.runId,
    row.state,
    a.attemptId,
    a.locator,
    a.originRunId,
    a.verdict,
    a.score,
  ].join(" ");
}

/** The row that `runId` lists for `member`: the Attempt, its origin Run and its verdict. */
function expectedRow(runId: string, [slot, state, locator]: Member): string {
  const a = attemptAt(locator);
  return [slot, runId, state, a.attemptId, locator, a.runId, a.verdict, a.score].join(" ");
}

/** A copy of the fixture project, Record included, byte for byte. */
function project(): Promise<TempProject> {
  return tempProject(FIXTURE);
}

/** `show --json` on the fixture's Record, which must exit 0 with nothing on stderr. */
async function showJson(p: TempProject, args: string[]): Promise<Json> {
  const r = await p.run(["show", ...RECORD, ...args, "--json"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stderr, "");
  return JSON.parse(r.stdout) as Json;
}

/** Every file of the copied Record with its text, to show that readers write nothing. */
async function recordFiles(p: TempProject): Promise<Map<string, string>> {
  const root = join(p.dir, "record");
  const files = new Map<string, string>();
  for (const path of (await tree(root)).sort()) {
    if (!path.endsWith("/")) files.set(path, await Deno.readTextFile(join(root, path)));
  }
  return files;
}

/** The `--dry --json` decision of every ordinal: `carry <locator> <verdict> from <RunId>` or
 * `run:<reason>`. */
async function decisions(p: TempProject, args: string[]): Promise<{ doc: Json; by: Json }> {
  const r = await p.run(["exp", ...RECORD, ...args, "--dry", "--json"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const doc = JSON.parse(r.stdout) as Json;
  const by: Json = {};
  for (const row of doc.rows as Json[]) {
    for (const o of row.ordinals as Json[]) {
      by[`${row.experimentId}:${row.evalId}#${o.ordinal}`] = o.action === "carry"
        ? `carry ${o.locator} ${o.verdict} from ${row.sourceRunId}`
        : `run:${o.reason}`;
    }
  }
  return { doc, by };
}

/** The project-current lines of `show`, keyed `<experimentId>` and `<experimentId>/<evalId>`. */
function projectLines(stdout: string): Map<string, string> {
  const lines = new Map<string, string>();
  let experiment = "";
  for (const line of stdout.trimEnd().split("\n")) {
    if (line === "Runs") break; // the source Runs, then coverage: no experiment lines
    const first = line.trim().split(/\s+/)[0]!;
    if (!line.startsWith(" ")) experiment = first;
    lines.set(line.startsWith(" ") ? `${experiment}/${first}` : first, line);
  }
  return lines;
}

/** The project-current verdict and latest locator of each (experiment, eval) from `show`. */
const PROJECT_LINES: readonly [string, readonly string[]][] = [
  ["scripted", ["2/4 passed", "score 2"]],
  ["scripted/farewell", ["0/2 passed", "2 failed", "@1A602FCD60CXD"]],
  ["scripted/greet", ["2/2 passed", "@12FARR4RZD7X5"]],
  ["scripted/weather", ["score 2", "2/2 complete", "@1W9W4PWC23TYQ"]],
  ["single", ["1/1 passed"]],
  ["single/greet", ["1/1 passed", "@1H80DEBMS5CM7"]],
];

function assertProjectLines(stdout: string): void {
  const lines = projectLines(stdout);
  assert.deepEqual([...lines.keys()].sort(), PROJECT_LINES.map(([key]) => key).sort(), stdout);
  for (const [key, parts] of PROJECT_LINES) {
    for (const part of parts) assert.ok(lines.get(key)!.includes(part), `${key}: ${part}`);
  }
}

Deno.test("niceeval show: the project scope of a v1 Record lists every eval's verdicts from the latest v1 Runs exits 0", async () => {
  await using p = await project();
  const doc = await showJson(p, []);
  assert.deepEqual([doc.scope, doc.problems], ["project-current", []]);
  assert.deepEqual(
    (doc.rows as Json[]).map(rowOf),
    CURRENT.map((m) => expectedRow(m[0].startsWith("single") ? RUN.secondSingle : RUN.rerun, m)),
  );
  const human = await p.run(["show", ...RECORD]);
  assert.deepEqual([human.code, human.stderr], [0, ""]);
  assertProjectLines(human.stdout);
  assert.ok(!human.stdout.includes("Result coverage"), "every slot has a result");
});

Deno.test("niceeval show --run: each v1 Run lists its executed and carried members with their origin Runs exits 0", async (t) => {
  await using p = await project();
  const before = await recordFiles(p);
  for (const [runId, members] of Object.entries(MEMBERS)) {
    await t.step(`--json ${runId}`, async () => {
      const doc = await showJson(p, ["--run", runId]);
      assert.equal(doc.scope, "runs");
      assert.deepEqual(
        (doc.rows as Json[]).map(rowOf),
        members.map((m) => expectedRow(runId, m)),
      );
    });
  }
  await t.step("several Runs at once, by prefix", async () => {
    const doc = await showJson(p, ["--run", RUN.first.slice(0, 8), "--run", RUN.rerun]);
    assert.deepEqual(
      (doc.rows as Json[]).map((row) => `${row.runId}:${row.state}`),
      [
        ...MEMBERS[RUN.first]!.map(([, state]) => `${RUN.first}:${state}`),
        ...MEMBERS[RUN.rerun]!.map(([, state]) => `${RUN.rerun}:${state}`),
      ],
    );
  });
  await t.step(
    "human: the rerun Run names each Attempt and each carried one's origin",
    async () => {
      const r = await p.run(["show", ...RECORD, "--run", RUN.rerun]);
      assert.deepEqual([r.code, r.stderr], [0, ""]);
      const lines = r.stdout.trimEnd().split("\n");
      for (const part of [`Run ${RUN.rerun}`, "scripted", "6 slots"]) {
        assert.ok(lines[0]!.includes(part), `${lines[0]} has ${part}`);
      }
      for (const [slot, state, locator] of MEMBERS[RUN.rerun]!) {
        const row = lines.filter((l) => l.includes(locator));
        assert.equal(row.length, 1, `${slot}: ${r.stdout}`);
        const expected = state === "carried" ? `from run ${RUN.first}` : attemptAt(locator).verdict;
        assert.ok(row[0]!.includes(expected), `${slot}: ${row[0]} has ${expected}`);
      }
    },
  );
  assert.deepEqual(await recordFiles(p), before, "show writes nothing");
});

Deno.test("niceeval show @locator: a v1 Attempt prints its verdict, Run, assertions and turns exits 0", async (t) => {
  await using p = await project();
  await t.step("a failed pass Attempt: the failing assertion", async () => {
    const r = await p.run(["show", ...RECORD, "@100QGVQ396HWX"]);
    assert.deepEqual([r.code, r.stderr], [0, ""]);
    const lines = r.stdout.trimEnd().split("\n");
    assert.ok(lines[0]!.includes("@100QGVQ396HWX") && lines[0]!.includes("failed"), lines[0]);
    assert.ok(r.stdout.includes(RUN.first), r.stdout);
    const failing = lines.filter((l) => l.includes("says goodbye"));
    assert.equal(failing.length, 1, r.stdout);
    for (const part of ["✗", "Goodbye", "Hello, niceeval!", "evals/farewell.eval.ts:8"]) {
      assert.ok(failing[0]!.includes(part), `${failing[0]} has ${part}`);
    }
    assert.ok(lines.some((l) => l.includes("Say hello")), r.stdout);
  });
  await t.step(
    "a score Attempt typed in lower case: both scored assertions and the tool call",
    async () => {
      const r = await p.run(["show", ...RECORD, "@1zysqjmhbbnyc"]);
      assert.deepEqual([r.code, r.stderr], [0, ""]);
      const lines = r.stdout.trimEnd().split("\n");
      assert.ok(lines[0]!.includes("@1ZYSQJMHBBNYC") && lines[0]!.includes("scored"), lines[0]);
      const sunny = lines.find((l) => l.includes('includes("sunny")'));
      const rain = lines.find((l) => l.includes('includes("rain")'));
      assert.ok(sunny?.includes("✓") && sunny.includes("evals/weather.eval.ts:8"), r.stdout);
      assert.ok(rain?.includes("✗") && rain.includes("evals/weather.eval.ts:9"), r.stdout);
      assert.ok(lines.some((l) => l.includes("get_weather")), r.stdout);
      assert.ok(lines.some((l) => l.includes("It is sunny in Brooklyn.")), r.stdout);
    },
  );
  await t.step("an Attempt that later Runs carry: the Run that executed it", async () => {
    const r = await p.run(["show", ...RECORD, "@1S7T2VZXH35BF"]);
    assert.deepEqual([r.code, r.stderr], [0, ""]);
    assert.ok(r.stdout.includes(RUN.first), r.stdout);
    for (const other of [RUN.second, RUN.rerun]) assert.ok(!r.stdout.includes(other), r.stdout);
  });
  await t.step("--json: the three stored documents as written", async () => {
    for (const locator of ["@100QGVQ396HWX", "@1ZYSQJMHBBNYC", "@11AB0PF4WBRWT"]) {
      const a = attemptAt(locator);
      const doc = await showJson(p, [locator]);
      assert.equal(doc.scope, "attempt");
      assert.deepEqual((doc.rows as Json[]).map((row) => (row.attempt as Json).locator), [locator]);
      const dir = join(REPO, "tests", "fixtures", FIXTURE, "record", "runs", a.runId);
      const stored = doc.attempt as Json;
      for (const name of ["attempt.json", "assertions.json", "events.json"]) {
        const file = join(dir, "attempts", a.attemptId, name);
        assert.deepEqual(
          stored[name],
          JSON.parse(await Deno.readTextFile(file)),
          `${locator} ${name}`,
        );
      }
      assert.equal((stored["attempt.json"] as Json).attemptId, a.attemptId);
    }
  });
});

Deno.test("niceeval exp --dry: every slot of a v1 Record carries from the latest v1 Runs and --rerun tiers pick by verdict exits 0", async (t) => {
  await using p = await project();
  const before = await recordFiles(p);
  await t.step("no flag: all 7 carried, nothing to run", async () => {
    const { doc, by } = await decisions(p, []);
    assert.deepEqual([doc.total, doc.reused, doc.toRun], [7, 7, 0]);
    const expected: Json = {};
    for (const [slot, , locator] of CURRENT) {
      const source = slot.startsWith("single") ? RUN.secondSingle : RUN.rerun;
      expected[slot] = `carry ${locator} ${attemptAt(locator).verdict} from ${source}`;
    }
    // A slot that runs here means the fixture's sources are no longer byte-identical to the ones
    // that produced the Record, or the v1 identity is no longer read.
    assert.deepEqual(by, expected);
    const human = await p.run(["exp", ...RECORD, "--dry"]);
    assert.deepEqual([human.code, human.stderr], [0, ""]);
    assert.ok(human.stdout.includes("7 of 7 reused from earlier runs · 0 to run"), human.stdout);
  });
  await t.step("S134 --rerun failed: the failed ordinals run, the others carry", async () => {
    const { by } = await decisions(p, ["--rerun", "failed"]);
    const ran = Object.entries(by).filter(([, d]) => d === "run:rerun-tier").map(([slot]) => slot);
    assert.deepEqual(ran, ["scripted:farewell#0", "scripted:farewell#1"]);
    assert.equal(Object.keys(by).length, 7);
  });
  await t.step("S134 --rerun all: nothing carries", async () => {
    const { by } = await decisions(p, ["--rerun", "all"]);
    assert.deepEqual(Object.values(by), Array(7).fill("run:rerun-tier"));
  });
  assert.deepEqual(await recordFiles(p), before, "--dry writes nothing");
});

Deno.test("niceeval exp: a rerun over a v1 Record carries every slot, executes no Attempt, and show reads the mixed Record exits 1", async (t) => {
  await using p = await project();
  const before = await recordFiles(p);
  const r = await p.run(["exp", ...RECORD, "--json"]);
  // The carried failures of `farewell` still fail the Invocation (ERR-2).
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const events = ndjson(r.stdout);
  const start = events[0]!;
  const receipt = events.at(-1)!;
  const newRuns = receipt.runIds as string[];
  const runOf = new Map((start.runs as Json[]).map((x) => [x.experimentId, x.runId as string]));
  await t.step("the stream: 7 reused, no attempt_start, every eval ordinal carried", () => {
    assert.deepEqual([start.type, start.reused, start.toRun], ["start", 7, 0]);
    assert.deepEqual(events.filter((e) => String(e.type).startsWith("attempt_")), []);
    assert.equal(receipt.type, "receipt");
    assert.equal(newRuns.length, 2);
    const fixtureRuns: readonly string[] = Object.values(RUN);
    for (const runId of newRuns) assert.ok(!fixtureRuns.includes(runId), runId);
    const evals = events.filter((e) => e.type === "eval").map((e) => {
      const attempts = (e.attempts as Json[]).map((a) =>
        `#${a.ordinal} ${a.locator} ${a.verdict} ${a.carried}`
      );
      return [`${e.experimentId}:${e.evalId}`, e.verdict, e.reused, e.score, attempts];
    });
    const carried = (prefix: string) =>
      CURRENT.filter(([slot]) => slot.startsWith(`${prefix}#`)).map(([slot, , locator]) =>
        `#${slot.split("#")[1]} ${locator} ${attemptAt(locator).verdict} true`
      );
    assert.deepEqual(
      evals.sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [
        ["scripted:farewell", "failed", 2, null, carried("scripted:farewell")],
        ["scripted:greet", "passed", 2, null, carried("scripted:greet")],
        ["scripted:weather", "scored", 2, 2, carried("scripted:weather")],
        ["single:greet", "passed", 1, null, carried("single:greet")],
      ],
    );
  });
  await t.step("the v1 files are untouched", async () => {
    const after = await recordFiles(p);
    for (const [path, text] of before) assert.equal(after.get(path), text, path);
  });
  await t.step(
    "show --run: the new Runs carry from the Runs that executed the Attempts",
    async () => {
      const doc = await showJson(p, [
        "--run",
        runOf.get("scripted")!,
        "--run",
        runOf.get("single")!,
      ]);
      assert.deepEqual(
        (doc.rows as Json[]).map(rowOf),
        CURRENT.map(([slot, , locator]) =>
          expectedRow(runOf.get(slot.split(":")[0]!)!, [slot, "carried", locator])
        ),
      );
    },
  );
  await t.step("show --run: a v1 Run and a new one side by side", async () => {
    const doc = await showJson(p, ["--run", RUN.rerun, "--run", runOf.get("scripted")!]);
    assert.deepEqual(
      (doc.rows as Json[]).map((row) => `${row.runId}:${row.state}`),
      [
        ...MEMBERS[RUN.rerun]!.map(([, state]) => `${RUN.rerun}:${state}`),
        ...Array(6).fill(`${runOf.get("scripted")}:carried`),
      ],
    );
  });
  await t.step("show: the project scope now reads the new Runs, same Attempts", async () => {
    const doc = await showJson(p, []);
    assert.deepEqual(
      (doc.rows as Json[]).map(rowOf),
      CURRENT.map(([slot, , locator]) =>
        expectedRow(runOf.get(slot.split(":")[0]!)!, [slot, "carried", locator])
      ),
    );
    const human = await p.run(["show", ...RECORD]);
    assert.deepEqual([human.code, human.stderr], [0, ""]);
    assertProjectLines(human.stdout);
  });
  await t.step("show @locator: a v1 Attempt still names the Run that executed it", async () => {
    const r = await p.run(["show", ...RECORD, "@1H80DEBMS5CM7"]);
    assert.deepEqual([r.code, r.stderr], [0, ""]);
    assert.ok(r.stdout.includes(RUN.firstSingle), r.stdout);
  });
  await t.step("exp --dry: the mixed Record still carries all 7", async () => {
    const { doc } = await decisions(p, []);
    assert.deepEqual([doc.reused, doc.toRun], [7, 0]);
  });
});

Deno.test("niceeval show: a v1 Record whose record.json says schemaVersion 3 is refused with record-version-unsupported exits 2", async () => {
  await using p = await project();
  const path = "record/record.json";
  const doc = JSON.parse(await p.read(path));
  assert.equal(doc.schemaVersion, 1, "the fixture is a v1 Record");
  await p.write(path, JSON.stringify({ ...doc, schemaVersion: 3 }, null, 2) + "\n");
  for (const args of [["show"], ["show", "--run", RUN.first], ["exp", "--dry"]]) {
    const r = await p.run([...args, ...RECORD]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stdout, "", args.join(" "));
    assert.match(r.stderr, /\[record-version-unsupported\]/, args.join(" "));
  }
});
