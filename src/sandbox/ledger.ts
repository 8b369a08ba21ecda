/**
 * The workdir ledger (sandboxes.md §6.3–§6.4): a git repository whose `GIT_DIR` lies outside the
 * workdir (`<local root>/ledger`, else `/tmp/.niceeval-ledger`) and whose work tree is the workdir.
 * Every git call runs with the isolated configuration of rule 83, as root when `rootAvailable`.
 */
import { posix } from "node:path";
import { SandboxPoolError } from "./errors.ts";
import type { ExecResult, SandboxHandle } from "./types.ts";

/** Tag of the pool instance's clean state (rule 84). */
export const LEDGER_ANCHOR_TAG = "niceeval-anchor";
/** `GIT_DIR` inside container providers (rule 82). */
const CONTAINER_LEDGER_DIR = "/tmp/.niceeval-ledger";
/** Kept by every reset, at any depth (rule 87). */
const PRESERVED_PATTERNS: readonly string[] = [
  "node_modules",
  ".venv",
  ".pnpm-store",
  ".cache",
];
/**
 * Pathspecs that keep the preserved patterns out of every ledger commit. Were they committed (a
 * baseline after an install), `git reset --hard` to the anchor would delete them before
 * `git clean -e` could keep them, and every second reset would lose them.
 */
const PRESERVED_EXCLUDES: readonly string[] = PRESERVED_PATTERNS.flatMap((p) => [
  `:(exclude,glob)**/${p}`,
  `:(exclude,glob)**/${p}/**`,
]);
/** `git add` of the whole workdir except the preserved patterns (rules 84, 85, 87). */
const ADD_ALL = ["add", "-A", "-f", "--", ".", ...PRESERVED_EXCLUDES] as const;
/** Bound of one reset. */
export const RESET_TIMEOUT_MS = 30_000;

const CONFIG_FLAGS = [
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "init.templateDir=",
  "-c",
  "commit.gpgsign=false",
  "-c",
  "safe.directory=*",
  "-c",
  "user.name=niceeval",
  "-c",
  "user.email=niceeval@localhost",
];

/** Options of every ledger operation. */
export interface LedgerOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs?: number;
}

/** The ledger's `GIT_DIR` for a handle: the local provider's own, else the container path. */
function ledgerDirOf(handle: SandboxHandle): string {
  const own = (handle as { ledgerDir?: unknown }).ledgerDir;
  return typeof own === "string" ? own : CONTAINER_LEDGER_DIR;
}

/** The argv of one ledger git call (rule 83). */
export function ledgerGitArgv(args: readonly string[]): [string, ...string[]] {
  return ["git", ...CONFIG_FLAGS, ...args];
}

/** The environment of every ledger git call (rule 83). */
function ledgerEnv(ledgerDir: string, workdir: string): Record<string, string> {
  return {
    GIT_DIR: ledgerDir,
    GIT_WORK_TREE: workdir,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    HOME: "/tmp",
  };
}

/** True when `git` runs in the sandbox. */
export async function hasGit(handle: SandboxHandle, o: LedgerOptions): Promise<boolean> {
  const r = await handle.exec({ argv: ["git", "--version"] }, execOptions(handle, o));
  return r.exitCode === 0;
}

/**
 * Anchors a pool instance's workdir (rule 84): init, add everything, commit `anchor`, tag it.
 * A nested repository (mode 160000) fails with `sandbox-ledger-nested-repo` naming its paths.
 */
export async function anchorLedger(handle: SandboxHandle, o: LedgerOptions): Promise<void> {
  const dir = ledgerDirOf(handle);
  if (handle.capabilities.rootAvailable && dir === CONTAINER_LEDGER_DIR) {
    await run(handle, { argv: ["mkdir", "-p", "-m", "0700", dir] }, o);
  }
  await git(handle, ["init", "-q"], o);
  await git(handle, ADD_ALL, o);
  const nested = (await git(handle, ["ls-files", "-s"], o)).split("\n")
    .filter((line) => line.startsWith("160000 "))
    .map((line) => line.slice(line.indexOf("\t") + 1));
  if (nested.length > 0) {
    throw new SandboxPoolError(
      "sandbox-ledger-nested-repo",
      `Cannot anchor the workdir: nested git repositories at ${
        nested.map((p) => `"${p}"`).join(", ")
      }`,
      { scope: "experiment" },
    );
  }
  await git(handle, ["commit", "-q", "--allow-empty", "-m", "anchor"], o);
  await git(handle, ["tag", LEDGER_ANCHOR_TAG], o);
}

/**
 * Commits the workdir as the Attempt's baseline (rule 85), initializing the ledger when absent;
 * resolves with the commit id.
 */
export async function baselineLedger(handle: SandboxHandle, o: LedgerOptions): Promise<string> {
  const dir = ledgerDirOf(handle);
  if (!(await handle.exists(posix.join(dir, "HEAD"), o.signal))) {
    if (handle.capabilities.rootAvailable && dir === CONTAINER_LEDGER_DIR) {
      await run(handle, { argv: ["mkdir", "-p", "-m", "0700", dir] }, o);
    }
    await git(handle, ["init", "-q"], o);
  }
  await git(handle, ADD_ALL, o);
  await git(handle, ["commit", "-q", "--allow-empty", "-m", "baseline"], o);
  return (await git(handle, ["rev-parse", "HEAD"], o)).trim();
}

/**
 * Resets the workdir to the anchor (rule 87), keeping the preserved patterns at any depth, then
 * gives the workdir back to the default user when niceeval runs as root.
 */
export async function resetLedger(handle: SandboxHandle, o: LedgerOptions): Promise<void> {
  await git(handle, ["reset", "-q", "--hard", LEDGER_ANCHOR_TAG], o);
  const keep = PRESERVED_PATTERNS.flatMap((p) => ["-e", p]);
  await git(handle, ["clean", "-ffdxq", ...keep], o);
  if (handle.capabilities.rootAvailable) {
    const ids = await handle.exec({ script: "id -u; id -g" }, withoutUser(o));
    const [uid, gid] = new TextDecoder().decode(ids.stdout).trim().split(/\s+/);
    if (ids.exitCode !== 0 || !uid || !gid) throw new Error("Cannot read the default user's ids");
    await run(handle, { argv: ["chown", "-R", `${uid}:${gid}`, handle.workdir] }, o);
  }
}

async function git(handle: SandboxHandle, args: readonly string[], o: LedgerOptions) {
  const env = ledgerEnv(ledgerDirOf(handle), handle.workdir);
  const r = await handle.exec({ argv: ledgerGitArgv(args) }, { ...execOptions(handle, o), env });
  if (r.exitCode !== 0) throw failed(`git ${args.join(" ")}`, r);
  return new TextDecoder().decode(r.stdout);
}

async function run(
  handle: SandboxHandle,
  command: { argv: [string, ...string[]] },
  o: LedgerOptions,
): Promise<void> {
  const r = await handle.exec(command, execOptions(handle, o));
  if (r.exitCode !== 0) throw failed(command.argv.join(" "), r);
}

function execOptions(handle: SandboxHandle, o: LedgerOptions) {
  return {
    ...withoutUser(o),
    cwd: handle.workdir,
    ...(handle.capabilities.rootAvailable ? { user: "root" } : {}),
  };
}

function withoutUser(o: LedgerOptions) {
  return { signal: o.signal, ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}) };
}

function failed(what: string, r: ExecResult): Error {
  const stderr = new TextDecoder().decode(r.stderr).trim().slice(-500);
  return new Error(`${what} failed (exit ${r.exitCode})${stderr ? `: ${stderr}` : ""}`);
}
