/**
 * A small published Record (layout v2) to damage, and an in-process runner for hostile-Record tests: one
 * project (imported once per process), one pristine Record, and per case a copy of the Record
 * next to sentinel files that must never be read.
 */
import { cp } from "node:fs/promises";
import { closeSync, constants, openSync } from "node:fs";
import { join } from "node:path";
import { main } from "../../src/cli/main.ts";
import { locatorOf } from "../../src/record/mod.ts";
import { frame } from "../../src/record/log.ts";
import { createFakeIo } from "../_fakes/io.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { readRunFiles } from "./record_files.ts";

/** Text of every sentinel file: it must never appear in any output. */
export const SENTINEL = "SENTINEL-7f3c";

const FILES: Record<string, string> = {
  "niceeval.config.ts":
    'import { defineConfig } from "niceeval";\nexport default defineConfig({ maxConcurrency: 2 });\n',
  "experiments/base.ts": `import { defineExperiment } from "niceeval";
import { scriptedAgent } from "niceeval/adapter";
export default defineExperiment({
  agent: scriptedAgent({ name: "base", script: [], fallback: { text: "Hello!" } }),
  attempts: 2,
});
`,
  "evals/hello.eval.ts": evalSource("Hello"),
  "evals/bye.eval.ts": evalSource("Goodbye"),
};

function evalSource(expected: string): string {
  return `import { defineEval } from "niceeval";
import { includes } from "niceeval/expect";
export default defineEval({
  async test(t) {
    await t.send("Hi");
    t.check(t.reply, includes(${JSON.stringify(expected)}));
  },
});
`;
}

/** The project, its pristine Record and what the Record holds. */
export interface RecordBed extends AsyncDisposable {
  readonly dir: string;
  readonly project: string;
  readonly pristine: string;
  /** RunIds, oldest first: the first executed every slot, the second carried them all. */
  readonly runIds: readonly string[];
  readonly attemptIds: readonly string[];
  readonly locators: readonly string[];
  /** Copies the pristine Record into a fresh case directory with its sentinels. */
  newCase(): Promise<RecordCase>;
  /** Runs `niceeval <args>` in-process in the project; `seed` varies the fake random source. */
  run(args: readonly string[], seed?: number): Promise<CliRun>;
}

/** One case: `<case>/record` (the root) and `<case>/outside/{file,fifo}` (sentinels). */
export interface RecordCase {
  readonly dir: string;
  readonly root: string;
  readonly outsideFile: string;
  readonly outsideFifo: string;
}

/** What one in-process run produced. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

const DOCS = ["run.json", "record.json", "records.log"];
/** A hang detector only: no test waits for it to make anything happen. */
const HANG_MS = 20_000;

