/**
 * Bad-input fuzzing of the Record (layout v2: `run.json` headers and `records.log` logs): seeded
 * corruptions of a real published Record (JSON mutations of a header or of one log record, kept as
 * a whole frame; log damage: records reordered, dropped, repeated, torn or from another Run; files
 * replaced by FIFOs, directories or symbolic links), each run through `show`, `show --json`,
 * `show @<locator>`, `show --run`, `exp --dry` (carry planning) and, for some, `exp`. Oracle: exit
 * 0, 1 or 2, never 3 or a hang; exit 2 prints ERR-5 lines; no sentinel outside the root is read or
 * changed; a reading command or a usage error changes nothing. NICEEVAL_FUZZ_SEED explores.
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { frame, scanLog } from "../../src/record/log.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import {
  createRecordBed,
  mkfifo,
  type RecordCase,
  SENTINEL,
  snapshot,
  usageErrorProblem,
} from "../_helpers/fuzz_record.ts";

const LOG_NAME = "records.log";
const SEED = Number(Deno.env.get("NICEEVAL_FUZZ_SEED") ?? "20261202");
const CASES = 150;
const ID_KEYS = [
  "runId",
  "attemptId",
  "originRunId",
  "slotId",
  "invocationId",
  "recordId",
  "experimentId",
  "evalId",
];

type Rng = ReturnType<typeof createSeededRandom>;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng.next() * items.length)]!;

function hostileIds(c: RecordCase): string[] {
  return [
    "../../x",
    "../../../../outside/fifo",
    "../../../../outside/file",
    c.outsideFifo,
    c.outsideFile,
    "a\u0000b",
    "line\nbreak",
    "x".repeat(300),
    "",
    ".",
    "..",
    "4F145FCA-C831-4A8F-AE2D-0F968EFC956C",
    "4f145fca-c831-4a8f-ae2d-0f968efc956c/../..",
    "con",
    "%2e%2e",
  ];
}

async function filesOf(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (path: string) => {
    for await (const e of Deno.readDir(path)) {
      const child = join(path, e.name);
      out.push(child);
      if (e.isDirectory) await walk(child);
    }
  };
  await walk(dir);
  return out.sort();
}

/** Every JSON path of a document (objects and arrays), for key and value mutations. */
function jsonPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  const out = [path];
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      out.push(...jsonPaths(v, [...path, Array.isArray(value) ? Number(k) : k]));
    }
  }
  return out;
}

/** A JSON container indexed by object key or array index. */
type Node = Record<string | number, unknown> & unknown[];

function setAt(
  doc: unknown,
  path: (string | number)[],
  change: (parent: Node, key: never) => void,
) {
  let parent = doc as Node;
  for (const key of path.slice(0, -1)) parent = parent[key as never] as Node;
  change(parent, path.at(-1) as never);
}

const WRONG = [null, 0, -1, 1e308, "", "x", true, [], {}, [null], { a: 1 }, "2026-13-45"];

/**
 * One document of a file: a `.json` file is one; `records.log` holds one per record, of which a
 * seeded one is picked and written back as a whole frame (valid checksum), so that the mutation
 * reaches the reader's checks of record contents, not only the frame check.
 */
interface DocView {
  readonly text: string;
  readonly label: string;
  write(doc: unknown): Promise<void>;
}

async function docView(rng: Rng, target: string, rel: string): Promise<DocView> {
  if (!target.endsWith(LOG_NAME)) {
    const text = await Deno.readTextFile(target);
    return {
      text,
      label: rel,
      write: (doc) => Deno.writeTextFile(target, JSON.stringify(doc)),
    };
  }
  const bytes = await Deno.readFile(target);
  const parts = framesOf(bytes);
  const entries = scanLog(bytes).entries;
  if (entries.length === 0) return { text: "", label: rel, write: () => Promise.resolve() };
  const index = Math.floor(rng.next() * entries.length);
  return {
    text: JSON.stringify(entries[index]!.value),
    label: `${rel} record ${index}`,
    write: async (doc) => {
      parts[index] = frame(JSON.stringify(doc));
      await Deno.writeFile(target, concatBytes(parts));
    },
  };
}

