/** Helpers for the toolchain tests: the repository root, temporary trees and subprocesses. */
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Absolute path of the repository root, without a trailing slash. */
export const REPO_ROOT: string = fileURLToPath(new URL("../..", import.meta.url)).replace(
  /\/$/,
  "",
);

/** Writes `files` (relative path → content) under `root`, creating folders. */
export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), content);
  }
}

/** Writes an executable shell script. */
export async function writeScript(path: string, body: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
}

/** Runs `fn` with a fresh temporary directory that is removed afterwards. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), "niceeval-toolchain-"));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** What a finished subprocess returned. */
export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link run}. */
export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Start from an empty environment (only `env` is passed). */
  clearEnv?: boolean;
}

/** Runs a program to completion and collects its output. */
export async function run(
  program: string,
  args: string[],
  options: RunOptions = {},
): Promise<RunResult> {
  const output = await new Deno.Command(program, {
    args,
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env ?? {},
    clearEnv: options.clearEnv ?? false,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Runs the current Deno executable (the pinned one while the suite runs). */
export function runDeno(args: string[], options: RunOptions = {}): Promise<RunResult> {
  return run(Deno.execPath(), args, options);
}

/** Formats a result for an assertion message. */
export function describeRun(result: RunResult): string {
  return `exit ${result.code}\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
}
