/**
 * Checks of the path flags `--record` and `--junit` (FLAG-6, JUNIT-6) before anything is read or
 * written: a path that can never be used is a usage error (exit 2), not a crash or a late failure.
 * They only stat paths; nothing is opened or created here.
 */
import { dirname, resolve } from "node:path";
import { osErrorReason, UsageError } from "../_shared/mod.ts";
import { quoteValue } from "./flags.ts";

/** What a path names, following symbolic links. */
type PathKind = "missing" | "directory" | "file" | "dangling" | "other";

const KIND_TEXT: Readonly<Record<string, string>> = {
  file: "a file",
  dangling: "a symbolic link to nothing",
  other: "a special file",
};

/**
 * Fails unless the absolute `root` is a directory or can become one: it exists as a directory, or
 * it is missing and no part of it is a file. `flag` is the `--record` value as typed, or
 * undefined for the default root.
 *
 * @throws {UsageError} `usage` naming the path and what it is.
 */
export async function checkRecordRoot(root: string, flag?: string): Promise<void> {
  const shown = flag === undefined
    ? `record root ${quoteValue(root)}`
    : `--record ${quoteValue(flag)}`;
  const hint = "pass a directory path, for example --record .niceeval/record-2";
  const kind = await pathKind(
    root,
    (reason) => new UsageError("usage", `${shown} cannot be a Record root: ${reason}`, hint),
  );
  if (kind === "missing" || kind === "directory") return;
  throw new UsageError(
    "usage",
    `${shown} must be a directory, got ${KIND_TEXT[kind]}`,
    hint,
  );
}

/**
 * The file the JUnit report of `--junit <path>` replaces: the path itself, or the regular file a
 * symbolic link at the path points to. Fails unless that is missing or a regular file and its
 * parent is an existing directory (issue 10 overrides JUNIT-6's "parent directories are created":
 * a typo in a directory name is reported before the run, not after it).
 *
 * @param options.usage `true` (default): fail with a usage error naming the flag, before a run;
 *   `false`: fail with a plain `Error` whose message is only the reason, when the report is due.
 * @throws {UsageError} `usage` naming the path and what it is.
 */
export async function junitTarget(
  cwd: string,
  path: string,
  options: { usage?: boolean; flag?: string; example?: string } = {},
): Promise<string> {
  const full = resolve(cwd, path);
  const flag = options.flag ?? "junit";
  const hint = `pass the path of a regular file, for example --${flag} ${
    options.example ?? "junit.xml"
  }`;
  const fail = (reason: string) =>
    options.usage === false
      ? new Error(reason)
      : new UsageError("usage", `--${flag} ${quoteValue(path)} cannot be written: ${reason}`, hint);
  const kind = await pathKind(full, fail);
  if (kind === "directory") throw fail("it is a directory");
  if (kind === "other" || kind === "dangling") throw fail(`it is ${KIND_TEXT[kind]}`);
  const target = kind === "file" ? await Deno.realPath(full) : full;
  const parent = await pathKind(dirname(target), fail);
  if (parent === "missing") throw fail("its directory does not exist");
  if (parent !== "directory") throw fail("its parent is not a directory");
  return target;
}

/**
 * Fails unless `path` is missing or a regular file right now: the last check before the JUnit
 * report is renamed over it.
 */
export async function assertReplaceable(path: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  if (!info.isFile) throw new Error(`Cannot replace ${path}: it is not a regular file`);
}

async function pathKind(path: string, fail: (reason: string) => Error): Promise<PathKind> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      // A dangling symbolic link is missing for stat but must not be replaced either.
      return await isSymlink(path) ? "dangling" : "missing";
    }
    if (error instanceof Deno.errors.NotADirectory) throw fail("a parent is not a directory");
    throw fail(osErrorReason(error));
  }
  return info.isDirectory ? "directory" : info.isFile ? "file" : "other";
}

async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await Deno.lstat(path)).isSymlink;
  } catch {
    return false; // missing (or unreadable) itself: stat has already said what matters
  }
}
