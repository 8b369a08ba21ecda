/**
 * The machinery shared by the coding-agent adapters (docs/coding_agents.md): one `t.send` is one
 * run of the agent's CLI in the Attempt's sandbox. This module validates the common options,
 * resolves the binary, builds the environment (credential allow-list, quiet defaults, private
 * config and data directories), runs the CLI with the Attempt signal, keeps the session id for the
 * next turn and classifies failures; each adapter supplies its argv and its stream mapping.
 */
import { Redactor } from "../../_shared/mod.ts";
import type { JsonValue } from "../../_shared/mod.ts";
import { resolveCoverage } from "../coverage.ts";
import { defineAgent } from "../define_agent.ts";
import { SendRejectedError } from "../send_failure.ts";
import type {
  Agent,
  AgentContext,
  CommandResult,
  EvidenceCoverage,
  Turn,
  TurnInput,
} from "../types.ts";
import type { SandboxOps } from "../../sandbox/mod.ts";
import { resolveBinary } from "./_binary.ts";
import { checkCliOptions, type CliSettings } from "./_cli_options.ts";

export { checkCliOptions, CLI_OPTION_KEYS } from "./_cli_options.ts";
export type { CliAgentOptions, CliSettings } from "./_cli_options.ts";

/** What an adapter's hooks see of one send. */
export interface CliRun {
  readonly input: TurnInput;
  readonly ctx: AgentContext;
  readonly sandbox: SandboxOps;
  readonly settings: CliSettings;
  /** `settings.model`, else the experiment's model (`ctx.model`), else undefined. */
  readonly model: string | undefined;
  /** The session id captured by an earlier send of this line; resume it when set. */
  readonly sessionId: string | undefined;
  /** The endpoint: the `baseUrl` option, else the host's endpoint variable, else undefined. */
  readonly baseUrl: string | undefined;
  /**
   * The adapter's private directories in the sandbox (absolute, created), by the keys of
   * {@link CliAgentSpec.privateDirs}.
   */
  readonly dirs: Readonly<Record<string, string>>;
  /** The CLI's environment as it will run (hooks may add entries in `prepare`). */
  readonly env: Record<string, string>;
  /** Credential values of the environment; every writer of evidence redacts them. */
  readonly secrets: readonly string[];
}

/** What an adapter reads from the CLI's output of one send. */
export interface CliParsed {
  /** The turn; niceeval validates it. */
  readonly turn: Turn;
  /** The CLI's session id, captured for the next send of the line. */
  readonly sessionId?: string;
  /**
   * Set when the output proves the model endpoint rejected the request (rate limit or
   * overloaded) before the agent did any work: the send becomes a retried `rate_limit` rejection.
   */
  readonly rejected?: { readonly message: string; readonly retryAfterMs?: number };
  /**
   * Set when the CLI failed without producing a turn worth keeping (e.g. it crashed before its
   * first model turn): the send fails with `agent-send-failed` and this message plus the stderr
   * tail. When unset, a non-zero exit without any parsed event is treated the same way.
   */
  readonly failed?: string;
}

/** The adapter-specific part of a coding-agent adapter. */
export interface CliAgentSpec {
  /** How errors name the factory, e.g. `claudeCodeAgent()`. */
  readonly what: string;
  /** The default agent name, e.g. `claude-code`. */
  readonly defaultName: string;
  /** The command name of the CLI, e.g. `claude`. */
  readonly command: string;
  /** The npm package that provides the command, for `version`. */
  readonly npmPackage: string;
  /** Host variables passed by default (credentials and endpoint); redacted. */
  readonly credentialEnv: readonly string[];
  /** The variable that carries the endpoint, when the CLI reads one (set from `baseUrl`). */
  readonly baseUrlEnv?: string;
  /** Quiet/offline defaults; `env` entries of the options win. */
  readonly quietEnv: Readonly<Record<string, string>>;
  /**
   * Private directories created under the sandbox home, key → environment variable that points
   * to it (or `""` for a directory that only the hooks use).
   */
  readonly privateDirs: Readonly<Record<string, string>>;
  /** The declared coverage before the user's override. */
  readonly evidenceCoverage: EvidenceCoverage;
  /** Writes config files into the private directories before the run (optional). */
  prepare?(run: CliRun): Promise<void>;
  /** The argv after the command: the adapter places `run.settings.args` and the input. */
  argv(run: CliRun): string[];
  /** The CLI's standard input (optional; e.g. the input, when argv cannot carry it verbatim). */
  stdin?(run: CliRun): string | undefined;
  /** Maps the CLI's output to a turn. `durationMs` is the measured run time. */
  parse(result: CommandResult, run: CliRun): CliParsed;
  /** Adapter-specific identity added to the common one. */
  readonly identity?: JsonValue;
}