/** Writes the project, runs `exp` twice (execute, then carry) and returns the bed. */
export async function createRecordBed(): Promise<RecordBed> {
  const dir = await Deno.makeTempDir({ prefix: "niceeval-hostile-" });
  const project = join(dir, "project");
  for (const [path, text] of Object.entries(FILES)) {
    await Deno.mkdir(join(project, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(project, path), text);
  }
  const env = { NICEEVAL_STATE_DIR: join(dir, "state") };
  let cases = 0;
  const fifos: string[] = [];
  const run = async (args: readonly string[], seed = 1): Promise<CliRun> => {
    const io = { ...createFakeIo({ cwd: project, env }), random: createSeededRandom(seed) };
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        unblockFifos(fifos);
        reject(new Error(`niceeval ${args.join(" ")} did not finish: it hangs`));
      }, HANG_MS);
    });
    try {
      const code = await Promise.race([main(args, io), hang]);
      return { code, stdout: io.stdout.text(), stderr: io.stderr.text() };
    } finally {
      clearTimeout(timer);
    }
  };
  const pristine = join(dir, "pristine");
  for (const seed of [101, 202]) {
    const r = await run(["exp", "--record", pristine], seed);
    if (r.code !== 1) throw new Error(`setup exp exited ${r.code}: ${r.stderr}`);
  }
  const runIds: string[] = [];
  for await (const e of Deno.readDir(join(pristine, "runs"))) runIds.push(e.name);
  // Both Runs start at the same fake time: the executing one is the one with Attempts.
  const attemptsOf = new Map<string, string[]>();
  for (const id of runIds) {
    attemptsOf.set(id, [...(await readRunFiles(pristine, id)).attempts.keys()].sort());
  }
  runIds.sort((a, b) =>
    (attemptsOf.get(a)!.length > 0 ? 0 : 1) - (attemptsOf.get(b)!.length > 0 ? 0 : 1)
  );
  const attemptIds = attemptsOf.get(runIds[0]!)!;
  return {
    dir,
    project,
    pristine,
    runIds,
    attemptIds,
    locators: attemptIds.map(locatorOf),
    run,
    newCase: async () => {
      const caseDir = join(dir, `case-${cases++}`);
      const root = join(caseDir, "record");
      await cp(pristine, root, { recursive: true });
      const outsideFile = join(caseDir, "outside", "file");
      const outsideFifo = join(caseDir, "outside", "fifo");
      await Deno.mkdir(outsideFile, { recursive: true });
      await Deno.mkdir(outsideFifo, { recursive: true });
      const caseFifos = DOCS.map((name) => join(outsideFifo, name));
      for (const name of DOCS) {
        await Deno.writeTextFile(join(outsideFile, name), JSON.stringify({ format: SENTINEL }));
      }
      // A log of whole records, so that only refusing to read it keeps the sentinel out.
      await Deno.writeFile(
        join(outsideFile, "records.log"),
        frame(JSON.stringify({ record: "diagnostic", diagnostic: { message: SENTINEL } })),
      );
      await mkfifo(...caseFifos);
      fifos.push(...caseFifos);
      await Deno.writeTextFile(join(outsideFile, "complete"), "");
      return { dir: caseDir, root, outsideFile, outsideFifo };
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

/** Creates a FIFO at each path (one process for all of them). */
export async function mkfifo(...paths: string[]): Promise<void> {
  const out = await new Deno.Command("mkfifo", { args: paths }).output();
  if (!out.success) throw new Error(`mkfifo ${paths.join(" ")} failed`);
}

/** Opens each FIFO some reader blocks on for writing (without blocking) and closes it. */
function unblockFifos(paths: readonly string[]): void {
  for (const path of paths) {
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody has it open for reading, which is what every test wants.
    }
  }
}

/** Every path under `dir` with its type, size and content digest, for change detection. */
export async function snapshot(dir: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (path: string, rel: string): Promise<void> => {
    const info = await Deno.lstat(path);
    const kind = info.isSymlink
      ? `link:${await Deno.readLink(path)}`
      : info.isDirectory
      ? "dir"
      : info.isFile
      ? `file:${info.size}:${info.mtime?.getTime()}`
      : "special";
    lines.push(`${rel} ${kind}`);
    if (info.isDirectory) {
      const names: string[] = [];
      for await (const e of Deno.readDir(path)) names.push(e.name);
      for (const name of names.sort()) await walk(join(path, name), `${rel}/${name}`);
    }
  };
  await walk(dir, ".");
  return lines.join("\n");
}

/** Checks the ERR-5 shape of an exit-2 stderr: `error: … [code]` lines, then one `hint:`. */
export function usageErrorProblem(stderr: string): string | undefined {
  const lines = stderr.split("\n").filter((l) => l !== "" && !l.startsWith("! "));
  const hints = lines.filter((l) => l.startsWith("hint: "));
  const errors = lines.filter((l) => /^error: .+ \[[a-z][a-z0-9.-]*\]$/.test(l));
  if (hints.length !== 1 || lines.at(-1) !== hints[0]) return "not exactly one final hint line";
  if (errors.length < 1 || errors.length !== lines.length - 1) return "bad error lines";
  return undefined;
}
