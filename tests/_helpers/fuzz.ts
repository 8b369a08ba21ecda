/**
 * Seeded generators of malformed command lines and `.env` files for the bad-input fuzz test. The
 * seed is fixed in CI; `NICEEVAL_FUZZ_SEED` explores others. A case is identified by its seed and
 * index, and the same seed always yields the same cases.
 */
import type { Random } from "../../src/_shared/random.ts";
import { createSeededRandom } from "../_fakes/random.ts";

/** The seed used unless `NICEEVAL_FUZZ_SEED` says otherwise. */
export const DEFAULT_FUZZ_SEED = 20261202;

/** Whether a case's input is acceptable: `false` must never exit 0. */
export type Validity = boolean | "maybe";

/** One generated command line. */
export interface ArgvCase {
  readonly index: number;
  /** The generator family, for the failure message. */
  readonly family: string;
  readonly args: readonly string[];
  readonly valid: Validity;
}

/** One generated `.env` file. */
export interface EnvCase {
  readonly index: number;
  readonly family: string;
  /** The file's bytes (some are not valid UTF-8). */
  readonly bytes: Uint8Array;
  readonly valid: Validity;
}

/** Paths the path-flag families point at; each lives in the test's sentinel directory. */
export interface FuzzPaths {
  /** A named pipe. */
  readonly fifo: string;
  /** A regular file. */
  readonly file: string;
  /** A directory. */
  readonly dir: string;
  /** A path below a regular file (`<file>/x`). */
  readonly underFile: string;
  /** A symbolic link to nothing. */
  readonly dangling: string;
  /** A path whose parents do not exist yet (creatable). */
  readonly missingParents: string;
}

/** The seed of this run: `NICEEVAL_FUZZ_SEED` when it is an integer, else the CI seed. */
export function fuzzSeed(raw: string | undefined): number {
  return raw !== undefined && /^[0-9]{1,9}$/.test(raw) ? Number(raw) : DEFAULT_FUZZ_SEED;
}

/** Commands of the fuzz: every command of this release with its argv prefix. */
const COMMANDS: readonly (readonly string[])[] = [
  ["exp"],
  ["exp", "list"],
  ["list"],
  ["show"],
  ["clean"],
  ["init"],
  ["sandbox", "list"],
  ["sandbox", "prune"],
];

/** Commands that accept `--record`. */
const RECORD_COMMANDS: readonly (readonly string[])[] = [["exp"], ["exp", "--dry"], ["show"], [
  "clean",
]];

const BAD_INTEGERS = [
  "0",
  "-1",
  " 1",
  "1 ",
  "\t2",
  "+1",
  "1e3",
  "1E2",
  "0x10",
  "0b1",
  "1.5",
  "1.",
  "",
  " ",
  "NaN",
  "Infinity",
  "１",
  "٣",
  "1_000",
  "1,000",
  "2\n",
  "1001",
  "100000000",
  "2147483648",
  "9007199254740993",
  "99999999999999999999",
];
const BAD_DECIMALS = [
  "-1",
  "-0.5",
  " 1",
  "1 ",
  "+1",
  "1e3",
  "1.",
  ".",
  "",
  "NaN",
  "Infinity",
  "0x1",
  "1,5",
  "1000001",
  "1e400",
];
/** Strings that are not flags, for values and positionals. */
const ODD_STRINGS = [
  "",
  " ",
  "\t",
  "\n",
  "a\nb",
  "\r\n",
  "\u001b[2J",
  "\u0000",
  "é",
  "日本語",
  "🙂",
  "\u202e",
  "\u2028",
  "\ud800",
  "=",
  "==",
  "-",
  "'",
  '"',
  "\\",
  "../../etc",
  "@",
  "@x",
];

/** Builds at least `count` malformed command lines from `seed`. */
export function argvCases(seed: number, paths: FuzzPaths, count = 320): ArgvCase[] {
  const random = createSeededRandom(seed);
  const out: ArgvCase[] = [];
  const add = (family: string, args: readonly string[], valid: Validity) =>
    out.push({ index: out.length, family, args, valid });
  // Every family at least once, in a fixed order; then random picks until `count`.
  const families = FAMILIES.map((f) => f);
  for (const family of families) family(random, paths, add);
  while (out.length < count) pick(random, families)(random, paths, add);
  return out;
}

