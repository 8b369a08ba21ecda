/** Developer mutation check, not run in CI: `./scripts/deno run -A --frozen scripts/mutants.ts [--root <dir>]` applies each single-line mutant below to a temporary copy of the repository, runs the test files that must kill it, and exits 1 when one survives. */

import { cp } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** One single-line mutation and the test files that must catch it. */
export interface Mutant {
  /** What the mutation breaks, for the report. */
  readonly name: string;
  /** Repository-relative path of the mutated file. */
  readonly file: string;
  /** Text of one line (no newline) that occurs exactly once in `file`. */
  readonly find: string;
  /** Replacement of `find` (no newline); the mutated file must still type-check. */
  readonly replace: string;
  /** Repository-relative test files; at least one of them must fail on the mutant. */
  readonly tests: readonly string[];
}

/** Mutants that once survived (issue 11, item 7); add one line per mutant a review finds. */
export const MUTANTS: readonly Mutant[] = [
  {
    name: "early exit aborts every running Attempt of the experiment, not only the same eval's",
    file: "src/scheduler/_stop_control.ts",
    find: "other.slot.evalId === slot.evalId",
    replace: "true",
    tests: ["tests/scheduler/early_exit_test.ts"],
  },
  {
    name: "an interrupted Attempt keeps the verdict its body reported",
    file: "src/scheduler/_execution.ts",
    find:
      'return { ...result, verdict: "interrupted", outcome: "interrupted", score: null, error: null };',
    replace: "return result;",
    tests: ["tests/scheduler/interrupt_test.ts"],
  },
  {
    name: "an atomic write renames its temporary file without fsyncing it",
    file: "src/record/atomic.ts",
    find: "await sync(file, temp);",
    replace: "",
    tests: ["tests/record/atomic_test.ts"],
  },
];

/** What happened to one mutant. */
export type MutantStatus = "killed" | "survived" | "invalid";

/** Entries of the repository root left out of the temporary copy. */
const SKIPPED_ENTRIES = new Set([".git", ".tools"]);

/** Copies the repository at `root` (without `.git` and `.tools`) into a new temporary directory. */
async function copyRepository(root: string): Promise<string> {
  const copy = await Deno.makeTempDir({ prefix: "niceeval-mutants-" });
  for await (const entry of Deno.readDir(root)) {
    if (SKIPPED_ENTRIES.has(entry.name)) continue;
    await cp(join(root, entry.name), join(copy, entry.name), {
      recursive: true,
      verbatimSymlinks: true,
    });
  }
  return copy;
}

/** Runs `deno <args>` in `cwd`; returns whether it succeeded and its combined output. */
async function deno(cwd: string, args: readonly string[]): Promise<[boolean, string]> {
  const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [...args],
    cwd,
    env: { DENO_NO_UPDATE_CHECK: "1", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return [success, decoder.decode(stdout) + decoder.decode(stderr)];
}

/**
 * Applies `mutant` to the copy at `copy`, runs its tests, and restores the file in every case.
 * A mutant whose line is missing or repeated, or whose mutated file does not type-check, is
 * invalid: a type error would fail the tests without any test catching the behaviour.
 */
async function tryMutant(copy: string, mutant: Mutant): Promise<[MutantStatus, string]> {
  if (/[\r\n]/.test(mutant.find + mutant.replace)) return ["invalid", "not a single-line mutant"];
  const path = join(copy, mutant.file);
  const original = await Deno.readTextFile(path);
  const count = original.split(mutant.find).length - 1;
  if (count !== 1) return ["invalid", `"${mutant.find}" occurs ${count} times, not once`];
  await Deno.writeTextFile(path, original.replace(mutant.find, () => mutant.replace));
  try {
    const [checks, checkOutput] = await deno(copy, ["check", "--frozen", mutant.file]);
    if (!checks) return ["invalid", `the mutated file does not type-check:\n${checkOutput}`];
    const [passes] = await deno(copy, ["test", "-A", "--frozen", ...mutant.tests]);
    return passes ? ["survived", ""] : ["killed", ""];
  } finally {
    await Deno.writeTextFile(path, original);
  }
}

async function writeAll(stream: { write(p: Uint8Array): Promise<number> }, text: string) {
  let bytes = new TextEncoder().encode(text);
  while (bytes.length > 0) bytes = bytes.subarray(await stream.write(bytes));
}

async function main(args: string[]): Promise<number> {
  let root = fileURLToPath(new URL("..", import.meta.url));
  if (args[0] === "--root" && args[1] !== undefined && args.length === 2) root = args[1];
  else if (args.length > 0) {
    await writeAll(Deno.stderr, "usage: mutants.ts [--root <dir>]\n");
    return 2;
  }
  const copy = await copyRepository(root);
  try {
    const tests = [...new Set(MUTANTS.flatMap((m) => m.tests))];
    const [baseline, output] = await deno(copy, ["test", "-A", "--frozen", ...tests]);
    if (!baseline) {
      await writeAll(Deno.stderr, `mutants: the tests fail without any mutant:\n${output}`);
      return 2;
    }
    let failures = 0;
    for (const mutant of MUTANTS) {
      const [status, detail] = await tryMutant(copy, mutant);
      if (status !== "killed") failures++;
      const line = `${status.padEnd(8)} ${mutant.file}: ${mutant.name}\n`;
      await writeAll(Deno.stdout, detail === "" ? line : `${line}  ${detail}\n`);
    }
    const summary = `mutants: ${MUTANTS.length - failures} of ${MUTANTS.length} killed\n`;
    await writeAll(Deno.stdout, summary);
    return failures === 0 ? 0 : 1;
  } finally {
    await Deno.remove(copy, { recursive: true });
  }
}

if (import.meta.main) {
  Deno.exitCode = await main(Deno.args);
}
