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
  type DiagnosticInput,
  type ProgressUpdate,
  type ResolvedAgent,
  type Turn,
  type TurnRecord,
  validateTurn,
} from "../agents/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import type { FailureClass } from "../discovery/mod.ts";
import type { SandboxOps } from "../sandbox/mod.ts";
import type { AttemptControl } from "../scheduler/mod.ts";
import { classify, type FailureContext, failureOf, isFatal } from "./failure.ts";
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
  /** The Attempt's sandbox, once open (`t.sandbox`, `ctx.sandbox` of sandbox agents). */
  readonly sandbox?: () => SandboxOps | undefined;
  /** Reads one host environment variable (`ctx.env`; credentials of built-in agents). */
  readonly env?: (name: string) => string | undefined;
}

/** What to do after a failed try: retry it, or end the send with this message suffix. */
type Decision =
  | { readonly retry: true; readonly reason: string; readonly retryAfterMs: number }
  | {
    readonly retry: false;
    /** ` · retries exhausted (…)` or ` · attempt retry budget exhausted (…)`, or "". */
    readonly suffix: string;
    /** The experiment's classification when it was consulted (never twice per failure). */
    readonly classified?: { readonly found: FailureClass | undefined };
  };

/** One conversation line and its completed turns. */
export class SessionLine {
  readonly index: number;
  readonly session: AgentSession = createAgentSession();
  readonly turns: TurnRecord[] = [];
  readonly #deps: LineDeps;
  /** `ctx.progress`, `ctx.diagnostic` and `ctx.log`, shared by the contexts of this line. */
  #hooks: ContextHooks | undefined;
  #busy = false;

  constructor(index: number, deps: LineDeps) {
    this.index = index;
    this.#deps = deps;
  }

  /** An agent context for this line (`sendTry` as given; `signal` defaults to the Attempt's). */
  context(sendTry: number, signal: AbortSignal = this.#deps.signal): AgentContext {
    this.#hooks ??= contextHooks(this.#deps);
    return new LineContext(this, sendTry, signal, this.#deps, this.#hooks);
  }

  /** Sends one turn with retries; resolves with the validated turn or rejects with AgentSendError. */
  async send(text: string): Promise<TurnRecord> {
    if (this.#busy) {
      throw this.#deps.authoringError(
        new AssertionAuthoringError(
          "session-busy",
          "Cannot send: a send is already in flight on this session; await it first or use t.newSession()",
        ),
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
        const decision = this.#decide(error, sendTry);
        if (!decision.retry) throw this.#terminal(error, decision);
        d.state.retried("agent.send", decision.reason);
        await d.state.backoff(d.control, {
          reason: decision.reason,
          retry: sendTry + 1,
          retryAfterMs: decision.retryAfterMs,
        }, d.signal);
        continue;
      }
      return this.#accept(turn, text, startedAt);
    }
  }

