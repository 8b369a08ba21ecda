/**
 * `niceeval sandbox list` and `niceeval sandbox prune` (sandboxes.md §7.3, cli.md CMD-19): find
 * stamped sandboxes, classify their owners (§7.2) and destroy orphans. Neither loads a project,
 * config or user code. Providers covered: `local` always, `docker` when a daemon answers within 2 s,
 * `e2b` and `vercel` when their credential variable is set (rule 93).
 */
import { errorMessage, formatDuration, raceAbort, UsageError } from "../_shared/mod.ts";
import { createProcessProbe, type ProcessProbe } from "../coordination/mod.ts";
import {
  classifyOwner,
  createProviderRegistry,
  destroyLocalRoot,
  findLocalRoots,
  localTmpDir,
  type OwnedInstance,
  type OwnerStatus,
  type SandboxProvider,
} from "../sandbox/mod.ts";
import type { Io } from "./io.ts";

/** Options of both commands. */
export interface SandboxCommandOptions {
  /** Only this provider (one of {@link PROVIDERS}). */
  readonly provider?: string;
  readonly json: boolean;
  /** `list`: keep only `orphan` and `unverified` rows. */
  readonly orphans?: boolean;
  /** `prune`: also destroy `unverified` sandboxes. */
  readonly force?: boolean;
}

/** Seams of the commands (tests pass a fake process probe). */
export interface SandboxCommandDeps {
  readonly probe?: ProcessProbe;
  /** Only roots of this uid are listed; default: the current user's. */
  readonly uid?: number;
}

/** Providers `sandbox list` and `prune` can query. */
const PROVIDERS = ["local", "docker", "e2b", "vercel"] as const;
/** Cloud providers and the variable that must be set for them to be queried (rule 93). */
const CLOUD_CREDENTIALS: readonly (readonly [string, string])[] = [
  ["e2b", "E2B_API_KEY"],
  ["vercel", "VERCEL_TOKEN"],
];
/** How long the docker daemon may take to answer before it counts as absent (rule 93). */
const DOCKER_QUERY_MS = 2_000;

interface Row {
  readonly provider: string;
  readonly instance: OwnedInstance;
  readonly status: OwnerStatus;
}

interface Found {
  readonly providers: { name: string; reachable: boolean; error?: string }[];
  readonly rows: Row[];
  /** Destroys one instance of a queried provider. */
  readonly destroy: (row: Row) => Promise<"destroyed" | "already-gone">;
}

/** `sandbox list`: exit 1 only when a queried provider failed (rule 95). */
export async function runSandboxList(
  io: Io,
  o: SandboxCommandOptions,
  deps: SandboxCommandDeps = {},
): Promise<number> {
  const found = await findSandboxes(io, o, deps);
  const rows = o.orphans ? found.rows.filter((r) => r.status !== "alive") : found.rows;
  if (o.json) {
    io.stdout.write(JSON.stringify(document(found.providers, rows)) + "\n");
  } else {
    for (const p of found.providers) {
      if (!p.reachable) io.stdout.write(`${p.name}: ${p.error}\n`);
    }
    io.stdout.write(table(rows, io.clock.now()));
  }
  return found.providers.some((p) => !p.reachable) ? 1 : 0;
}

/**
 * `sandbox prune`: destroys `orphan` sandboxes (`--force`: also `unverified`); `alive` ones are
 * never touched. Exit 0 when every targeted sandbox was destroyed or already gone (rule 95).
 */
export async function runSandboxPrune(
  io: Io,
  o: SandboxCommandOptions,
  deps: SandboxCommandDeps = {},
): Promise<number> {
  const found = await findSandboxes(io, o, deps);
  const targets = found.rows.filter((r) =>
    r.status === "orphan" || (o.force === true && r.status === "unverified")
  );
  const destroyed: string[] = [];
  const failed: { id: string; message: string }[] = [];
  for (const { provider, instance } of targets) {
    try {
      const outcome = await found.destroy({ provider, instance, status: "orphan" });
      destroyed.push(instance.id);
      if (!o.json) io.stdout.write(`${provider}  ${instance.id}  ${outcome}\n`);
    } catch (error) {
      failed.push({ id: instance.id, message: errorMessage(error) });
      if (!o.json) io.stdout.write(`${provider}  ${instance.id}  failed: ${errorMessage(error)}\n`);
    }
  }
  if (o.json) {
    io.stdout.write(
      JSON.stringify({ ...document(found.providers, found.rows), destroyed, failed }) + "\n",
    );
  } else if (targets.length === 0) {
    io.stdout.write("no sandboxes to prune\n");
  }
  return failed.length > 0 ? 1 : 0;
}

