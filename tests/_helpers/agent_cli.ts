/**
 * Runs the real coding-agent CLIs against fake model servers (docs/coding_agents.md "Tests"):
 * niceeval, the CLI it starts and the fake all run inside one network namespace that has only
 * loopback, so nothing a CLI sends can leave the machine. The pinned CLIs are looked up in
 * `NICEEVAL_AGENT_CLIS_DIR` (default `<repo>/.tools/agent-clis`, filled by
 * `scripts/ci/agent_clis.sh`).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { REPO } from "./cli.ts";

/** The pinned CLIs: npm package, exact version and command. */
export const PINNED_CLIS = Object.freeze({
  claude: { npmPackage: "@anthropic-ai/claude-code", version: "2.1.332", command: "claude" },
  codex: { npmPackage: "@openai/codex", version: "0.171.0", command: "codex" },
  opencode: { npmPackage: "opencode-ai", version: "1.18.33", command: "opencode" },
});

/** A pinned CLI's key. */
export type PinnedCli = keyof typeof PINNED_CLIS;

/** Where the pinned CLIs are installed. */
export const AGENT_CLIS_DIR: string = Deno.env.get("NICEEVAL_AGENT_CLIS_DIR") ||
  join(REPO, ".tools", "agent-clis");

/** True when CI requires the CLIs: missing ones fail instead of being skipped. */
export const REQUIRE_AGENT_CLIS: boolean = Deno.env.get("NICEEVAL_REQUIRE_AGENT_CLIS") === "1";

/** The installed binary of a pinned CLI (it may not exist; see {@link agentCliSkipReason}). */
export function agentCliBin(cli: PinnedCli): string {
  const { npmPackage, version, command } = PINNED_CLIS[cli];
  const dir = `${npmPackage.replaceAll(/[@/]/g, "_")}_${version}`;
  return join(AGENT_CLIS_DIR, dir, "node_modules", ".bin", command);
}

/**
 * Why the agent-CLI tests cannot run here (one line), or undefined when they can: the pinned
 * binaries are missing or a loopback-only network namespace cannot be made. Use it as
 * `Deno.test({ ignore: skip !== undefined && !REQUIRE_AGENT_CLIS, ... })` and assert it is
 * undefined inside the test, so that CI fails instead of skipping.
 */
export async function agentCliSkipReason(clis: readonly PinnedCli[]): Promise<string | undefined> {
  for (const cli of clis) {
    try {
      await Deno.stat(agentCliBin(cli));
    } catch {
      return `${cli} ${PINNED_CLIS[cli].version} is not installed (run scripts/ci/agent_clis.sh)`;
    }
  }
  try {
    const probe = await new Deno.Command("unshare", {
      args: ["-n", "sh", "-c", "ip link set lo up"],
      stdout: "null",
      stderr: "null",
    }).output();
    if (probe.success) return undefined;
  } catch {
    // Reported below.
  }
  return "a loopback-only network namespace (unshare -n as root) is unavailable";
}

/** A fake model server module: `factory()` returns `{ baseUrl, requests, [Symbol.asyncDispose] }`. */
export interface FakeServerRef {
  /** Absolute module URL (e.g. `new URL("../_fakes/model_servers/anthropic.ts", import.meta.url)`). */
  readonly module: URL | string;
  /** The exported factory's name. */
  readonly factory: string;
  /** JSON arguments of the factory. */
  readonly args?: readonly unknown[];
}

/** Options of {@link runInLoopback}: one `fake`, or several named `fakes`, or both. */
export interface LoopbackRunOptions {
  /** The fake whose URL is `{{baseUrl}}` and whose log is `requests`. */
  readonly fake?: FakeServerRef;
  /** More fakes by name: `{{baseUrl:<name>}}` is one's URL, `requestsOf[<name>]` its log. */
  readonly fakes?: Readonly<Record<string, FakeServerRef>>;
  /** The project directory niceeval runs in (a temporary copy; see `tempProject`). */
  readonly project: string;
  /** Its private state directory. */
  readonly stateDir: string;
  /** `niceeval` arguments. */
  readonly args: readonly string[];
  /** Extra variables of the niceeval process; `{{baseUrl}}` (`{{baseUrl:<name>}}`) in a value
   * becomes the fake's URL. */
  readonly env?: Record<string, string>;
  /** Command-line fragments: the result lists the processes still running that contain one. */
  readonly markers?: readonly string[];
}

/** What one run in the namespace produced. */
export interface LoopbackResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The request log of `fake` (empty without one). */
  readonly requests: Record<string, unknown>[];
  /** The request log of each of `fakes`, by name. */
  readonly requestsOf: Record<string, Record<string, unknown>[]>;
  /** Command lines of processes alive after niceeval exited that contain a marker. */
  readonly survivors: string[];
}

const CHILD = fileURLToPath(new URL("./_agent_cli_child.ts", import.meta.url));

/**
 * Starts the fakes and runs `niceeval <args>` on the project, all inside a fresh loopback-only
 * network namespace; returns after niceeval exits and the fakes stopped.
 */
export async function runInLoopback(o: LoopbackRunOptions): Promise<LoopbackResult> {
  const fakes: Record<string, FakeServerRef> = { ...o.fakes };
  if (o.fake) fakes[""] = o.fake;
  const config = JSON.stringify({
    fakes: Object.fromEntries(
      Object.entries(fakes).map(([name, f]) => [
        name,
        { module: String(f.module), factory: f.factory, args: f.args ?? [] },
      ]),
    ),
    project: o.project,
    stateDir: o.stateDir,
    args: o.args,
    env: o.env ?? {},
    markers: o.markers ?? [],
  });
  const deno = Deno.execPath();
  const child = new Deno.Command("unshare", {
    args: [
      "-n",
      "sh",
      "-c",
      'ip link set lo up && exec "$0" run -A --frozen "$1"',
      deno,
      CHILD,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(config));
  await writer.close();
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  const last = text.trim().split("\n").at(-1) ?? "";
  try {
    const { requestsOf, ...rest } = JSON.parse(last);
    const { [""]: requests = [], ...named } = requestsOf;
    return { ...rest, requests, requestsOf: named } as LoopbackResult;
  } catch {
    throw new Error(`the loopback child failed (exit ${out.code}):\n${text}\n${stderr}`);
  }
}
