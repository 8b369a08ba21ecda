/**
 * @module
 * The agent contract (authoring.md §7–§8.1): `defineAgent` and its brand check, the standard
 * event stream and its turn validation into immutable `TurnRecord`s, evidence coverage, session
 * state, send-failure classification, usage sums, and the built-in adapters (scripted, command,
 * OpenAI-compatible, and the coding-agent CLIs Claude Code, Codex and OpenCode).
 *
 * This domain never decides verdicts, never schedules, retries or waits for backoff, and never
 * writes to stdout: it describes what an agent did and whether a failure may be retried; the
 * `attempt` and `scheduler` domains act on that.
 */
export { defineAgent, resolveAgent } from "./define_agent.ts";
export { checkPrecondition } from "./preconditions.ts";
export type { PreconditionFailure } from "./preconditions.ts";
export {
  completeEvidenceCoverage,
  evidenceCoverage,
  lowerCoverage,
  worstCoverage,
} from "./coverage.ts";
export { createAgentSession, createSessionSlot } from "./session.ts";
export { classifyRejection, SendRejectedError } from "./send_failure.ts";
export type { SendRejectedErrorOptions } from "./send_failure.ts";
export { validateTurn } from "./validate_turn.ts";
export type { TurnValidationInfo } from "./validate_turn.ts";
export { sumUsage, validateUsage } from "./usage.ts";
export { scriptedAgent } from "./scripted_agent.ts";
export { commandAgent } from "./command_agent.ts";
export type { CommandAgentCommand, CommandAgentOptions } from "./command_agent.ts";
export type { ScriptedAgentOptions, ScriptReply, ScriptRule } from "./_script_options.ts";
export { openAICompatibleAgent } from "./openai_agent.ts";
export type { HostEnvReader } from "./openai_agent.ts";
export type { OpenAICompatibleAgentOptions, OpenAITool } from "./_openai_options.ts";
export { claudeCodeAgent } from "./coding/claude_code.ts";
export type { ClaudeCodeAgentOptions, CliAgentOptions } from "./coding/claude_code.ts";
export { codexAgent } from "./coding/codex.ts";
export type { CodexAgentOptions } from "./coding/codex.ts";
export { opencodeAgent } from "./coding/opencode.ts";
export type { OpencodeAgentOptions } from "./coding/opencode.ts";
export type {
  Agent,
  AgentContext,
  AgentDefinition,
  AgentSession,
  CommandResult,
  CoverageChannel,
  CoverageEntry,
  DiagnosticInput,
  ErrorEvent,
  EvidenceCoverage,
  MessageEvent,
  OperationFinishedEvent,
  OperationStartedEvent,
  ProgressUpdate,
  RejectionReason,
  ResolvedAgent,
  SessionSlot,
  StreamEvent,
  ThinkingEvent,
  ToolCall,
  Turn,
  TurnInput,
  TurnRecord,
  Usage,
} from "./types.ts";
