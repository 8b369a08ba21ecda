/**
 * `claudeCodeAgent` (docs/coding_agents.md): each send runs Claude Code once in print mode with
 * its JSON stream, in the Attempt's sandbox; a later send of the same session resumes it.
 */
import { createSessionSlot } from "../session.ts";
import type { Agent } from "../types.ts";
import {
  type CliAgentOptions,
  type CliAgentSpec,
  type CliRun,
  commonCliAgent,
} from "./_cli_agent.ts";
import { parseClaudeStream } from "./_claude_stream.ts";
import { streamCoverage } from "./_stream_common.ts";

/** Options of {@link claudeCodeAgent}: the common options of every coding-agent adapter. */
export type ClaudeCodeAgentOptions = CliAgentOptions;
export type { CliAgentOptions };

const WHAT = "claudeCodeAgent()";

/** Cumulative session cost after the previous send (the CLI reports totals on resume). */
const TOTAL_COST = createSessionSlot<number>("claude-code.total-cost");

// Every content block and tool call (subagents' included) reaches the stream as a whole message,
// which is all a turn's events hold (niceeval records no deltas, so none are asked for); tool exit
// codes appear only inside the result text, which becomes the call's output.
const COVERAGE = streamCoverage("Claude Code");

const SPEC: CliAgentSpec = {
  what: WHAT,
  defaultName: "claude-code",
  command: "claude",
  npmPackage: "@anthropic-ai/claude-code",
  credentialEnv: ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"],
  baseUrlEnv: "ANTHROPIC_BASE_URL",
  quietEnv: Object.freeze({
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_NON_ESSENTIAL_MODEL_CALLS: "1",
    // niceeval owns retries, so that its retry budget and ramp see the pushback.
    CLAUDE_CODE_MAX_RETRIES: "0",
    // Bypassing permissions is refused for root unless the CLI is told it is sandboxed.
    IS_SANDBOX: "1",
  }),
  privateDirs: Object.freeze({ config: "CLAUDE_CONFIG_DIR" }),
  evidenceCoverage: COVERAGE,
  argv: argvOf,
  parse: (result, run) => {
    const previous = run.ctx.session.get(TOTAL_COST);
    const parsed = parseClaudeStream(
      result.stdout,
      result.exitCode,
      previous === undefined ? {} : { previousTotalCostUSD: previous },
    );
    if (parsed.totalCostUSD !== undefined && parsed.rejected === undefined) {
      run.ctx.session.set(TOTAL_COST, parsed.totalCostUSD);
    }
    return parsed;
  },
};

/**
 * Creates an agent that runs Claude Code (`claude -p … --output-format stream-json`) in the
 * Attempt's sandbox, one run per send; the CLI's own credential variables pass through.
 *
 * @param options Model, binary, extra arguments and environment; all optional.
 * @returns A frozen `sandbox` agent.
 * @throws {DefinitionError} On the first unknown or invalid option.
 * @example
 * ```ts
 * import { claudeCodeAgent } from "niceeval/adapter";
 * export const agent = claudeCodeAgent({ model: "claude-sonnet-4-5" });
 * ```
 */
export function claudeCodeAgent(options: ClaudeCodeAgentOptions = {}): Agent {
  return commonCliAgent(SPEC, options);
}

function argvOf(run: CliRun): string[] {
  const argv = [
    "-p",
    run.input.text,
    "--output-format",
    "stream-json",
    "--verbose",
    "--dangerously-skip-permissions",
  ];
  if (run.model !== undefined) argv.push("--model", run.model);
  if (run.sessionId !== undefined) argv.push("--resume", run.sessionId);
  return [...argv, ...run.settings.args];
}
