/**
 * `commandAgent` (authoring.md §8.3): runs a command-line agent inside the Attempt's sandbox
 * through `ctx.sandbox.runCommand` (an argv, never a shell) and maps its output to a turn.
 */
import { check, checkOptions, DefinitionError, describe } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import { ndjsonTurn, textTurn } from "./_command_output.ts";
import { normalizeCoverage, resolveCoverage } from "./coverage.ts";
import { AGENT_NAME_REGEXP, defineAgent } from "./define_agent.ts";
import type {
  Agent,
  AgentContext,
  CommandResult,
  EvidenceCoverage,
  Turn,
  TurnInput,
} from "./types.ts";

/** A command: a fixed argv, or one built per turn. */
export type CommandAgentCommand =
  | readonly [string, ...string[]]
  | ((input: TurnInput, ctx: AgentContext) => readonly [string, ...string[]]);

/** Options of {@link commandAgent}. */
export interface CommandAgentOptions {
  /** Display and configuration identity. */
  name: string;
  /** Run as an argv without a shell. */
  command: CommandAgentCommand;
  /** How the turn's text reaches the command. @default {"argv"} */
  input?: "argv" | "stdin";
  /** How stdout becomes a turn. @default {"text"} */
  output?:
    | "text"
    | "ndjson"
    | ((r: CommandResult, input: TurnInput, ctx: AgentContext) => Turn | Promise<Turn>);
  /** Relative to the sandbox workdir. */
  cwd?: string;
  env?: Record<string, string>;
  /** Host variables (credentials) copied into the command's environment; redacted in evidence. */
  passEnv?: readonly string[];
  /** A shell script run once per Attempt as the agent's setup. */
  setup?: string;
  evidenceCoverage?: Partial<EvidenceCoverage>;
}

/** A `passEnv` variable is missing on the host (authoring.md §8.3 rule 4). */
class CommandAgentConfigError extends Error {
  /** The Attempt error code. */
  readonly code = "agent-config-invalid";

  constructor(message: string) {
    super(message);
    this.name = "CommandAgentConfigError";
  }
}

const WHAT = "commandAgent()";
const TABLE = {
  known: [
    "name",
    "command",
    "input",
    "output",
    "cwd",
    "env",
    "passEnv",
    "setup",
    "evidenceCoverage",
  ],
  required: ["name", "command"],
};
const INPUT_PLACEHOLDER = "{{input}}";
const ENV_NAME_REGEXP = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TEXT_COVERAGE: EvidenceCoverage = Object.freeze<EvidenceCoverage>({
  events: { status: "partial", reason: "only the final output is observed" },
  actions: { status: "unavailable", reason: "text output reports no tool calls" },
  messages: { status: "complete" },
  usage: { status: "unavailable", reason: "text output reports no usage" },
  status: { status: "complete" },
  data: { status: "unavailable", reason: "text output has no structured data" },
});

/**
 * Creates a sandbox agent that runs a command-line agent in the Attempt's sandbox.
 *
 * @param opts The command, how input and output travel, its environment and setup script.
 * @returns A frozen `sandbox` agent.
 * @throws {DefinitionError} On the first invalid option.
 * @example
 * ```ts
 * import { commandAgent } from "niceeval/adapter";
 * export const agent = commandAgent({ name: "editor", command: ["sh", "./edit.sh", "{{input}}"] });
 * ```
 */
export function commandAgent(opts: CommandAgentOptions): Agent {
  const o = checkOptions(opts, TABLE, WHAT);
  const name = check.string(o.name, "name", WHAT, { pattern: AGENT_NAME_REGEXP });
  const command = commandOf(o.command);
  const input = oneOf(o.input ?? "argv", ["argv", "stdin"], "input") as "argv" | "stdin";
  const output = typeof o.output === "function"
    ? o.output as Exclude<CommandAgentOptions["output"], string | undefined>
    : oneOf(o.output ?? "text", ["text", "ndjson"], "output") as "text" | "ndjson";
  const cwd = o.cwd === undefined
    ? undefined
    : check.string(o.cwd, "cwd", WHAT, { nonEmpty: true });
  const env = envOf(o.env);
  const passEnv = namesOf(o.passEnv);
  const setup = o.setup === undefined
    ? undefined
    : check.string(o.setup, "setup", WHAT, { nonEmpty: true });
  // Validated once; text output starts from its own lower coverage (rule 2).
  const declared = resolveCoverage(o.evidenceCoverage ?? {}, WHAT, "evidenceCoverage");
  const coverage = output === "text"
    ? normalizeCoverage((o.evidenceCoverage ?? {}) as Partial<EvidenceCoverage>, TEXT_COVERAGE)
    : declared;
  const settings: Settings = { command, input, output, cwd, env, passEnv, setup };
  return defineAgent({
    name,
    kind: "sandbox",
    identity: identityOf(settings),
    evidenceCoverage: coverage,
    setup: (ctx) => runSetup(settings, ctx),
    send: (turnInput, ctx) => send(settings, turnInput, ctx),
  });
}

interface Settings {
  readonly command: CommandAgentCommand;
  readonly input: "argv" | "stdin";
  readonly output: NonNullable<CommandAgentOptions["output"]>;
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string>>;
  readonly passEnv: readonly string[];
  readonly setup: string | undefined;
}

