/**
 * Fixture copy (sandboxes.md rule 10): host directories are copied into the workdir in order, later
 * files overwriting earlier ones; `.niceeval/` directories are never copied; symlinks are copied as
 * links; empty directories are kept. Works through the handle, so every provider gets it.
 */
import { join, posix } from "node:path";
import type { Clock, Random } from "../_shared/mod.ts";
import { withFileRetry } from "./file_retry.ts";
import type { ExecCommand, SandboxHandle } from "./types.ts";

/** What {@link copyFixtures} needs. */
interface FixtureCopyOptions {
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly random: Random;
}

/** Copies each host directory of `fixtures` into the workdir, in order. */
export async function copyFixtures(
  handle: SandboxHandle,
  fixtures: readonly string[],
  o: FixtureCopyOptions,
): Promise<void> {
  for (const dir of fixtures) await copyDir(handle, dir, handle.workdir, o);
}

async function copyDir(
  handle: SandboxHandle,
  hostDir: string,
  sandboxDir: string,
  o: FixtureCopyOptions,
): Promise<void> {
  const entries: Deno.DirEntry[] = [];
  for await (const entry of Deno.readDir(hostDir)) entries.push(entry);
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  if (entries.length === 0 && sandboxDir !== handle.workdir) {
    await exec(handle, { argv: ["mkdir", "-p", sandboxDir] }, o);
  }
  for (const entry of entries) {
    const host = join(hostDir, entry.name);
    const target = posix.join(sandboxDir, entry.name);
    if (entry.isSymlink) {
      await exec(handle, { argv: ["ln", "-sfn", await Deno.readLink(host), target] }, o);
    } else if (entry.isDirectory) {
      if (entry.name !== ".niceeval") await copyDir(handle, host, target, o);
    } else if (entry.isFile) {
      const info = await Deno.stat(host);
      const data = await Deno.readFile(host);
      const mode = info.mode === null ? undefined : info.mode & 0o777;
      const options = mode === undefined ? { signal: o.signal } : { signal: o.signal, mode };
      await withFileRetry(() => handle.writeFile(target, data, options), o);
    }
  }
}

async function exec(handle: SandboxHandle, command: ExecCommand, o: FixtureCopyOptions) {
  const r = await handle.exec(command, { signal: o.signal });
  if (r.exitCode !== 0) {
    const stderr = new TextDecoder().decode(r.stderr).trim();
    const argv = "argv" in command ? command.argv.join(" ") : command.script;
    throw new Error(`Cannot copy fixture: ${argv} failed (exit ${r.exitCode}): ${stderr}`);
  }
}
