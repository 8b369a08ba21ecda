/**
 * `opencodeAgent` (docs/coding_agents.md "OpenCode"): each send runs `opencode run --format json`
 * once in the Attempt's sandbox with a private config and private data directories, the input on
 * its standard input; a later send of the same session continues it (`--session <id>`).
 */
import { check, checkOptions } from "../../_shared/mod.ts";
import type { Agent, CommandResult, Turn } from "../types.ts";
import {
  checkCliOptions,
  type CliAgentOptions,
  type CliAgentSpec,
  type CliParsed,
  type CliRun,
  defineCliAgent,
} from "./_cli_agent.ts";
import { OPENCODE_PROVIDER, opencodeConfig, type OpencodePricing } from "./_opencode_config.ts";
import { isPushback, readOpencodeStream } from "./_opencode_stream.ts";
import { streamCoverage } from "./_stream_common.ts";

/** Options of {@link opencodeAgent}. */
export interface OpencodeAgentOptions extends CliAgentOptions {
  /**
   * Prices of the model in USD per million tokens. With them the CLI computes each step's cost and
   * turns report `costUSD`; without them turns report tokens only (an experiment's `pricing` can
   * still price them). Cache prices default to the input price.
   * @default undefined
   */
  pricing?: {
    inputPerMTok: number;
    outputPerMTok: number;
    cacheReadPerMTok?: number;
    cacheWritePerMTok?: number;
  };
}

const WHAT = "opencodeAgent()";
const PRICE_KEYS = ["inputPerMTok", "outputPerMTok", "cacheReadPerMTok", "cacheWritePerMTok"];

/** A send that cannot start because no model is known. */
class OpencodeModelError extends Error {
  /** The Attempt error code; never retried. */
  readonly code = "agent-config-invalid";

  constructor(message: string) {
    super(message);
    this.name = "OpencodeModelError";
  }
}

// Every finished text, reasoning and tool part and every error reaches the stream, which is all
// a turn's events hold (niceeval records no deltas). Subagent (task) sessions and unknown parts
// lower a turn's coverage.
const COVERAGE = streamCoverage("OpenCode");

function specOf(pricing: OpencodePricing | undefined): CliAgentSpec {
  return {
    what: WHAT,
    defaultName: "opencode",
    command: "opencode",
    npmPackage: "opencode-ai",
    credentialEnv: ["OPENAI_API_KEY"],
    baseUrlEnv: "OPENAI_BASE_URL",
    quietEnv: Object.freeze({
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      NO_COLOR: "1",
    }),
    privateDirs: Object.freeze({
      config: "XDG_CONFIG_HOME",
      data: "XDG_DATA_HOME",
      state: "XDG_STATE_HOME",
      cache: "XDG_CACHE_HOME",
    }),
    evidenceCoverage: COVERAGE,
    prepare: async (run) => {
      if (run.model === undefined) {
        throw new OpencodeModelError(
          `Cannot run opencode: ${WHAT} needs a model; set its model option or the experiment's model`,
        );
      }
      const path = `${run.dirs.config}/niceeval-opencode.json`;
      await run.sandbox.writeText(
        path,
        opencodeConfig({ model: run.model, baseUrl: run.baseUrl, pricing }),
      );
      if (!("OPENCODE_CONFIG" in run.settings.env)) run.env.OPENCODE_CONFIG = path;
    },
    argv: argvOf,
    // With no message argument the CLI reads the message from its standard input, verbatim.
    stdin: (run) => run.input.text,
    parse: (result) => parseRun(result, pricing !== undefined),
    identity: pricing === undefined ? null : { pricing: { ...pricing } },
  };
}

