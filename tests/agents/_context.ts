/** A minimal {@link AgentContext} for agent tests, recording what the agent reports. */
import type { JsonValue } from "../../src/_shared/json.ts";
import {
  type AgentContext,
  type AgentSession,
  createAgentSession,
  type DiagnosticInput,
  type ProgressUpdate,
} from "../../src/agents/mod.ts";

/** What a test may set on the context. */
export interface TestContextOptions {
  session?: AgentSession;
  signal?: AbortSignal;
  sendTry?: number;
  model?: string;
  flags?: Record<string, JsonValue>;
}

/** The context plus what the agent reported through it. */
export interface RecordingContext extends AgentContext {
  readonly progressed: ProgressUpdate[];
  readonly diagnostics: DiagnosticInput[];
}

/** Creates a context on a fresh session unless one is given. */
export function createTestContext(options: TestContextOptions = {}): RecordingContext {
  const progressed: ProgressUpdate[] = [];
  const diagnostics: DiagnosticInput[] = [];
  return {
    signal: options.signal ?? new AbortController().signal,
    session: options.session ?? createAgentSession(),
    model: options.model,
    flags: options.flags ?? {},
    experimentId: "local",
    evalId: "greet/hello",
    sendTry: options.sendTry ?? 0,
    progressed,
    diagnostics,
    progress: (u) => progressed.push(u),
    diagnostic: (d) => diagnostics.push(d),
    log: (message) => progressed.push({ message }),
  };
}