type Add = (family: string, args: readonly string[], valid: Validity) => void;
type Family = (random: Random, paths: FuzzPaths, add: Add) => void;

const FAMILIES: readonly Family[] = [
  unknownFlags,
  missingValues,
  badIntegers,
  hugeIntegers,
  badBudgets,
  switchesWithValues,
  repeatedFlags,
  dashDashGames,
  oddPositionals,
  junitPaths,
  recordPaths,
  longStrings,
  rejectedFlags,
  forbiddenPairs,
  teardownGames,
  rootGames,
];

function unknownFlags(random: Random, _paths: FuzzPaths, add: Add): void {
  const cmd = pick(random, COMMANDS);
  const name = pick(random, ["frobnicate", "atempts", "jsonn", "recrod", "Tag", "x", "é", "🙂"]);
  const flag = pick(random, [`--${name}`, `-${name}`, `--${name}=${pick(random, ODD_STRINGS)}`]);
  add("unknown-flag", [...cmd, ...shuffleIn(random, [flag], validTail(random, cmd))], false);
}

function missingValues(random: Random, _paths: FuzzPaths, add: Add): void {
  const [cmd, flag] = pick(
    random,
    [
      [["exp"], "--attempts"],
      [["exp"], "--max-concurrency"],
      [["exp"], "--timeout"],
      [["exp"], "--budget"],
      [["exp"], "--junit"],
      [["exp"], "--record"],
      [["exp"], "--tag"],
      [["exp", "list"], "--tag"],
      [["list"], "--tag"],
      [["show"], "--record"],
      [["show"], "--run"],
      [["show"], "--experiment"],
      [["clean"], "--record"],
      [["sandbox", "list"], "--provider"],
      [["sandbox", "prune"], "--provider"],
    ] as const,
  );
  // Missing at the end, or followed by another flag (CLI-1: a value never starts with --).
  const args = random.next() < 0.5 ? [...cmd, flag] : [...cmd, flag, "--json"];
  add("missing-value", args, false);
}

function badIntegers(random: Random, _paths: FuzzPaths, add: Add): void {
  const flag = pick(random, ["attempts", "max-concurrency", "timeout"]);
  const value = pick(random, BAD_INTEGERS);
  const form = random.next() < 0.5 ? [`--${flag}=${value}`] : [`--${flag}`, value];
  // Some are in range for one flag only ("1001" ms is a fine --timeout).
  const valid = /^[0-9]+$/.test(value) && Number(value) >= 1 && Number(value) <= INT_MAX[flag]!;
  add("bad-integer", ["exp", ...form, ...(random.next() < 0.8 ? ["--dry"] : [])], valid);
}

/** The documented maximum of each integer flag (docs/limits.md). */
const INT_MAX: Readonly<Record<string, number>> = {
  attempts: 1000,
  "max-concurrency": 1000,
  timeout: 2 ** 31 - 1,
};

function hugeIntegers(random: Random, _paths: FuzzPaths, add: Add): void {
  const flag = pick(random, ["attempts", "max-concurrency", "timeout", "budget"]);
  const digits = 10 + Math.floor(random.next() * 400);
  const value = "9" + Array.from({ length: digits }, () => Math.floor(random.next() * 10)).join("");
  add("huge-number", ["exp", "--dry", `--${flag}=${value}`], false);
}

function badBudgets(random: Random, _paths: FuzzPaths, add: Add): void {
  add("bad-budget", ["exp", "--dry", "--budget", pick(random, BAD_DECIMALS)], false);
}

function switchesWithValues(random: Random, _paths: FuzzPaths, add: Add): void {
  const [cmd, flag] = pick(
    random,
    [
      [["exp"], "--json"],
      [["exp"], "--dry"],
      [["exp"], "--early-exit"],
      [["exp"], "--teardown"],
      [["exp", "list"], "--json"],
      [["list"], "--json"],
      [["show"], "--json"],
      [["init"], "--example"],
      [["sandbox", "list"], "--orphans"],
      [["sandbox", "prune"], "--force"],
    ] as const,
  );
  add("switch-with-value", [...cmd, `${flag}=${pick(random, ["1", "", "yes", "\n"])}`], false);
}

