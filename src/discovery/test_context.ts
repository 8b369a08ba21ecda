/**
 * The test context `t` and its handles, as eval authors see them (authoring.md §3): the contract
 * `defineEval` bodies are written against; the attempt domain implements it.
 */
import type { JsonValue } from "../_shared/mod.ts";
import type {
  DiagnosticInput,
  ProgressUpdate,
  StreamEvent,
  ToolCall,
  Usage,
} from "../agents/mod.ts";
import type {
  BooleanMatch,
  BoolHandle,
  DirectScoreHandle,
  MeasureHandle,
  OrderedAssertions,
  ScopedAssertions,
  ScoreMatch,
} from "../expect/mod.ts";
import type { EvalSandbox } from "../sandbox/mod.ts";

/** `pass` or `score`. */
export type Kind = "pass" | "score";

/** What `send` accepts; file attachments are not supported in this release. */
export type SendInput = string | { text: string };

/** A sandbox as an eval sees it (Sandboxes chapter); provided by sandbox attempts only. */
export type { EvalSandbox };

/** A conversation line: `t` itself (the main session) or a `t.newSession()` handle. */
export interface Conversation<K extends Kind> {
  /** Sends one turn; rejects with `AgentSendError` on a terminal agent failure. */
  send(input: SendInput): Promise<TurnHandle<K>>;
  /** Last non-blank assistant message text of this session, or "". */
  readonly reply: string;
  /** The id the adapter captured on this line. */
  readonly sessionId: string | undefined;
  /** Frozen snapshot of this session's events at read time. */
  readonly events: readonly StreamEvent[];
}

/** An immutable snapshot of one completed turn. */
export interface TurnHandle<K extends Kind = "pass">
  extends ScopedAssertions<K>, OrderedAssertions<K> {
  /** The user message, then the agent's events. */
  readonly events: readonly StreamEvent[];
  /** Tool occurrences in start order. */
  readonly toolCalls: readonly ToolCall[];
  readonly status: "completed" | "failed";
  /** Last non-blank assistant message text of this turn, or "". */
  readonly message: string;
  /** Structured output returned by the adapter. */
  readonly data?: JsonValue;
  /** Usage reported for the accepted try. */
  readonly usage?: Usage;
}

/** A further conversation line opened with `t.newSession()`. */
export interface SessionHandle<K extends Kind = "pass">
  extends Conversation<K>, ScopedAssertions<K>, OrderedAssertions<K> {
  /** Usage of this session only. */
  readonly usage: Usage;
}

/** The test context of `defineEval` (`K = "pass"`) and `defineScoreEval` (`K = "score"`). */
export interface TestContext<K extends Kind = "pass"> extends Conversation<K>, ScopedAssertions<K> {
  readonly evaluationKind: K;
  /** Opens a further, independent conversation line. */
  newSession(): SessionHandle<K>;
  /** Aborts on the deadline, on interruption, on early exit and when the body settled. */
  readonly signal: AbortSignal;
  /** The experiment's model. */
  readonly model: string | undefined;
  /** The experiment's flags. */
  readonly flags: Readonly<Record<string, JsonValue>>;
  /** Usage summed over every session. */
  readonly usage: Usage;
  /** The Attempt's sandbox; throws `no-sandbox` when the Attempt has none. */
  readonly sandbox: EvalSandbox;
  /** A transient status line; not persisted. */
  progress(u: ProgressUpdate): void;
  /** A persisted note; never changes the verdict. */
  diagnostic(d: DiagnosticInput): void;
  /** Same as `progress({ message })`; also kept in the Attempt's log. */
  log(message: string): void;
  /** Skips the Attempt with a non-empty reason; registers at the call. */
  skip(reason: string): never;
  /** Groups the assertions registered while `body` runs (display only). */
  group<V>(title: string, body: () => V | PromiseLike<V>): Promise<Awaited<V>>;
  /** Registers one value assertion with a Boolean match. */
  check<T, R>(value: T, match: BooleanMatch<T, R>): BoolHandle<K, R>;
  /** Registers one value measurement. */
  check<T>(value: T, match: ScoreMatch<T>): MeasureHandle<K>;
  /** Adds points directly (score evals only). */
  score(points: number): K extends "score" ? DirectScoreHandle : never;
}

/** The test context of `defineScoreEval`. */
export type ScoreTestContext = TestContext<"score">;
