/**
 * A stand-in CLI for the coding-agent adapters' fast tests: a shell script in a real `local`
 * sandbox that logs its argv (and a config file) per run, prints a recorded stream chosen by its
 * arguments and exits with a given code. No model server and no real CLI are involved.
 */
import { join } from "node:path";
import { realClock } from "../../../src/_shared/clock.ts";
import {
  type AgentContext,
  createAgentSession,
  resolveAgent,
  type ResolvedAgent,
} from "../../../src/agents/mod.ts";
import type { Agent } from "../../../src/agents/mod.ts";
import { createFacade, type SandboxOps } from "../../../src/sandbox/mod.ts";
import { createSeededRandom } from "../../_fakes/random.ts";
import { localTestBed } from "../../sandbox/_local.ts";

const FIXTURES = new URL("../../fixtures/agent_streams/", import.meta.url);

/**
 * The script: run n gets `$LOG/args.n` (NUL-separated argv), `$LOG/stdin.n` (its standard input)
 * and a copy of its config file; it
 * prints `$RESUMED` when an argument equals `$RESUME_ARG`, else `$FIRST`, then exits `$EXIT`.
 */
const SCRIPT = `#!/bin/sh
n=$(ls "$LOG" | grep -c '^args')
for a in "$@"; do printf '%s\\0' "$a"; done > "$LOG/args.$n"
cat > "$LOG/stdin.$n"
for f in "$CODEX_HOME/config.toml" "$OPENCODE_CONFIG"; do [ -f "$f" ] && cp "$f" "$LOG/config.$n"; done
stream="$FIRST"
for a in "$@"; do [ "$a" = "$RESUME_ARG" ] && stream="$RESUMED"; done
cat "$stream"
echo "stand-in stderr (key $OPENAI_API_KEY)" >&2
exit "\${EXIT:-0}"
`;

/** What a test sets up. */
export interface StandInOptions {
  /** Fixture names under tests/fixtures/agent_streams/. */
  readonly first: string;
  readonly resumed?: string;
  /** The argument that selects `resumed` (`resume`, `--session`). */
  readonly resumeArg: string;
  readonly exitCode?: number;
  /** Host variables the adapter may read. */
  readonly hostEnv?: Record<string, string>;
  readonly model?: string;
}

/** A bed with the stand-in, a sandbox and a context; dispose to clean up. */
export interface StandInBed extends AsyncDisposable {
  readonly bin: string;
  /** Adapter `env` entries the stand-in needs. */
  readonly env: Record<string, string>;
  readonly sandbox: SandboxOps;
  readonly ctx: AgentContext;
  /** The argv of run `n` (0-based). */
  args(n: number): Promise<string[]>;
  /** The standard input of run `n`. */
  stdin(n: number): Promise<string>;
  /** The copied config of run `n`. */
  config(n: number): Promise<string>;
  resolve(agent: Agent): ResolvedAgent;
}

/** Creates the bed; use with `await using`. */
export async function standInBed(o: StandInOptions): Promise<StandInBed> {
  const bed = await localTestBed();
  const dir = await Deno.makeTempDir({ prefix: "niceeval-stand-in-" });
  const log = join(dir, "log");
  await Deno.mkdir(log);
  const bin = join(dir, "cli.sh");
  await Deno.writeTextFile(bin, SCRIPT, { mode: 0o755 });
  const handle = await bed.create();
  const sandbox = createFacade({
    handle,
    shell: "sh",
    clock: realClock,
    random: createSeededRandom(1),
    signal: new AbortController().signal,
    hostDir: bed.tmpDir,
    phase: () => "test",
    onEvidence: () => {},
    onDiagnostic: () => {},
  });
  const hostEnv = o.hostEnv ?? {};
  const ctx = {
    signal: new AbortController().signal,
    session: createAgentSession(),
    model: o.model,
    flags: {},
    experimentId: "x",
    evalId: "e",
    sendTry: 0,
    sandbox,
    env: (name: string) => hostEnv[name],
    progress: () => {},
    diagnostic: () => {},
    log: () => {},
  } as AgentContext;
  const fixture = (name: string) => new URL(name, FIXTURES).pathname;
  const env: Record<string, string> = {
    LOG: log,
    FIRST: fixture(o.first),
    RESUMED: fixture(o.resumed ?? o.first),
    RESUME_ARG: o.resumeArg,
    EXIT: String(o.exitCode ?? 0),
  };
  return {
    bin,
    env,
    sandbox,
    ctx,
    args: async (n) => (await Deno.readTextFile(join(log, `args.${n}`))).split("\0").slice(0, -1),
    stdin: (n) => Deno.readTextFile(join(log, `stdin.${n}`)),
    config: (n) => Deno.readTextFile(join(log, `config.${n}`)),
    resolve: (agent) => resolveAgent(agent)!,
    [Symbol.asyncDispose]: async () => {
      await bed[Symbol.asyncDispose]();
      await Deno.remove(dir, { recursive: true });
    },
  };
}
