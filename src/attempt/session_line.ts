/**
 * One conversation line (`t` or a `t.newSession()` handle) and its sends, including the retry
 * loop of authoring.md §7.7 and scheduling.md §17. The scheduler owns the backoff slot handling.
 */
import { abortKind } from "../_shared/mod.ts";
import type { Clock } from "../_shared/mod.ts";
import { AgentSendError, AssertionAuthoringError, errorMessage } from "../_shared/mod.ts";
import type { Random } from "../_shared/mod.ts";
import {
  type AgentContext,
  type AgentSession,
  classifyRejection,
  createAgentSession,
  type ResolvedAgent,
  type Turn,
  type TurnRecord,
  validateTurn,
} from "../agents/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import type { AttemptControl } from "../scheduler/mod.ts";
import { classify, type FailureContext, failureOf } from "./failure.ts";
import type { AttemptState } from "./state.ts";

/** What every line of one Attempt shares. */
export interface LineDeps {
  readonly agent: ResolvedAgent;
  readonly model: string | undefined;
  readonly flags: Readonly<Record<string, JsonValue>>;
  readonly experimentId: string;
  readonly evalId: string;
  readonly signal: AbortSignal;
  readonly control: AttemptControl;
  readonly clock: Clock;
  readonly random: Random;
  readonly state: AttemptState;
  readonly failures: FailureContext;
  /** Reports an authoring error; it errors the Attempt even if caught. */
  authoringError(error: AssertionAuthoringError): AssertionAuthoringError;
}

/** One conversation line and its completed turns. */
export class SessionLine {
  readonly index: number;
  readonly session: AgentSession = createAgentSession();
  readonly turns: TurnRecord[] = [];
  readonly #deps: LineDeps;
  #busy = false;

  constructor(index: number, deps: LineDeps) {
    this.index = index;
    this.#deps = deps;
  }

  /** An agent context for this line (`sendTry` as given). */
  context(sendTry: number): AgentContext {
    const d = this.#deps;
    return Object.freeze({
      signal: d.signal,
      session: this.session,
      model: d.model,
      flags: d.flags,
      experimentId: d.experimentId,
      evalId: d.evalId,
      sendTry,
      progress: (u: { message: string }) => d.control.activity(`running eval · ${u.message}`),
      diagnostic: (
        x: {
          code: string;
          level: "warning" | "error";
          message: string;
          data?: Record<string, JsonValue>;
          dedupeKey?: string;
        },
      ) => d.state.diagnostic(x),
      log: (message: string) => {
        d.state.log(message);
        d.control.activity(`running eval · ${message}`);
      },
    });
  }

  /** Sends one turn with retries; resolves with the validated turn or rejects with AgentSendError. */
  async send(text: string): Promise<TurnRecord> {
    if (this.#busy) {
      throw this.#deps.authoringError(
        new AssertionAuthoringError("session-busy", "a send is already in flight on this session"),
      );
    }
    this.#busy = true;
    try {
      return await this.#sendWithRetries(text);
    } finally {
      this.#busy = false;
    }
  }

  async #sendWithRetries(text: string): Promise<TurnRecord> {
    const d = this.#deps;
    for (let sendTry = 0;; sendTry++) {
      const startedAt = d.clock.now();
      let turn: Turn;
      try {
        d.state.turnCount++;
        turn = await d.agent.send(Object.freeze({ text }), this.context(sendTry));
      } catch (error) {
        const delay = this.#retryDelay(error, sendTry);
        if (delay === undefined) throw this.#terminal(error, sendTry);
        d.state.retried("agent.send", delay.reason);
        await d.control.backoff({
          reason: delay.reason,
          retry: sendTry + 1,
          retryAfterMs: delay.retryAfterMs,
        });
        continue;
      }
      return this.#accept(turn, text, startedAt);
    }
  }

  /** The retry of a rejected try, or undefined when the failure is terminal. */
  #retryDelay(
    error: unknown,
    sendTry: number,
  ): { reason: string; retryAfterMs: number } | undefined {
    const d = this.#deps;
    if (d.signal.aborted) return undefined;
    const proven = classifyRejection(error, d.agent);
    const classified = proven ? undefined : classify(d.failures, {
      phase: "agent.send",
      code: "agent-send-failed",
      message: errorMessage(error),
      error,
    });
    const reason = proven?.reason ?? (classified?.retryable ? classified.reason : undefined);
    if (reason === undefined) return undefined;
    const { sendMaxTries, attemptMaxRetries } = d.control.limits;
    if (sendTry + 1 >= sendMaxTries || d.state.retriesUsed >= attemptMaxRetries) {
      this.#exhaustion = {
        reason,
        budget: d.state.retriesUsed >= attemptMaxRetries && sendTry + 1 < sendMaxTries,
      };
      return undefined;
    }
    return { reason, retryAfterMs: proven?.retryAfterMs ?? 0 };
  }

  #exhaustion: { reason: string; budget: boolean } | undefined;

  #terminal(error: unknown, sendTry: number): AgentSendError {
    const d = this.#deps;
    const kind = abortKind(d.signal.reason);
    let message = errorMessage(error);
    const exhausted = this.#exhaustion;
    this.#exhaustion = undefined;
    if (exhausted) {
      message += exhausted.budget
        ? ` · attempt retry budget exhausted (${d.control.limits.attemptMaxRetries} retries, ${exhausted.reason})`
        : ` · retries exhausted (${sendTry + 1} tries, ${exhausted.reason})`;
    }
    if (kind === undefined) {
      d.state.fail(failureOf(d.failures, "agent.send", "agent-send-failed", error, message));
    }
    return new AgentSendError("agent-send-failed", message, { cause: error });
  }

  #accept(turn: Turn, text: string, startedAt: number): TurnRecord {
    const d = this.#deps;
    const endedAt = d.clock.now();
    const checked = validateTurn(turn, {
      declared: d.agent.evidenceCoverage,
      index: this.turns.length + 1,
      session: this.index,
      input: text,
      startedAt,
      endedAt,
    });
    if (!checked.ok) {
      const message = `invalid turn at ${checked.path}: ${checked.message}`;
      d.state.fail({
        code: "agent-invalid-turn",
        phase: "agent.send",
        message,
        scope: "attempt",
        error: undefined,
      });
      throw new AgentSendError("agent-invalid-turn", message);
    }
    const record = checked.record;
    this.turns.push(record);
    d.state.turns.push(record);
    d.state.turnLogs.push({
      sessionId: this.session.id ?? null,
      session: this.index,
      index: record.index,
      input: text,
      status: record.status,
      events: record.events,
      usage: record.usage ?? null,
      startedAt,
      endedAt,
    });
    return record;
  }
}