function framesOf(bytes: Uint8Array): Uint8Array[] {
  return scanLog(bytes).entries.map((e) => bytes.slice(e.offset, e.offset + e.length));
}

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Damage only a log can take: its frames reordered, dropped, repeated, torn, or foreign. */
async function corruptLog(rng: Rng, c: RecordCase, target: string, rel: string): Promise<string> {
  const bytes = await Deno.readFile(target);
  const parts = framesOf(bytes);
  const at = Math.floor(rng.next() * parts.length);
  switch (Math.floor(rng.next() * 6)) {
    case 0: {
      const other = Math.floor(rng.next() * parts.length);
      [parts[at], parts[other]] = [parts[other]!, parts[at]!];
      await Deno.writeFile(target, concatBytes(parts));
      return `swap records ${at} and ${other} of ${rel}`;
    }
    case 1:
      parts.splice(at, 1);
      await Deno.writeFile(target, concatBytes(parts));
      return `drop record ${at} of ${rel}`;
    case 2:
      parts.splice(at, 0, parts[at]!);
      await Deno.writeFile(target, concatBytes(parts));
      return `repeat record ${at} of ${rel}`;
    case 3: {
      const torn = parts[at]!.slice(0, Math.floor(rng.next() * parts[at]!.length));
      await Deno.writeFile(target, concatBytes([...parts, torn]));
      return `torn tail (${torn.length} bytes) on ${rel}`;
    }
    case 4: {
      const line = parts[at]!.slice();
      const space = line.indexOf(0x20);
      line[space + 1 + Math.floor(rng.next() * 8)] = 0x66; // "f": a checksum digit changed
      parts[at] = line;
      await Deno.writeFile(target, concatBytes(parts));
      return `checksum of record ${at} of ${rel}`;
    }
    default: {
      // A record of another Run of the case, before this log's end record.
      const logs: string[] = [];
      for await (const e of Deno.readDir(join(c.root, "runs"))) {
        const log = join(c.root, "runs", e.name, LOG_NAME);
        if (log !== target) logs.push(log);
      }
      if (logs.length === 0) return "noop (no other log)";
      const from = pick(rng, logs.sort());
      const foreign = framesOf(await Deno.readFile(from).catch(() => new Uint8Array()));
      if (foreign.length === 0) return "noop (other log unreadable)";
      const record = foreign[Math.floor(rng.next() * foreign.length)]!;
      parts.splice(Math.max(0, parts.length - 1), 0, record);
      await Deno.writeFile(target, concatBytes(parts));
      return `record of ${relative(c.root, from)} in ${rel}`;
    }
  }
}

/** Applies one seeded corruption; returns its description. */
async function corrupt(rng: Rng, c: RecordCase): Promise<string> {
  const all = await filesOf(c.root);
  const files = all.filter((p) =>
    p.endsWith(".json") || p.endsWith("complete") || p.endsWith(LOG_NAME)
  );
  const dirs = all.filter((p) => !files.includes(p));
  const target = pick(rng, files);
  const rel = relative(c.root, target);
  const isLog = target.endsWith(LOG_NAME);
  const op = Math.floor(rng.next() * (isLog ? 18 : 14));
  if (op >= 14) return await corruptLog(rng, c, target, rel);
  const raw = await Deno.readFile(target);
  const view = op >= 2 && op <= 7 ? await docView(rng, target, rel) : undefined;
  const text = view?.text ?? "";
  const rewrite = async (change: (doc: unknown) => void) => {
    const doc = JSON.parse(text);
    change(doc);
    await view!.write(doc);
  };
  switch (op) {
    case 0: {
      const at = Math.floor(rng.next() * raw.length);
      await Deno.writeFile(target, raw.slice(0, at));
      return `truncate ${rel} at ${at}`;
    }
    case 1: {
      const bytes = raw.slice();
      for (let i = 0; i < 3 && bytes.length > 0; i++) {
        bytes[Math.floor(rng.next() * bytes.length)] = Math.floor(rng.next() * 256);
      }
      await Deno.writeFile(target, bytes);
      return `garble ${rel}`;
    }
    case 2:
    case 3: {
      if (text === "") return "noop (empty file)";
      const paths = jsonPaths(JSON.parse(text)).filter((p) => p.length > 0);
      const path = pick(rng, paths);
      const value = pick(rng, WRONG);
      await rewrite((doc) => setAt(doc, path, (p, k) => p[k] = value));
      return `wrong type ${view!.label} ${path.join(".")} = ${JSON.stringify(value)}`;
    }
    case 4: {
      if (text === "") return "noop (empty file)";
      const paths = jsonPaths(JSON.parse(text)).filter((p) => p.length > 0);
      const path = pick(rng, paths);
      await rewrite((doc) =>
        setAt(doc, path, (p, k) => Array.isArray(p) ? p.splice(k, 1) : delete p[k])
      );
      return `missing ${view!.label} ${path.join(".")}`;
    }
    case 5:
    case 6:
    case 7: {
      if (text === "") return "noop (empty file)";
      const paths = jsonPaths(JSON.parse(text)).filter((p) => ID_KEYS.includes(String(p.at(-1))));
      if (paths.length === 0) return `noop (no id in ${view!.label})`;
      const path = pick(rng, paths);
      const value = pick(rng, hostileIds(c));
      await rewrite((doc) => setAt(doc, path, (p, k) => p[k] = value));
      return `hostile id ${view!.label} ${path.join(".")} = ${JSON.stringify(value)}`;
    }
    case 8:
      await Deno.remove(target);
      await mkfifo(target);
      return `fifo ${rel}`;
    case 9:
      await Deno.remove(target);
      await Deno.mkdir(target);
      return `directory ${rel}`;
    case 10: {
      await Deno.remove(target);
      const to = rng.next() < 0.5 ? target : join(c.outsideFile, target.split("/").at(-1)!);
      await Deno.symlink(to, target);
      return `symlink ${rel} -> ${to === target ? "itself" : "outside"}`;
    }
    case 11: {
      const dir = pick(rng, dirs);
      await Deno.remove(dir, { recursive: true });
      await Deno.symlink(rng.next() < 0.5 ? c.outsideFile : dir, dir);
      return `symlinked directory ${relative(c.root, dir)}`;
    }
    case 12: {
      const runs = join(c.root, "runs");
      const name = pick(rng, [
        "not-a-run",
        "4F145FCA-C831-4A8F-AE2D-0F968EFC956C",
        "..x",
        " ",
        "line\nbreak",
      ]);
      const source = pick(
        rng,
        dirs.filter((d) => d !== runs && relative(runs, d).split("/").length === 1),
      );
      await Deno.rename(source, join(runs, name));
      return `rename run dir to ${JSON.stringify(name)}`;
    }
    default:
      await Deno.remove(target);
      return `delete ${rel}`;
  }
}

