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
  commandAgent,
  completeEvidenceCoverage,
  createSessionSlot,
  defineAgent,
  evidenceCoverage,
  openAICompatibleAgent,
  scriptedAgent,
  SendRejectedError,
} from "../agents/mod.ts";
export type {
  Agent,
  AgentContext,
  AgentDefinition,
  AgentSession,
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