function repeatedFlags(random: Random, _paths: FuzzPaths, add: Add): void {
  const args = pick(random, [
    ["exp", "--attempts", "1", "--attempts", "2"],
    ["exp", "--json", "--json"],
    ["exp", "--dry", "--dry"],
    ["exp", "--record", "a", "--record", "b"],
    ["exp", "--rerun", "--rerun=all"],
    ["exp", "list", "--json", "--json"],
    ["list", "--json", "--json"],
    ["show", "--json", "--json"],
    ["show", "--record", "a", "--record=b"],
    ["clean", "--record", "a", "--record", "a"],
    ["init", "--example", "--example"],
    ["sandbox", "list", "--json", "--json"],
    ["sandbox", "prune", "--provider", "local", "--provider", "local"],
  ]);
  add("repeated-flag", args, false);
}

function dashDashGames(random: Random, _paths: FuzzPaths, add: Add): void {
  const [args, valid] = pick(
    random,
    [
      [["exp", "--", "--attempts", "0"], "maybe"],
      [["exp", "--attempts", "--", "1"], false],
      [["exp", "--", "list", "--attempts", "0"], "maybe"],
      [["init", "--", "x"], false],
      [["init", "--", "--example"], false],
      [["clean", "--", "x"], false],
      [["clean", "--", "--record"], false],
      [["sandbox", "list", "--", "x"], false],
      [["sandbox", "prune", "--", "--force"], false],
      [["sandbox", "--", "list"], false],
      [["exp", "list", "--", "a", "b"], false],
      [["show", "--", "a", "b"], false],
      [["show", "--", "@"], false],
      [["list", "---json"], false],
      [["exp", "---attempts", "1"], false],
      [["exp", "--=1"], false],
      [["exp", "--", "--"], "maybe"],
    ] as const,
  );
  add("dash-dash", args, valid);
}

function oddPositionals(random: Random, _paths: FuzzPaths, add: Add): void {
  const odd = pick(random, ODD_STRINGS);
  const [args, valid] = pick(
    random,
    [
      [["init", odd], false],
      [["clean", odd], false],
      [["sandbox", "list", odd], false],
      [["sandbox", "prune", odd], false],
      [["sandbox", odd], false],
      [["exp", "list", "x", odd], false],
      [["show", "@" + odd], false],
      [["show", odd, odd], false],
      [["exp", odd], "maybe"],
      [["exp", "--tag", odd], "maybe"],
      [["list", "--tag", odd], "maybe"],
      [["exp", "--owner-token", odd], false],
      [["show", "--run", odd], false],
    ] as const,
  );
  add("odd-positional", args, valid);
}

function junitPaths(random: Random, paths: FuzzPaths, add: Add): void {
  const [path, valid] = pick(
    random,
    [
      [paths.fifo, false],
      [paths.dir, false],
      [paths.underFile, false],
      [paths.dangling, false],
      [paths.dir + "/", false],
      [longPath(random, 5000), false],
      ["x".repeat(300) + ".xml", false],
      [paths.missingParents, false],
    ] as const,
  );
  add(
    "junit-path",
    ["exp", ...(random.next() < 0.5 ? ["--junit", path] : [`--junit=${path}`])],
    valid,
  );
}

function recordPaths(random: Random, paths: FuzzPaths, add: Add): void {
  const cmd = pick(random, RECORD_COMMANDS);
  const [path, valid] = pick(
    random,
    [
      [paths.fifo, false],
      [paths.file, false],
      [paths.underFile, false],
      [paths.dangling, false],
      [longPath(random, 5000), false],
      ["r".repeat(300), false],
    ] as const,
  );
  add("record-path", [...cmd, "--record", path], valid);
}