/**
 * Creates an agent that runs the OpenCode CLI (`opencode run --format json`) in the Attempt's
 * sandbox, one run per send. Its private config declares one OpenAI-compatible provider (Chat
 * Completions) at `baseUrl` (else `OPENAI_BASE_URL`, else the public endpoint) with the key of
 * `OPENAI_API_KEY`; the model is the `model` option, else the experiment's model.
 *
 * @param options Model, prices, binary, extra arguments and environment; all optional.
 * @returns A frozen `sandbox` agent.
 * @throws {DefinitionError} On the first unknown or invalid option.
 * @example
 * ```ts
 * import { opencodeAgent } from "niceeval/adapter";
 * export const agent = opencodeAgent({
 *   model: "gpt-5.5",
 *   pricing: { inputPerMTok: 1.25, outputPerMTok: 10 },
 * });
 * ```
 */
export function opencodeAgent(options: OpencodeAgentOptions = {}): Agent {
  const spec0 = specOf(undefined);
  const { settings, coverage, rest } = checkCliOptions(spec0, options, ["pricing"]);
  const spec = specOf(checkPricing(rest.pricing));
  return defineCliAgent(spec, settings, coverage);
}

function checkPricing(value: unknown): OpencodePricing | undefined {
  if (value === undefined) return undefined;
  const o = checkOptions(
    value,
    { known: PRICE_KEYS, required: ["inputPerMTok", "outputPerMTok"] },
    WHAT,
    "pricing",
  );
  const out: Record<string, number> = {};
  for (const key of PRICE_KEYS) {
    if (o[key] !== undefined) out[key] = check.nonNegativeNumber(o[key], `pricing.${key}`, WHAT);
  }
  return Object.freeze(out) as unknown as OpencodePricing;
}

function argvOf(run: CliRun): string[] {
  const argv = ["run", "--format", "json", "--thinking", "--dangerously-skip-permissions"];
  argv.push("--model", `${OPENCODE_PROVIDER}/${run.model}`);
  if (run.sessionId !== undefined) argv.push("--session", run.sessionId);
  return [...argv, ...run.settings.args];
}

/**
 * The turn of one run: pushback before any step is a rejected send (`rate_limit`); a model-API
 * error (it has an HTTP status) or an exit without a reason is `agent-send-failed`; another error
 * the CLI reports (e.g. an output limit) fails the turn with its events.
 */
function parseRun(result: CommandResult, priced: boolean): CliParsed {
  const s = readOpencodeStream(result.stdout);
  const sessionId = s.sessionId === undefined ? {} : { sessionId: s.sessionId };
  const failure = s.failure;
  if (failure !== undefined && !s.worked && isPushback(failure)) {
    const retry = failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs };
    // Nothing happened: the retry starts over, on a new session unless this one was continued.
    return {
      turn: { events: s.events, status: "failed" },
      rejected: { message: failure.message, ...retry },
    };
  }
  if (failure?.statusCode !== undefined || (failure === undefined && result.exitCode !== 0)) {
    const message = failure?.message ?? `opencode exited with ${result.exitCode}`;
    return { ...sessionId, turn: { events: s.events, status: "failed" }, failed: message };
  }
  const turn: Turn = { events: s.events, status: failure === undefined ? "completed" : "failed" };
  const coverage: Turn["evidenceCoverage"] = {};
  if (s.usage !== undefined) {
    const { costUSD: _cost, ...tokens } = s.usage;
    turn.usage = priced ? s.usage : tokens;
  } else {
    coverage.usage = { status: "unavailable", reason: "the run reported no finished step" };
  }
  if (s.hiddenWork.length > 0) {
    const reason = "subagent (task) sessions are not in the stream";
    coverage.actions = { status: "partial", reason };
    coverage.usage ??= { status: "partial", reason };
  }
  if (s.unmapped.length > 0) {
    const reason = `the stream had entries niceeval does not map: ${s.unmapped.join(", ")}`;
    coverage.events = { status: "partial", reason };
    coverage.actions ??= { status: "partial", reason };
  }
  if (Object.keys(coverage).length > 0) turn.evidenceCoverage = coverage;
  return { ...sessionId, turn };
}