  /**
   * Decides whether a failed try is retried (rule 7.7.2): a `SendRejectedError`, the agent's
   * `classifySendFailure`, then the experiment's `classifyFailure` with `retryable: true`. Aborted
   * sends and fatal errors are never retried; the limits of RETRY-2 end the loop.
   */
  #decide(error: unknown, sendTry: number): Decision {
    const d = this.#deps;
    if (d.signal.aborted || isFatal(error)) return { retry: false, suffix: "" };
    const proven = classifyRejection(error, d.agent);
    // A proven rejection is never passed to classifyFailure, even once its retries run out
    // (rule 6.2.5); any other failure is classified exactly once.
    const found = proven ? undefined : classify(d.failures, {
      phase: "agent.send",
      code: "agent-send-failed",
      message: errorMessage(error),
      error,
    });
    const reason = proven?.reason ??
      (found?.retryable === true ? String(found.reason) : undefined);
    const base = { retry: false as const, classified: { found } };
    if (reason === undefined) return { ...base, suffix: "" };
    const { sendMaxTries, attemptMaxRetries } = d.control.limits;
    if (sendTry + 1 >= sendMaxTries) {
      return { ...base, suffix: ` · retries exhausted (${sendTry + 1} tries, ${reason})` };
    }
    if (d.state.retriesUsed >= attemptMaxRetries) {
      return {
        ...base,
        suffix: ` · attempt retry budget exhausted (${attemptMaxRetries} retries, ${reason})`,
      };
    }
    return { retry: true, reason, retryAfterMs: proven?.retryAfterMs ?? 0 };
  }

  /** Records a terminal send failure (unless the signal aborted) and builds the rejection. */
  #terminal(error: unknown, decision: Decision & { retry: false }): AgentSendError {
    const d = this.#deps;
    const message = errorMessage(error) + decision.suffix;
    if (abortKind(d.signal.reason) === undefined) {
      d.state.fail(
        failureOf(
          d.failures,
          "agent.send",
          ownCodeOf(error) ?? "agent-send-failed",
          error,
          message,
          decision.classified,
        ),
      );
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
      const message = `Agent "${d.agent.name}" returned an invalid turn: ${checked.message}`;
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

/** The functions of `ctx`; own closures, so that they also work destructured. */
type ContextHooks = Pick<AgentContext, "progress" | "diagnostic" | "log">;

function contextHooks(d: LineDeps): ContextHooks {
  return {
    progress: (u: ProgressUpdate) => d.control.activity(`running eval · ${u.message}`),
    diagnostic: (x: DiagnosticInput) => d.state.diagnostic(x),
    log: (message: string) => {
      d.state.log(String(message));
      d.control.activity(`running eval · ${message}`);
    },
  };
}

/**
 * The frozen `ctx` of one try. Its data are own properties; the members reserved for a later
 * release (authoring.md §0, §7.5) are getters on the prototype that throw `not-supported`, so
 * that every context shares one shape.
 */
class LineContext implements AgentContext {
  readonly signal: AbortSignal;
  readonly session: AgentSession;
  readonly model: string | undefined;
  readonly flags: Readonly<Record<string, JsonValue>>;
  readonly experimentId: string;
  readonly evalId: string;
  readonly sendTry: number;
  declare readonly env?: (name: string) => string | undefined;
  readonly progress: ContextHooks["progress"];
  readonly diagnostic: ContextHooks["diagnostic"];
  readonly log: ContextHooks["log"];
  declare readonly sandbox?: SandboxOps;
  readonly #deps: LineDeps;

  constructor(
    line: SessionLine,
    sendTry: number,
    signal: AbortSignal,
    d: LineDeps,
    hooks: ContextHooks,
  ) {
    this.signal = signal;
    this.session = line.session;
    this.model = d.model;
    this.flags = d.flags;
    this.experimentId = d.experimentId;
    this.evalId = d.evalId;
    this.sendTry = sendTry;
    if (d.env) this.env = d.env;
    this.progress = hooks.progress;
    this.diagnostic = hooks.diagnostic;
    this.log = hooks.log;
    const sandbox = d.sandbox?.();
    if (sandbox !== undefined && d.agent.kind === "sandbox") this.sandbox = sandbox;
    this.#deps = d;
    Object.freeze(this);
  }

  get reasoningEffort(): never {
    return this.#notSupported("reasoningEffort");
  }

  get telemetry(): never {
    return this.#notSupported("telemetry");
  }

  #notSupported(name: string): never {
    throw this.#deps.authoringError(
      new AssertionAuthoringError("not-supported", `ctx.${name} is not supported in this release`),
    );
  }
}

/** Codes that a thrown error keeps as the Attempt's own (see {@link ownCodeOf}). */
const OWN_CODES: readonly string[] = ["agent-config-invalid", "agent-invalid-turn"];

/**
 * The code a thrown error keeps instead of `agent-send-failed` / `agent-setup-failed`: a
 * misconfigured agent (`agent-config-invalid`), output that is no turn (`agent-invalid-turn`) and
 * sandbox failures (`sandbox-*`, e.g. `sandbox-unsupported` for stdin; authoring.md §8.3).
 */
export function ownCodeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return undefined;
  return OWN_CODES.includes(code) || code.startsWith("sandbox-") ? code : undefined;
}