async function findSandboxes(
  io: Io,
  o: SandboxCommandOptions,
  deps: SandboxCommandDeps,
): Promise<Found> {
  if (o.provider !== undefined && !(PROVIDERS as readonly string[]).includes(o.provider)) {
    throw new UsageError(
      "usage",
      `unknown sandbox provider "${o.provider}"`,
      `providers covered by niceeval sandbox: ${PROVIDERS.join(", ")}`,
    );
  }
  const probe = deps.probe ?? createProcessProbe();
  const uid = deps.uid ?? io.uid ?? undefined;
  const providers: Found["providers"] = [];
  const rows: Row[] = [];
  const classify = async (provider: string, instances: readonly OwnedInstance[]) => {
    for (const instance of instances) {
      const status = await classifyOwner(instance.owner, { host: io.hostname, probe });
      rows.push({ provider, instance, status });
    }
  };
  if (o.provider === undefined || o.provider === "local") {
    try {
      await classify(
        "local",
        await findLocalRoots(localTmpDir(io.env), {}, uid === undefined ? {} : { uid }),
      );
      providers.push({ name: "local", reachable: true });
    } catch (error) {
      providers.push({ name: "local", reachable: false, error: errorMessage(error) });
    }
  }
  let docker: SandboxProvider | undefined;
  if (o.provider === undefined || o.provider === "docker") {
    const found = await findDocker(io);
    if (found.kind === "absent") {
      io.stderr.write(`docker: no daemon at ${found.endpoint}\n`);
    } else if (found.kind === "failed") {
      providers.push({ name: "docker", reachable: false, error: found.error });
    } else {
      docker = found.provider;
      await classify("docker", found.instances);
      providers.push({ name: "docker", reachable: true });
    }
  }
  const cloud = new Map<string, SandboxProvider>();
  for (const [name, variable] of CLOUD_CREDENTIALS) {
    if (o.provider !== undefined && o.provider !== name) continue;
    if (!io.env[variable]) {
      // Only a provider asked for by name says why it was left out.
      if (o.provider === name) io.stderr.write(`${name}: ${variable} is not set; not queried\n`);
      continue;
    }
    try {
      const provider = await createProviderRegistry({ hostEnv: io.env, clock: io.clock }).get(name);
      await classify(name, await provider.findOwned!({}, io.interrupt));
      cloud.set(name, provider);
      providers.push({ name, reachable: true });
    } catch (error) {
      io.interrupt.throwIfAborted();
      providers.push({ name, reachable: false, error: errorMessage(error) });
    }
  }
  const destroy = (row: Row) => {
    if (row.provider === "local") return destroyLocalRoot(localTmpDir(io.env), row.instance.id);
    const provider = row.provider === "docker" ? docker! : cloud.get(row.provider)!;
    return provider.destroyDetached!(row.instance.id, io.interrupt);
  };
  return { providers, rows, destroy };
}

/**
 * The run-start notice of rule 97 for a plan that uses docker: one label query; undefined when no
 * daemon answers or no container of a dead owner is left.
 */
export async function dockerOrphanNotice(
  io: Io,
  deps: { readonly probe: ProcessProbe },
): Promise<string | undefined> {
  const found = await findDocker(io);
  if (found.kind !== "found") return undefined;
  let orphans = 0;
  for (const instance of found.instances) {
    const status = await classifyOwner(instance.owner, { host: io.hostname, probe: deps.probe });
    if (status === "orphan") orphans++;
  }
  if (orphans === 0) return undefined;
  return `${orphans} orphaned docker sandboxes from earlier runs; remove them with niceeval sandbox prune`;
}

type DockerFound =
  | { kind: "absent"; endpoint: string }
  | { kind: "failed"; error: string }
  | { kind: "found"; provider: SandboxProvider; instances: readonly OwnedInstance[] };

/**
 * The niceeval-labelled docker containers (rule 93): a daemon that does not answer within 2 s, or
 * that cannot be reached at all, is absent — not an error.
 */
async function findDocker(io: Io): Promise<DockerFound> {
  const endpoint = io.env.DOCKER_HOST || "unix:///var/run/docker.sock";
  const registry = createProviderRegistry({ hostEnv: io.env, clock: io.clock, user: io.user });
  const provider = await registry.get("docker");
  const limit = new AbortController();
  const timer = io.clock.setTimeout(() => limit.abort(), DOCKER_QUERY_MS);
  const signal = AbortSignal.any([io.interrupt, limit.signal]);
  try {
    const query = provider.findOwned!({}, signal);
    query.catch(() => undefined); // past the limit its outcome no longer matters
    return { kind: "found", provider, instances: await raceAbort(query, signal) };
  } catch (error) {
    io.interrupt.throwIfAborted();
    if (limit.signal.aborted || provider.classifyCreateError(error) === "rejected") {
      return { kind: "absent", endpoint };
    }
    return { kind: "failed", error: errorMessage(error) };
  } finally {
    io.clock.clearTimeout(timer);
  }
}

/** The `--json` document of rule 96. */
function document(providers: Found["providers"], rows: readonly Row[]) {
  return {
    format: "niceeval.sandboxes",
    schemaVersion: 1,
    providers,
    sandboxes: rows.map(({ provider, instance, status }) => ({
      provider,
      id: instance.id,
      status,
      owner: instance.owner,
      ...(instance.createdAt ? { createdAt: instance.createdAt.toISOString() } : {}),
    })),
  };
}

/** `PROVIDER  ID  STATUS  OWNER(host:pid)  RUN  AGE` (rule 94), columns aligned. */
function table(rows: readonly Row[], now: number): string {
  if (rows.length === 0) return "no sandboxes found\n";
  const lines = [["PROVIDER", "ID", "STATUS", "OWNER(host:pid)", "RUN", "AGE"]];
  for (const { provider, instance, status } of rows) {
    const { host, pid, runId } = instance.owner;
    lines.push([
      provider,
      instance.id,
      status,
      `${host ?? "?"}:${pid ?? "?"}`,
      runId ?? "-",
      instance.createdAt ? formatDuration(Math.max(0, now - instance.createdAt.getTime())) : "-",
    ]);
  }
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  return lines.map((l) => l.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n") +
    "\n";
}
