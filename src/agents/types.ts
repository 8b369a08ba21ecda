/** Types of the agent contract (authoring.md §7). */
import type { JsonValue, StreamEvent, Usage } from "../_shared/mod.ts";
import type { CommandResult, SandboxOps } from "../sandbox/mod.ts";

export type {
  ErrorEvent,
  MessageEvent,
  OperationFinishedEvent,
  OperationStartedEvent,
  StreamEvent,
  ThinkingEvent,
  Usage,
} from "../_shared/mod.ts";

/** A transient status update. */
export interface ProgressUpdate {
  message: string;
  current?: number;
  total?: number;
}

/** A persisted note attached to an Attempt or Run; never changes a verdict. */
export interface DiagnosticInput {
  /** Kebab-case, `/^[a-z0-9][a-z0-9.-]{0,63}$/`. */
  code: string;
  level: "warning" | "error";
  message: string;
  data?: Record<string, JsonValue>;
  /** The same (code, dedupeKey) in one Attempt is stored once. */
  dedupeKey?: string;
}

/** The input of one turn. */
export interface TurnInput {
  readonly text: string;
}

/** How completely an adapter observes one channel. */
export type CoverageEntry =
  | { status: "complete" }
  | { status: "partial" | "unavailable"; reason: string };

/** Coverage of the six evidence channels (authoring.md §7.6). */
export interface EvidenceCoverage {
  events: CoverageEntry;
  actions: CoverageEntry;
  messages: CoverageEntry;
  usage: CoverageEntry;
  status: CoverageEntry;
  data: CoverageEntry;
}

/** The name of one evidence channel. */
export type CoverageChannel = keyof EvidenceCoverage;

/** What an adapter returns from `send`. */
export interface Turn {
  events: StreamEvent[];
  status: "completed" | "failed";
  data?: JsonValue;
  usage?: Usage;
  evidenceCoverage?: Partial<EvidenceCoverage>;
}

/** A typed, adapter-private slot of session state; distinct by identity, not by name. */
export interface SessionSlot<T> {
  readonly name: string;
  /** Phantom field carrying the slot's value type. */
  readonly __type?: T;
}

/** State of one conversation line, shared by that line's sends. */
export interface AgentSession {
  /** The server-side id captured on this line. */
  readonly id: string | undefined;
  /** First non-undefined id wins; later calls are ignored. */
  capture(id: string | undefined): void;
  get<T>(slot: SessionSlot<T>): T | undefined;
  set<T>(slot: SessionSlot<T>, value: T): void;
  /** Reads and clears a slot. */
  take<T>(slot: SessionSlot<T>): T | undefined;
}

/** Result of a command run in a sandbox (Sandboxes chapter §2.3). */
export type { CommandResult };

/** What an agent sees of the Attempt while it works (authoring.md §7.5). */
export interface AgentContext {
  readonly signal: AbortSignal;
  readonly session: AgentSession;
  readonly model: string | undefined;
  readonly flags: Readonly<Record<string, JsonValue>>;
  readonly experimentId: string;
  readonly evalId: string;
  /** 0 on the first physical try of a send, then 1, 2, 3. */
  readonly sendTry: number;
  /** The Attempt's sandbox; present iff the agent's kind is `"sandbox"` (Sandboxes chapter). */
  readonly sandbox?: SandboxOps;
  progress(u: ProgressUpdate): void;
  diagnostic(d: DiagnosticInput): void;
  log(message: string): void;
}

/** What an agent's `precondition` sees: once per experiment, before any of its Attempts. */
export interface AgentPreconditionContext {
  readonly experimentId: string;
  /** The experiment's model, if it sets one. */
  readonly model: string | undefined;
  /** Reads a host environment variable (the process environment and the project's `.env`). */
  env(name: string): string | undefined;
}

/** Why an agent cannot run at all, and how to fix it. */
export interface AgentPreconditionFailure {
  /** What is missing, e.g. `OPENAI_API_KEY is not set`. */
  readonly message: string;
  /** How to fix it, e.g. which option or variable to set. */
  readonly hint?: string;
}

/**
 * A check that needs no Attempt, run once per experiment before any of its Attempts starts: a
 * returned failure (or a throw) halts the experiment; its other Attempts never start.
 */
export type AgentPrecondition = (
  ctx: AgentPreconditionContext,
) => AgentPreconditionFailure | undefined | Promise<AgentPreconditionFailure | undefined>;

/** Reason of a send that was proven rejected before the agent accepted it. */
export type RejectionReason = "rate_limit" | "network";

/** What `defineAgent` accepts (authoring.md §7.1). */
export interface AgentDefinition {
  /** `/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/`; display and configuration identity. */
  name: string;
  /** Default `"direct"`; `"sandbox"` runs against the Attempt's sandbox. */
  kind?: "direct" | "sandbox";
  /** Static settings that change behaviour; part of the configuration identity; no secrets. */
  identity?: JsonValue;
  evidenceCoverage: EvidenceCoverage;
  send(input: TurnInput, ctx: AgentContext): Promise<Turn>;
  setup?(ctx: AgentContext): Promise<void>;
  teardown?(ctx: AgentContext): Promise<void>;
  classifySendFailure?(
    error: unknown,
  ): { reason: RejectionReason; retryAfterMs?: number } | undefined;
  /**
   * Checked once per experiment before any of its Attempts starts (e.g. a key variable is set):
   * a returned failure halts the experiment with its message and hint (docs/bail.md).
   */
  precondition?: AgentPrecondition;
}

/** An agent as users hold it: opaque and branded. */
export interface Agent {
  readonly name: string;
  readonly kind: "direct" | "sandbox";
}

/** The validated, frozen form of an agent that niceeval drives. */
export interface ResolvedAgent extends Agent {
  readonly identity: JsonValue;
  readonly evidenceCoverage: EvidenceCoverage;
  send(input: TurnInput, ctx: AgentContext): Promise<Turn>;
  setup?(ctx: AgentContext): Promise<void>;
  teardown?(ctx: AgentContext): Promise<void>;
  classifySendFailure?(
    error: unknown,
  ): { reason: RejectionReason; retryAfterMs?: number } | undefined;
  precondition?: AgentPrecondition;
}

/** One tool occurrence of a turn, in start order. */
export interface ToolCall {
  readonly operationId: string;
  readonly name: string;
  readonly input: JsonValue;
  /** `pending` = started, never finished. */
  readonly status: "pending" | "completed" | "failed" | "rejected";
  readonly output?: JsonValue;
}

/**
 * A validated, immutable turn as niceeval keeps it: the evidence every scoped assertion reads.
 * `events` starts with the user message niceeval recorded, then the adapter's events.
 */
export interface TurnRecord {
  /** 1-based index of the turn on its session line. */
  readonly index: number;
  /** 0 for the main session (`t`), then 1, 2, … per `t.newSession()`. */
  readonly session: number;
  readonly input: string;
  readonly status: "completed" | "failed";
  readonly events: readonly StreamEvent[];
  readonly toolCalls: readonly ToolCall[];
  readonly message: string;
  readonly data?: JsonValue;
  readonly usage?: Usage;
  /** Declared coverage lowered by the turn's own `evidenceCoverage`. */
  readonly coverage: EvidenceCoverage;
  readonly startedAt: number;
  readonly endedAt: number;
}
