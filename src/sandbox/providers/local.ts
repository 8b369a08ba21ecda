/**
 * The `local` provider (sandboxes.md §8.1): a private temp directory plus host subprocesses, for
 * trusted agents. Roots are `<tmp>/niceeval-local-<pid>-<random>/` holding `work/` (the workdir),
 * `home/`, `tmp/`, `ledger/`, `owner.json` and `pgids`. The user's checkout is never used.
 */
import { join } from "node:path";
import { canonicalJson, type Clock, errorMessage, sha256Hex } from "../../_shared/mod.ts";
import { type ProcessProbe, readJsonObject } from "../../coordination/mod.ts";
import { classifyOwner } from "../owner.ts";
import type {
  CreateContext,
  OwnedInstance,
  OwnerStamp,
  SandboxHandle,
  SandboxProvider,
} from "../types.ts";
import { removeTree } from "./_local_fs.ts";
import { killMarkedGroups, LocalHandle, ROOT_MARKER } from "./_local_handle.ts";

/** Prefix of every local root. */
export const LOCAL_ROOT_PREFIX = "niceeval-local-";
/** Host variables every local sandbox inherits (rule 100). */
export const LOCAL_HOST_ENV: readonly string[] = [
  "PATH",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TERM",
  "TZ",
];

const ROOT_ID_REGEXP = /^niceeval-local-[A-Za-z0-9_-]+$/;
const STAMP_FIELDS = ["host", "pid", "processStart", "runId", "provisionToken"] as const;

/** The `localSandbox()` options a plan keeps. */
export interface LocalSpec {
  readonly passEnv?: readonly string[];
}

/** A planned local sandbox. */
export interface LocalPlan {
  readonly passEnv: readonly string[];
}

/** What the local provider needs from its host. */
export interface LocalProviderOptions {
  /** The host environment snapshot (never read directly). */
  readonly hostEnv: Readonly<Record<string, string>>;
  readonly clock: Clock;
  /** Where roots are made and looked for; see {@link localTmpDir}. */
  readonly tmpDir: string;
  /** The user's name for `USER` and `LOGNAME` when the host environment has neither. */
  readonly user?: string | undefined;
}

/** The host's temp directory as the environment names it. */
export function localTmpDir(hostEnv: Readonly<Record<string, string>>): string {
  return hostEnv.TMPDIR || "/tmp";
}