function longStrings(random: Random, _paths: FuzzPaths, add: Add): void {
  const long = "y".repeat(1000 + Math.floor(random.next() * 9000));
  const args = pick(random, [
    ["exp", `--${long}`],
    ["exp", "--attempts", long],
    ["exp", "--owner-token", long, "--teardown", "x"],
    ["init", long],
    ["clean", long],
    ["show", "@" + long],
    ["show", "--run", long],
    [long],
    ["sandbox", long],
    ["exp", "--rerun=" + long],
  ]);
  add("long-string", args, false);
}

function rejectedFlags(random: Random, _paths: FuzzPaths, add: Add): void {
  const flag = pick(random, ["--agent", "--model=gpt-5", "--force", "--keep-sandbox=1"]);
  add("rejected-flag", [...pick(random, [["exp"], ["exp", "list"]]), flag], false);
}

function forbiddenPairs(random: Random, _paths: FuzzPaths, add: Add): void {
  const args = pick(random, [
    ["exp", "--dry", "--junit", "j.xml"],
    ["exp", "--early-exit", "--no-early-exit"],
    ["exp", "--teardown", "--dry", "x"],
    ["exp", "list", "--attempts", "2"],
    ["exp", "--json", "list", "--dry"],
    ["show", "@x/y#0", "--run", "abcdefgh"],
    ["show", "--run", "abcdefgh", "--experiment", "x"],
  ]);
  add("forbidden-pair", args, false);
}

function teardownGames(random: Random, _paths: FuzzPaths, add: Add): void {
  const args = pick(random, [
    ["exp", "--teardown"],
    ["exp", "--teardown", "a", "b"],
    ["exp", "--recover-shared-state", "k"],
    ["exp", "x", "--teardown", "--owner-token", "not-a-uuid"],
    ["exp", "x", "--teardown", "--recover-shared-state", "BAD KEY"],
    ["exp", "x", "--teardown", "--recover-shared-state", "k", "--confirm-owner-terminated"],
    [
      "exp",
      "x",
      "--teardown",
      "--recover-shared-state",
      "k",
      "--owner-token",
      "00000000-0000-4000-8000-000000000000",
    ],
  ]);
  add("teardown", args, false);
}

function rootGames(random: Random, _paths: FuzzPaths, add: Add): void {
  const args = pick(random, [
    ["--verison"],
    ["-x"],
    ["--json"],
    ["--help=1"],
    ["nope"],
    ["exp list"],
    [""],
    [" "],
    ["view", "--port", "1"],
    ["accept", "--json"],
    ["sandbox"],
    ["sandbox", "nope"],
    ["sandbox", ""],
    ["EXP"],
  ]);
  add("root", args, false);
}

/** Builds at least `count` malformed `.env` files from `seed`. */
export function envCases(seed: number, count = 60): EnvCase[] {
  const random = createSeededRandom(seed ^ 0x5eed);
  const out: EnvCase[] = [];
  const encoder = new TextEncoder();
  const good = () => `GOOD_${Math.floor(random.next() * 1000)}=ok`;
  while (out.length < count) {
    const [family, line] = pick(random, ENV_LINES)(random);
    const lines = [good(), line, good()];
    if (random.next() < 0.3) lines.unshift("# comment", "");
    const eol = random.next() < 0.2 ? "\r\n" : "\n";
    const text = lines.join(eol);
    const bytes = family === "invalid-utf8"
      ? new Uint8Array([...encoder.encode(`${good()}\nBAD=`), 0xff, 0xfe, 0x80, 0x0a])
      : encoder.encode(text);
    out.push({
      index: out.length,
      family,
      bytes,
      valid: family === "invalid-utf8" ? "maybe" : false,
    });
  }
  return out;
}

/** A secret every generated value carries: no message may ever print it (authoring.md §1.1). */
export const ENV_SECRET = "S3CR3T-VALUE";