/** Requires every `passEnv` variable on the host, then runs the setup script (rule 4). */
async function runSetup(s: Settings, ctx: AgentContext): Promise<void> {
  const { env, secrets } = environment(s, ctx);
  if (s.setup === undefined) return;
  const r = await sandboxOf(ctx).runShell(s.setup, {
    env,
    signal: ctx.signal,
    sensitiveValues: secrets,
    ...(s.cwd !== undefined ? { cwd: s.cwd } : {}),
  });
  if (r.exitCode !== 0) {
    throw new Error(
      `Cannot set up the agent: its setup script exited with ${r.exitCode}: ${
        r.stderr.slice(-500)
      }`,
    );
  }
}

async function send(s: Settings, input: TurnInput, ctx: AgentContext): Promise<Turn> {
  const argv = typeof s.command === "function" ? checkArgv(s.command(input, ctx)) : s.command;
  const [program, ...args] = s.input === "argv" ? withInput(argv, input.text) : argv;
  const { env, secrets } = environment(s, ctx);
  const r = await sandboxOf(ctx).runCommand(program, args, {
    env,
    signal: ctx.signal,
    sensitiveValues: secrets,
    ...(s.cwd !== undefined ? { cwd: s.cwd } : {}),
    ...(s.input === "stdin" ? { stdin: input.text } : {}),
  });
  if (s.output === "text") return textTurn(r);
  if (s.output === "ndjson") return ndjsonTurn(r, ctx);
  return await s.output(r, input, ctx);
}

/** Puts the text at `{{input}}` inside any argument, else appends it as the last (rule 1). */
function withInput(argv: readonly [string, ...string[]], text: string): [string, ...string[]] {
  if (!argv.some((a) => a.includes(INPUT_PLACEHOLDER))) return [...argv, text];
  return argv.map((a) => a.replaceAll(INPUT_PLACEHOLDER, text)) as [string, ...string[]];
}

/** The command's environment: `env`, then the `passEnv` values read from the host. */
function environment(
  s: Settings,
  ctx: AgentContext,
): { env: Record<string, string>; secrets: string[] } {
  const read = (ctx as { readonly env?: unknown }).env;
  const env: Record<string, string> = { ...s.env };
  const secrets: string[] = [];
  for (const name of s.passEnv) {
    const value = typeof read === "function" ? (read as (n: string) => unknown)(name) : undefined;
    if (typeof value !== "string") {
      throw new CommandAgentConfigError(
        `Cannot pass "${name}" to the agent: the variable is not set on the host`,
      );
    }
    env[name] = value;
    if (value !== "") secrets.push(value);
  }
  return { env, secrets };
}

function sandboxOf(ctx: AgentContext) {
  if (ctx.sandbox === undefined) {
    throw new Error("Cannot run the command: commandAgent runs only in a sandbox");
  }
  return ctx.sandbox;
}

/** Identity of command, modes (functions as source), cwd, env, passEnv and setup (rule 5). */
function identityOf(s: Settings): JsonValue {
  const source = (v: unknown) => typeof v === "function" ? v.toString() : v as JsonValue;
  return {
    command: typeof s.command === "function" ? s.command.toString() : [...s.command],
    input: s.input,
    output: source(s.output),
    cwd: s.cwd ?? null,
    env: { ...s.env },
    passEnv: [...s.passEnv],
    setup: s.setup ?? null,
  };
}

function commandOf(value: unknown): CommandAgentCommand {
  if (typeof value === "function") return value as CommandAgentCommand;
  return Object.freeze(checkArgv(value, "command")) as readonly [string, ...string[]];
}

function checkArgv(value: unknown, path = "command()"): [string, ...string[]] {
  if (
    !Array.isArray(value) || value.length === 0 || value[0] === "" ||
    !value.every((a) => typeof a === "string")
  ) {
    throw new DefinitionError(
      "definition.invalid-value",
      path,
      `${WHAT}: ${path} must be a non-empty argv of strings, got ${describe(value)}`,
    );
  }
  return [...value] as [string, ...string[]];
}

function oneOf(value: unknown, allowed: readonly string[], path: string): string {
  if (typeof value !== "string" || !allowed.includes(value)) {
    throw new DefinitionError(
      "definition.invalid-value",
      path,
      `${WHAT}: ${path} must be ${allowed.map((a) => `"${a}"`).join(" or ")}, got ${
        describe(value)
      }`,
    );
  }
  return value;
}

function envOf(value: unknown): Readonly<Record<string, string>> {
  if (value === undefined) return Object.freeze({});
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new DefinitionError("definition.invalid-value", "env", `${WHAT}: env must be an object`);
  }
  for (const [k, v] of Object.entries(value)) {
    if (!ENV_NAME_REGEXP.test(k) || typeof v !== "string") {
      throw new DefinitionError(
        "definition.invalid-value",
        `env.${k}`,
        `${WHAT}: env.${k} must be a string variable`,
      );
    }
  }
  return Object.freeze({ ...value as Record<string, string> });
}

function namesOf(value: unknown): readonly string[] {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) {
    throw new DefinitionError(
      "definition.invalid-value",
      "passEnv",
      `${WHAT}: passEnv must be an array of variable names`,
    );
  }
  value.forEach((name, i) => {
    if (typeof name !== "string" || !ENV_NAME_REGEXP.test(name)) {
      throw new DefinitionError(
        "definition.invalid-value",
        `passEnv[${i}]`,
        `${WHAT}: passEnv[${i}] must be an environment variable name, got ${describe(name)}`,
      );
    }
  });
  return Object.freeze([...value]);
}
