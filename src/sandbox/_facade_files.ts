/**
 * File operations and transfers of the facade (sandboxes.md rules 25–26, 32–33). Every handle call
 * goes through the file-operation retry; host paths resolve against the declaring file's directory.
 */
import { dirname, join, posix } from "node:path";
import type { Clock, Random } from "../_shared/mod.ts";
import { SandboxFileNotFoundError } from "./errors.ts";
import { withFileRetry } from "./file_retry.ts";
import { createIgnoreMatcher, type IgnoreMatcher, isIgnoredFile } from "./ignore.ts";
import { isInside } from "./layer.ts";
import { hostPath, sandboxPath } from "./paths.ts";
import { commandError } from "./_summary.ts";
import type {
  CommandOptions,
  CommandResult,
  ExecCommand,
  SandboxHandle,
  SandboxOps,
  TransferOptions,
  UploadEntry,
} from "./types.ts";

/** What the file operations need from their facade. */
interface FileOpsContext {
  readonly handle: SandboxHandle;
  readonly clock: Clock;
  readonly random: Random;
  readonly signal: AbortSignal;
  readonly hostDir: string;
  /** Throws when the lease ended. */
  readonly guard: () => void;
  /** A facade command (with evidence). */
  readonly exec: (command: ExecCommand, c?: CommandOptions) => Promise<CommandResult>;
}

type FileOps = Pick<
  SandboxOps,
  | "readText"
  | "writeText"
  | "readBytes"
  | "writeBytes"
  | "pathExists"
  | "uploadFile"
  | "uploadDirectory"
  | "downloadFile"
  | "downloadDirectory"
>;

/** Builds the file half of the facade. */
export function createFileOps(ctx: FileOpsContext): FileOps {
  const { handle, signal } = ctx;
  const retry = async <T>(op: () => Promise<T>) => {
    ctx.guard();
    return await withFileRetry(op, { clock: ctx.clock, random: ctx.random, signal });
  };
  const path = (p: string) => sandboxPath(handle.workdir, p);
  const readBytes = async (p: string) => {
    ctx.guard();
    const target = path(p);
    return await retry(() => handle.readFile(target, signal));
  };
  const writeBytes = async (p: string, data: Uint8Array, mode?: number) => {
    ctx.guard();
    const target = path(p);
    const o = mode === undefined ? { signal } : { signal, mode };
    return await retry(() => handle.writeFile(target, data, o));
  };
  const ops: FileOps = {
    readBytes,
    readText: async (p) => new TextDecoder().decode(await readBytes(p)),
    writeBytes: (p, data) => writeBytes(p, data),
    writeText: (p, text) => writeBytes(p, new TextEncoder().encode(text)),
    pathExists: async (p) => {
      ctx.guard();
      const target = path(p);
      return await retry(() => handle.exists(target, signal));
    },
    uploadFile: async (host, sandbox) => {
      ctx.guard();
      const source = hostPath(ctx.hostDir, host);
      const info = await Deno.stat(source);
      await writeBytes(
        sandbox,
        await Deno.readFile(source),
        info.mode === null ? undefined : info.mode & 0o777,
      );
    },
    uploadDirectory: async (hostDir, sandboxDir = ".", o: TransferOptions = {}) => {
      ctx.guard();
      const root = await Deno.realPath(hostPath(ctx.hostDir, hostDir));
      const matcher = createIgnoreMatcher(o.ignore ?? []);
      const target = path(sandboxDir);
      const entries: UploadEntry[] = [];
      for await (const entry of walkHost(root, root, "", matcher)) entries.push(entry);
      if (handle.uploadEntries !== undefined) {
        return await retry(() => handle.uploadEntries!(target, entries, { signal }));
      }
      for (const entry of entries) {
        if (entry.kind !== "file") continue;
        const bytes = await Deno.readFile(entry.source);
        await writeBytes(posix.join(target, entry.path), bytes, entry.mode);
      }
    },
    downloadFile: async (sandbox, host) => {
      const bytes = await readBytes(sandbox);
      await writeHost(hostPath(ctx.hostDir, host), bytes);
    },
    downloadDirectory: async (sandboxDir, hostDir, o: TransferOptions = {}) => {
      const source = path(sandboxDir);
      const files = await listSandboxFiles(ctx, source);
      const matcher = createIgnoreMatcher(o.ignore ?? []);
      const destination = hostPath(ctx.hostDir, hostDir);
      for (const rel of files) {
        if (isIgnoredFile(matcher, rel)) continue;
        const bytes = await readBytes(posix.join(source, rel));
        await writeHost(join(destination, ...rel.split("/")), bytes);
      }
    },
  };
  return ops;
}

async function writeHost(path: string, bytes: Uint8Array): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeFile(path, bytes);
}

/**
 * Files and directories below `dir`, each directory before its contents; symlinks are followed
 * only when they stay inside `root` and lead to a file (rule 32).
 */
async function* walkHost(
  root: string,
  dir: string,
  rel: string,
  matcher: IgnoreMatcher,
): AsyncGenerator<UploadEntry> {
  const entries: Deno.DirEntry[] = [];
  for await (const entry of Deno.readDir(dir)) entries.push(entry);
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const entry of entries) {
    const abs = join(dir, entry.name);
    const childRel = rel === "" ? entry.name : `${rel}/${entry.name}`;
    let info: Deno.FileInfo;
    if (entry.isSymlink) {
      const real = await Deno.realPath(abs).catch(() => undefined);
      if (real === undefined || !isInside(root, real)) continue;
      info = await Deno.stat(real);
      if (!info.isFile) continue; // a linked directory could loop; it is not followed
    } else {
      info = await Deno.lstat(abs);
    }
    if (matcher(childRel, info.isDirectory)) continue;
    const mode = info.mode === null ? {} : { mode: info.mode & 0o777 };
    if (info.isDirectory) {
      yield { kind: "directory", path: childRel, ...mode };
      yield* walkHost(root, abs, childRel, matcher);
    } else if (info.isFile) yield { kind: "file", path: childRel, source: abs, ...mode };
  }
}

/** Relative paths of the regular files below a sandbox directory, listed with `find`. */
async function listSandboxFiles(ctx: FileOpsContext, dir: string): Promise<string[]> {
  const exists = await withFileRetry(() => ctx.handle.exists(dir, ctx.signal), {
    clock: ctx.clock,
    random: ctx.random,
    signal: ctx.signal,
  });
  if (!exists) {
    throw new SandboxFileNotFoundError(dir, `Cannot download "${dir}": no such directory`);
  }
  const command: ExecCommand = { argv: ["find", ".", "-type", "f", "-print0"] };
  const result = await ctx.exec(command, { cwd: dir });
  if (result.exitCode !== 0) throw commandError(result, { command, sensitiveValues: [] });
  return result.stdout.split("\0").filter((p) => p !== "").map((p) => p.replace(/^\.\//, ""))
    .sort();
}