const ENV_LINES: readonly ((random: Random) => [string, string])[] = [
  () => ["no-equals", `KEY_ONLY ${ENV_SECRET}`],
  (
    r,
  ) => [
    "bad-key",
    `${pick(r, ["1KEY", "KE-Y", "KE Y", "ÄKEY", "KEY.X", "$KEY", "-K"])}=${ENV_SECRET}`,
  ],
  () => ["empty-key", `=${ENV_SECRET}`],
  (r) => ["open-quote", `KEY=${pick(r, ['"', "'"])}${ENV_SECRET}`],
  (r) => ["mixed-quotes", `KEY=${pick(r, [`"${ENV_SECRET}'`, `'${ENV_SECRET}"`])}`],
  (r) => ["bad-escape", `KEY="${ENV_SECRET}\\${pick(r, ["x", "u0041", "0", "'"])}"`],
  () => ["inner-quote", `KEY="${ENV_SECRET}"tail"`],
  () => ["inner-single", `KEY='${ENV_SECRET}'x'`],
  () => ["trailing-text", `KEY="${ENV_SECRET}" trailing`],
  () => ["space-in-value", `KEY=${ENV_SECRET} "quoted"`],
  () => ["export-alone", "export"],
  () => ["export-no-value", `export KEY ${ENV_SECRET}`],
  (r) => ["control-key", `KEY${pick(r, ["\u0000", "\u001b", "\u0007"])}=${ENV_SECRET}`],
  () => ["long-line", `KEY=${ENV_SECRET}"${"v".repeat(100_000)}`],
  () => ["long-key", `${"K".repeat(10_000)} ${ENV_SECRET}`],
  () => ["unicode-key", `🙂=${ENV_SECRET}`],
  () => ["lone-quote-value", `KEY="`],
  () => ["bom-bad", `\ufeffnot a line ${ENV_SECRET}`],
  () => ["invalid-utf8", ""],
];

function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random.next() * items.length)]!;
}

/** Valid trailing flags for `cmd`, so the bad element is not always first. */
function validTail(random: Random, cmd: readonly string[]): string[] {
  if (random.next() < 0.5) return [];
  const key = cmd.join(" ");
  if (key === "exp" || key === "exp list" || key === "list" || key === "show") return ["--json"];
  return [];
}

function shuffleIn(random: Random, items: readonly string[], into: readonly string[]): string[] {
  const out = [...into];
  for (const item of items) out.splice(Math.floor(random.next() * (out.length + 1)), 0, item);
  return out;
}

/** A relative path of about `length` characters made of short segments. */
function longPath(random: Random, length: number): string {
  const segment = pick(random, ["a", "ab", "seg"]);
  return Array.from({ length: Math.ceil(length / (segment.length + 1)) }, () => segment).join("/");
}

/** Creates a named pipe at `path` with mkfifo(1): a stand-in for special files, never a device. */
export async function makeFifo(path: string): Promise<void> {
  const out = await new Deno.Command("mkfifo", { args: [path], stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) throw new Error(`mkfifo ${path}: ${new TextDecoder().decode(out.stderr)}`);
}

/** Everything under `dir` that a write, replace or removal would change, keyed by relative path. */
export async function snapshotTree(
  dir: string,
  options: { skip?: (relative: string) => boolean } = {},
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const walk = async (relative: string) => {
    const path = relative === "" ? dir : `${dir}/${relative}`;
    for await (const entry of Deno.readDir(path)) {
      const child = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (options.skip?.(child)) continue;
      const info = await Deno.lstat(`${dir}/${child}`);
      const kind = info.isFile
        ? "file"
        : info.isDirectory
        ? "dir"
        : info.isSymlink
        ? "symlink"
        : info.isFifo
        ? "fifo"
        : "other";
      // Directory times change with any entry; their entries are compared instead.
      const stamp = kind === "dir" ? "" : `${info.size} ${info.mtime?.getTime()} ${info.mode}`;
      out.set(child, `${kind} ${stamp}`);
      if (kind === "dir") await walk(child);
    }
  };
  await walk("");
  return out;
}

/** The differences between two snapshots, one line each (`+ added`, `- removed`, `~ changed`). */
export function treeChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [path, stamp] of after) {
    if (!before.has(path)) out.push(`+ ${path}`);
    else if (before.get(path) !== stamp) out.push(`~ ${path}`);
  }
  for (const path of before.keys()) if (!after.has(path)) out.push(`- ${path}`);
  return out;
}
