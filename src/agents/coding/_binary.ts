/**
 * Which executable a coding-agent adapter runs (docs/coding_agents.md "Binary"): the `bin` option;
 * in a local sandbox then the project's `node_modules/.bin/<command>`, then the exact `version`
 * installed once from npm into the per-user cache; else the bare command on the sandbox's PATH.
 */
import { join } from "node:path";
import type { SandboxOps } from "../../sandbox/mod.ts";

/** The CLI to find. */
export interface BinarySpec {
  /** The command name, e.g. `claude`. */
  readonly command: string;
  /** The npm package providing it. */
  readonly npmPackage: string;
}

/** Where to look. */
export interface BinaryContext {
  readonly sandbox: SandboxOps;
  /** Reads a host variable (`PWD`, `XDG_CACHE_HOME`, `HOME`). */
  readonly env: (name: string) => string | undefined;
  readonly signal: AbortSignal;
}

/** A `version` that could not be installed. */
class AgentInstallError extends Error {
  /** The Attempt error code. */
  readonly code = "agent-config-invalid";

  constructor(message: string) {
    super(message);
    this.name = "AgentInstallError";
  }
}

/**
 * The program to run for `spec`, following the resolution order above. Only a local sandbox
 * looks at host paths; a docker image provides the CLI on its PATH unless `bin` is given.
 *
 * @returns A path or a bare command name.
 * @throws {AgentInstallError} When `version` must be installed and npm fails.
 */
export async function resolveBinary(
  spec: BinarySpec,
  options: { readonly bin: string | undefined; readonly version: string | undefined },
  ctx: BinaryContext,
): Promise<string> {
  if (options.bin !== undefined) return options.bin;
  if (ctx.sandbox.provider !== "local") return spec.command;
  const project = ctx.env("PWD");
  if (project !== undefined) {
    const local = join(project, "node_modules", ".bin", spec.command);
    if (await isFile(local)) return local;
  }
  if (options.version === undefined) return spec.command;
  return await installed(spec, options.version, ctx);
}

/**
 * The cache directory name of a package version: `@scope/name` + `1.2.3` → `_scope_name_1.2.3`.
 */
export function cacheDirName(npmPackage: string, version: string): string {
  return `${npmPackage.replaceAll(/[@/]/g, "_")}_${version}`;
}

/** The per-user cache of installed CLIs: `$XDG_CACHE_HOME/niceeval/agent-clis`. */
export function cliCacheDir(env: (name: string) => string | undefined): string {
  const xdg = env("XDG_CACHE_HOME");
  if (xdg) return join(xdg, "niceeval", "agent-clis");
  return join(env("HOME") ?? "/tmp", ".cache", "niceeval", "agent-clis");
}

/**
 * Installs `version` once: npm writes into a private temporary directory that is then renamed
 * into place. A rename onto an existing installation fails, so of two concurrent first installs
 * one wins and the other discards its copy; readers only ever see complete installations.
 */
async function installed(spec: BinarySpec, version: string, ctx: BinaryContext): Promise<string> {
  const cache = cliCacheDir(ctx.env);
  const final = join(cache, cacheDirName(spec.npmPackage, version));
  const bin = join(final, "node_modules", ".bin", spec.command);
  if (await isFile(bin)) return bin;
  await Deno.mkdir(cache, { recursive: true });
  const tmp = await Deno.makeTempDir({ dir: cache, prefix: ".install-" });
  try {
    const r = await ctx.sandbox.runCommand("npm", [
      "install",
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--prefix",
      tmp,
      `${spec.npmPackage}@${version}`,
    ], { signal: ctx.signal });
    if (r.exitCode !== 0) {
      throw new AgentInstallError(
        `Cannot install ${spec.npmPackage}@${version} from npm: npm exited with ${r.exitCode}: ${
          r.stderr.trim().slice(-1000)
        }`,
      );
    }
    try {
      await Deno.rename(tmp, final);
    } catch (error) {
      if (!(await isFile(bin))) throw error;
    }
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => undefined);
  }
  return bin;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}