/** A `passEnv` variable is missing on the host. */
class CliConfigError extends Error {
  /** The Attempt error code; never retried. */
  readonly code = "agent-config-invalid";

  constructor(message: string) {
    super(message);
    this.name = "CliConfigError";
  }
}

/** Kept of stderr in a failure message. */
const STDERR_TAIL = 2000;

/**
 * Creates a `sandbox` agent whose sends run `spec`'s CLI. Validation is synchronous.
 *
 * @param spec The adapter-specific part.
 * @param settings The validated common options ({@link checkCliOptions}).
 * @param coverage The user's coverage override.
 * @returns The frozen agent.
 * @throws {DefinitionError} When the coverage override is malformed.
 */
export function defineCliAgent(
  spec: CliAgentSpec,
  settings: CliSettings,
  coverage: Partial<EvidenceCoverage> = {},
): Agent {
  const declared = resolveCoverage(
    { ...spec.evidenceCoverage, ...coverage },
    spec.what,
    "evidenceCoverage",
  );
  return defineAgent({
    name: settings.name,
    kind: "sandbox",
    identity: identityOf(spec, settings),
    evidenceCoverage: declared,
    send: (input, ctx) => sendOnce(spec, settings, input, ctx),
  });
}

/**
 * Creates the agent of an adapter that takes only the common options: {@link checkCliOptions}
 * then {@link defineCliAgent}.
 *
 * @throws {DefinitionError} On the first unknown or invalid option.
 */
export function commonCliAgent(spec: CliAgentSpec, options: unknown): Agent {
  const { settings, coverage } = checkCliOptions(spec, options);
  return defineCliAgent(spec, settings, coverage);
}

/** One run of the CLI: prepare, run under the Attempt signal, parse, classify. */
async function sendOnce(
  spec: CliAgentSpec,
  settings: CliSettings,
  input: TurnInput,
  ctx: AgentContext,
): Promise<Turn> {
  const sandbox = sandboxOf(spec, ctx);
  const run = await prepareRun(spec, settings, input, ctx, sandbox);
  await spec.prepare?.(run);
  const program = await resolveBinary(
    { command: spec.command, npmPackage: spec.npmPackage },
    settings,
    { sandbox, env: hostEnvOf(ctx), signal: ctx.signal },
  );
  const stdin = spec.stdin?.(run);
  const result = await sandbox.runCommand(program, spec.argv(run), {
    env: run.env,
    ...(stdin !== undefined ? { stdin } : {}),
    signal: ctx.signal,
    sensitiveValues: run.secrets,
  });
  if (ctx.signal.aborted) throw ctx.signal.reason;
  const redactor = new Redactor(run.secrets);
  const parsed = spec.parse(result, run);
  if (parsed.rejected !== undefined) {
    // Not captured: the retry starts afresh rather than resuming a session that already holds
    // the rejected input.
    throw new SendRejectedError(redactor.redact(parsed.rejected.message), {
      reason: "rate_limit",
      ...(parsed.rejected.retryAfterMs !== undefined
        ? { retryAfterMs: parsed.rejected.retryAfterMs }
        : {}),
    });
  }
  if (parsed.sessionId !== undefined) ctx.session.capture(parsed.sessionId);
  const noTurn = result.exitCode !== 0 && parsed.turn.events.length === 0;
  if (parsed.failed !== undefined || noTurn) {
    const what = parsed.failed ?? `${spec.command} exited with ${result.exitCode}`;
    const tail = result.stderr.trim().slice(-STDERR_TAIL);
    throw new Error(redactor.redact(tail === "" ? what : `${what}: ${tail}`));
  }
  return parsed.turn;
}