/** The environment every command of a local sandbox starts from (rule 100). */
export function localSandboxEnv(
  hostEnv: Readonly<Record<string, string>>,
  options: { passEnv: readonly string[]; root: string; user?: string | undefined },
): Record<string, string> {
  const { passEnv, root } = options;
  const env: Record<string, string> = {};
  for (const name of [...LOCAL_HOST_ENV, ...passEnv]) {
    const value = hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  env.HOME = join(root, "home");
  env.TMPDIR = join(root, "tmp");
  // Always set (rule 100): from the host's variables, else the user's name as the host knows it.
  const user = hostEnv.USER || hostEnv.LOGNAME || options.user;
  if (user) {
    env.USER = hostEnv.USER || user;
    env.LOGNAME = hostEnv.LOGNAME || user;
  }
  env[ROOT_MARKER] = root;
  return env;
}

/** Creates the `local` provider. */
export function createLocalProvider(
  o: LocalProviderOptions,
): SandboxProvider<LocalSpec, LocalPlan> {
  return {
    name: "local",
    scheduling: Object.freeze({
      recommendedConcurrency: 1,
      admission: "exclusive",
      laneKey: "local",
    }),
    plan: (spec) => {
      const passEnv = Object.freeze([...(spec.passEnv ?? [])]);
      const identity = sha256Hex(canonicalJson({ provider: "local", passEnv }));
      return Promise.resolve({ plan: { passEnv }, identity, buildKeys: [] });
    },
    create: (plan, ctx) => createLocal(o, plan, ctx),
    classifyCreateError: () => "fatal",
    findOwned: (filter) => findLocalRoots(o.tmpDir, filter),
    destroyDetached: (id) => destroyLocalRoot(o.tmpDir, id),
  };
}

async function createLocal(
  o: LocalProviderOptions,
  plan: LocalPlan,
  ctx: CreateContext,
): Promise<SandboxHandle> {
  ctx.signal.throwIfAborted();
  const made = await Deno.makeTempDir({
    dir: o.tmpDir,
    prefix: `${LOCAL_ROOT_PREFIX}${ctx.owner.pid}-`,
  });
  try {
    const root = await Deno.realPath(made);
    await Deno.writeTextFile(join(root, "owner.json"), JSON.stringify(ctx.owner) + "\n");
    for (const dir of ["work", "home", "tmp", "ledger"]) await Deno.mkdir(join(root, dir));
    const shell = await Deno.stat("/bin/bash").then((i) => i.isFile ? "bash" : "sh", () => "sh");
    const env = localSandboxEnv(o.hostEnv, { passEnv: plan.passEnv, root, user: o.user });
    return new LocalHandle({ root, env, shell: shell as "bash" | "sh", clock: o.clock });
  } catch (error) {
    await removeTree(made).catch((cleanup) =>
      ctx.diagnostic({
        code: "sandbox-stop-failed",
        level: "error",
        message: `Cannot remove the partial local sandbox "${made}": ${errorMessage(cleanup)}`,
      })
    );
    throw error;
  }
}

/** Local roots in `tmpDir` whose owner matches every field of `filter` (§8.5 "scan temp roots"). */
export async function findLocalRoots(
  tmpDir: string,
  filter: Partial<OwnerStamp>,
  options: { uid?: number } = {},
): Promise<OwnedInstance[]> {
  const found: OwnedInstance[] = [];
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(tmpDir)) entries.push(entry);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  for (const entry of entries) {
    if (!entry.isDirectory || !ROOT_ID_REGEXP.test(entry.name)) continue;
    const root = join(tmpDir, entry.name);
    const info = await Deno.stat(root).catch(() => undefined);
    if (info === undefined || (options.uid !== undefined && info.uid !== options.uid)) continue;
    const raw = await readJsonObject(join(root, "owner.json"));
    const owner = stampOf(raw ?? {});
    const matches = Object.entries(filter).every(([k, v]) =>
      v === undefined || owner[k as keyof OwnerStamp] === v
    );
    if (!matches) continue;
    const createdAt = info.birthtime ?? info.mtime;
    found.push({ id: entry.name, owner, state: "running", ...(createdAt ? { createdAt } : {}) });
  }
  return found.sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * Destroys a local root without its handle (rule 101): kills each recorded group that still
 * carries the root's marker (Linux only), then removes the root.
 */
export async function destroyLocalRoot(
  tmpDir: string,
  id: string,
): Promise<"destroyed" | "already-gone"> {
  if (!ROOT_ID_REGEXP.test(id)) throw new RangeError(`Cannot destroy "${id}": not a local root id`);
  let root: string;
  try {
    root = await Deno.realPath(join(tmpDir, id));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "already-gone";
    throw error;
  }
  const recorded = await Deno.readTextFile(join(root, "pgids")).catch(() => "");
  const pgids = recorded.split("\n").filter((l) => /^\d+$/.test(l)).map(Number);
  await killMarkedGroups(pgids, root, { unverifiable: "skip" });
  await removeTree(root);
  return "destroyed";
}

/** Options of {@link sweepLocalOrphans}. */
export interface SweepOptions {
  readonly tmpDir: string;
  /** This host's name. */
  readonly host: string;
  readonly probe: ProcessProbe;
  /** Only roots owned by this uid are considered. */
  readonly uid?: number;
}

/**
 * The startup sweep of `niceeval exp` (rule 97): removes local roots of this user whose owner is
 * `orphan` on this host, without a prompt. Roots of live or unverifiable owners are kept.
 */
export async function sweepLocalOrphans(
  o: SweepOptions,
): Promise<{ removed: string[]; failed: { id: string; message: string }[] }> {
  const removed: string[] = [];
  const failed: { id: string; message: string }[] = [];
  const filter = o.uid === undefined ? {} : { uid: o.uid };
  for (const instance of await findLocalRoots(o.tmpDir, { host: o.host }, filter)) {
    const status = await classifyOwner(instance.owner, { host: o.host, probe: o.probe });
    if (status !== "orphan") continue;
    try {
      await destroyLocalRoot(o.tmpDir, instance.id);
      removed.push(instance.id);
    } catch (error) {
      failed.push({ id: instance.id, message: errorMessage(error) });
    }
  }
  return { removed, failed };
}

function stampOf(raw: Record<string, unknown>): Partial<OwnerStamp> {
  const out: Record<string, unknown> = {};
  for (const field of STAMP_FIELDS) {
    const value = raw[field];
    if (field === "pid" ? typeof value === "number" : typeof value === "string") out[field] = value;
  }
  return out as Partial<OwnerStamp>;
}
