/**
 * `codexAgent` (docs/coding_agents.md "Codex"): each send runs `codex exec --json` once in the
 * Attempt's sandbox with a private `CODEX_HOME`; a later send of the same session resumes the
 * thread (`codex exec resume <id>`).
 */
import { createSessionSlot } from "../session.ts";
import type { Agent, CommandResult, Turn, Usage } from "../types.ts";
import {
  type CliAgentOptions,
  type CliAgentSpec,
  type CliParsed,
  type CliRun,
  commonCliAgent,
} from "./_cli_agent.ts";
import { codexConfig } from "./_codex_config.ts";
import { CODEX_PUSHBACK_REGEXP, readCodexStream, turnUsage } from "./_codex_stream.ts";
import { streamCoverage } from "./_stream_common.ts";

/** Options of {@link codexAgent}: the common options of every coding-agent adapter. */
export type CodexAgentOptions = CliAgentOptions;

const WHAT = "codexAgent()";

/**
 * The thread's usage total after the previous send of the line (the CLI reports totals on
 * resume); `null` when a send ended without one, so the next turn's share is unknown.
 */
const THREAD_TOTAL = createSessionSlot<Usage | null>("codex.thread-total");

// Every message, reasoning item, tool item and error reaches the stream as a whole item, which is
// all a turn's events hold (niceeval records no deltas); plan updates are no event kind. An item
// type the mapping does not know lowers the turn's events and actions.
const COVERAGE = streamCoverage("Codex");

const SPEC: CliAgentSpec = {
  what: WHAT,
  defaultName: "codex",
  command: "codex",
  npmPackage: "@openai/codex",
  credentialEnv: ["OPENAI_API_KEY"],
  baseUrlEnv: "OPENAI_BASE_URL",
  quietEnv: Object.freeze({ NO_COLOR: "1" }),
  privateDirs: Object.freeze({ home: "CODEX_HOME" }),
  evidenceCoverage: COVERAGE,
  prepare: async (run) => {
    const config = codexConfig({ model: run.model, baseUrl: run.baseUrl });
    await run.sandbox.writeText(`${run.dirs.home}/config.toml`, config);
  },
  argv: argvOf,
  parse: parseRun,
};

/**
 * Creates an agent that runs the Codex CLI (`codex exec --json`) in the Attempt's sandbox, one
 * run per send. Its private config talks the Responses API to `baseUrl` (else `OPENAI_BASE_URL`,
 * else the public endpoint) with the key of `OPENAI_API_KEY`; the CLI's own request retries are
 * off so that niceeval's retries and ramp see a rate limit.
 *
 * @param options Model, binary, extra arguments and environment; all optional.
 * @returns A frozen `sandbox` agent.
 * @throws {DefinitionError} On the first unknown or invalid option.
 * @example
 * ```ts
 * import { codexAgent } from "niceeval/adapter";
 * export const agent = codexAgent({ model: "gpt-5.5" });
 * ```
 */
export function codexAgent(options: CodexAgentOptions = {}): Agent {
  return commonCliAgent(SPEC, options);
}

function argvOf(run: CliRun): string[] {
  const argv = [
    "exec",
    "--json",
    "--skip-git-repo-check",
    "--dangerously-bypass-approvals-and-sandbox",
    "-C",
    run.sandbox.workdir,
    // niceeval owns retries, so that its retry budget and ramp see the pushback.
    "-c",
    "model_providers.niceeval.request_max_retries=0",
    "-c",
    "model_providers.niceeval.stream_max_retries=0",
    ...run.settings.args,
  ];
  if (run.sessionId !== undefined) argv.push("resume", run.sessionId);
  // `--` keeps an input that starts with "-" from being read as a flag.
  return [...argv, "--", run.input.text];
}

/**
 * The turn of one run. Codex fails a turn only when the model API or the stream failed, so any
 * failure is a failed send: rejected (`rate_limit`) when it was pushback before any item, else
 * `agent-send-failed` with the message; only a completed turn is returned.
 */
function parseRun(result: CommandResult, run: CliRun): CliParsed {
  const s = readCodexStream(result.stdout);
  const session = run.ctx.session;
  const completed = result.exitCode === 0 && s.failure === undefined &&
    s.totalUsage !== undefined;
  if (!completed) {
    if (!s.worked && s.failure !== undefined && CODEX_PUSHBACK_REGEXP.test(s.failure)) {
      // Nothing happened: the retry starts over, on a new thread unless this one was resumed.
      return { turn: { events: s.events, status: "failed" }, rejected: { message: s.failure } };
    }
    // What the thread spent before the failure is unknown: a later turn cannot subtract it.
    if (s.worked) session.set(THREAD_TOTAL, null);
    return {
      ...(s.threadId === undefined ? {} : { sessionId: s.threadId }),
      turn: { events: s.events, status: "failed" },
      failed: failedText(s, result),
    };
  }
  const total = s.totalUsage as Usage;
  const previous = session.get(THREAD_TOTAL);
  session.set(THREAD_TOTAL, total);
  const turn: Turn = { events: s.events, status: "completed" };
  const coverage: Turn["evidenceCoverage"] = {};
  if (run.sessionId === undefined) turn.usage = total;
  else if (previous !== undefined && previous !== null) turn.usage = turnUsage(total, previous);
  else {
    coverage.usage = {
      status: "unavailable",
      reason: "the previous send of this thread reported no total to subtract",
    };
  }
  if (s.unmapped.length > 0) {
    const reason = `the stream had entries niceeval does not map: ${s.unmapped.join(", ")}`;
    coverage.events = { status: "partial", reason };
    coverage.actions = { status: "partial", reason };
  }
  if (Object.keys(coverage).length > 0) turn.evidenceCoverage = coverage;
  return { ...(s.threadId === undefined ? {} : { sessionId: s.threadId }), turn };
}

function failedText(s: { readonly failure?: string }, result: CommandResult): string {
  return s.failure ?? `codex exited with ${result.exitCode} before the turn completed`;
}