/** Reads host variables through the attempt runner's reader (`ctx.env`), never directly. */
export function hostEnvOf(ctx: AgentContext): (name: string) => string | undefined {
  const read = (ctx as { readonly env?: unknown }).env;
  return (name) => {
    if (typeof read !== "function") return undefined;
    const value: unknown = (read as (n: string) => unknown)(name);
    return typeof value === "string" ? value : undefined;
  };
}

/** The private root of each (sandbox, agent name), made once. */
const roots = new WeakMap<SandboxOps, Map<string, Promise<string>>>();

async function prepareRun(
  spec: CliAgentSpec,
  settings: CliSettings,
  input: TurnInput,
  ctx: AgentContext,
  sandbox: SandboxOps,
): Promise<CliRun> {
  const host = hostEnvOf(ctx);
  const env: Record<string, string> = { ...spec.quietEnv };
  const secrets: string[] = [];
  for (const name of [...spec.credentialEnv, ...settings.passEnv]) {
    const value = host(name);
    if (value === undefined) {
      // The CLI's own variables are optional; a variable the user asked for must exist.
      if (!settings.passEnv.includes(name) || spec.credentialEnv.includes(name)) continue;
      throw new CliConfigError(
        `Cannot pass "${name}" to ${spec.command}: the variable is not set on the host`,
      );
    }
    env[name] = value;
    if (value !== "") secrets.push(value);
  }
  const baseUrl = settings.baseUrl ??
    (spec.baseUrlEnv === undefined ? undefined : host(spec.baseUrlEnv));
  if (spec.baseUrlEnv !== undefined && baseUrl !== undefined) env[spec.baseUrlEnv] = baseUrl;
  const root = await homeOf(sandbox, settings.name, spec, ctx.signal);
  const dirs: Record<string, string> = {};
  for (const [key, variable] of Object.entries(spec.privateDirs)) {
    dirs[key] = `${root}/${key}`;
    if (variable !== "") env[variable] = dirs[key];
  }
  Object.assign(env, settings.env);
  return {
    input,
    ctx,
    sandbox,
    settings,
    model: settings.model ?? ctx.model,
    sessionId: ctx.session.id,
    baseUrl,
    dirs,
    env,
    secrets,
  };
}

/**
 * Makes the agent's private directories under the sandbox home once per sandbox (its home, or
 * the workdir's parent when the home is unset) and returns their root.
 */
function homeOf(
  sandbox: SandboxOps,
  name: string,
  spec: CliAgentSpec,
  signal: AbortSignal,
): Promise<string> {
  let byName = roots.get(sandbox);
  if (byName === undefined) roots.set(sandbox, byName = new Map());
  let root = byName.get(name);
  if (root === undefined) {
    const keys = Object.keys(spec.privateDirs).map((k) => `"$r/${k}"`).join(" ");
    const script = `h="$HOME"; [ -n "$h" ] && [ "$h" != / ] || h="$(cd .. && pwd)"; ` +
      `r="$h/.niceeval-agents/${name}"; mkdir -p "$r" ${keys} && printf %s "$r"`;
    root = sandbox.runShellOrThrow(script, { signal }).then((r) => r.stdout.trim());
    byName.set(name, root);
    root.catch(() => byName.delete(name));
  }
  return root;
}

function sandboxOf(spec: CliAgentSpec, ctx: AgentContext): SandboxOps {
  if (ctx.sandbox === undefined) {
    throw new Error(`Cannot run ${spec.command}: ${spec.what} runs only in a sandbox`);
  }
  return ctx.sandbox;
}

function identityOf(spec: CliAgentSpec, s: CliSettings): JsonValue {
  return {
    command: spec.command,
    model: s.model ?? null,
    bin: s.bin ?? null,
    version: s.version ?? null,
    args: [...s.args],
    env: { ...s.env },
    passEnv: [...s.passEnv],
    baseUrl: s.baseUrl ?? null,
    adapter: spec.identity ?? null,
  };
}