/** Runs one command on the case and checks the oracle; returns the exit code. */
async function check(
  bed: Awaited<ReturnType<typeof createRecordBed>>,
  c: RecordCase,
  args: readonly string[],
  seed: number,
): Promise<number> {
  const r = await bed.run([...args, "--record", c.root], seed);
  const what = `${args.join(" ")} exited ${r.code}\n${r.stderr.slice(0, 2000)}`;
  assert.ok([0, 1, 2].includes(r.code), what);
  if (r.code === 2) assert.equal(usageErrorProblem(r.stderr), undefined, what);
  assert.ok(!(r.stdout + r.stderr).includes(SENTINEL), `${what}\na sentinel was read`);
  return r.code;
}

Deno.test("fuzz: corrupted Records never crash, hang or leave the root (show, --dry, exp)", async () => {
  await using bed = await createRecordBed();
  const rng = createSeededRandom(SEED);
  const counts = new Map<number, number>();
  for (let index = 0; index < CASES; index++) {
    const c = await bed.newCase();
    let description = "";
    try {
      description = await corrupt(rng, c);
      const commands: string[][] = [
        ["show", "--json"],
        ["show", pick(rng, bed.locators)],
        ["show", "--run", pick(rng, bed.runIds)],
        index % 2 === 0 ? ["exp", "--dry"] : ["exp", "--dry", "--json"],
      ];
      if (index % 4 === 0) commands.push(["show"]);
      // The reading commands never write; `exp` may, except on a usage error.
      const outside = await snapshot(join(c.dir, "outside"));
      const before = await snapshot(c.root);
      for (const args of commands) await check(bed, c, args, 1000 + index);
      assert.equal(await snapshot(c.root), before, "a reading command changed the Record");
      if (index % 10 === 0) {
        const code = await check(bed, c, ["exp"], 1000 + index);
        if (code === 2) assert.equal(await snapshot(c.root), before, "exp exit 2 wrote");
      }
      assert.equal(await snapshot(join(c.dir, "outside")), outside, "a file outside changed");
    } catch (error) {
      throw new Error(
        `fuzz case failed: NICEEVAL_FUZZ_SEED=${SEED} index ${index}: ${description}\n${error}`,
        { cause: error },
      );
    } finally {
      await Deno.remove(c.dir, { recursive: true });
    }
    counts.set(index, 1);
  }
  await Deno.stderr.write(
    new TextEncoder().encode(`fuzz_record: ${counts.size} corrupted Records, seed ${SEED}\n`),
  );
});
