/**
 * @module
 * `niceeval/adapter`: the agent contract (`defineAgent`, events, sessions, evidence coverage) and
 * the built-in agents.
 *
 * @example
 * ```ts
 * import { scriptedAgent } from "niceeval/adapter";
 * const agent = scriptedAgent({ script: [{ when: "Say hello", reply: { text: "Hello!" } }] });
 * ```
 */
export {
  claudeCodeAgent,
  codexAgent,
  commandAgent,
  completeEvidenceCoverage,
  createSessionSlot,
  defineAgent,
  evidenceCoverage,
  openAICompatibleAgent,
  opencodeAgent,
  scriptedAgent,
  SendRejectedError,
} from "../agents/mod.ts";
export type {
  Agent,
  AgentContext,
  AgentDefinition,
  AgentSession,
  ClaudeCodeAgentOptions,
  CliAgentOptions,
  CodexAgentOptions,
  CommandAgentCommand,
  CommandAgentOptions,
  CommandResult,
  CoverageEntry,
  DiagnosticInput,
  ErrorEvent,
  EvidenceCoverage,
  MessageEvent,
  OpenAICompatibleAgentOptions,
  OpenAITool,
  OpencodeAgentOptions,
  OperationFinishedEvent,
  OperationStartedEvent,
  ProgressUpdate,
  RejectionReason,
  ScriptedAgentOptions,
  ScriptReply,
  ScriptRule,
  SendRejectedErrorOptions,
  SessionSlot,
  StreamEvent,
  ThinkingEvent,
  ToolCall,
  Turn,
  TurnInput,
  Usage,
} from "../agents/mod.ts";
