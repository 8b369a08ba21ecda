/**
 * Builds the test context `t` (authoring.md §3) over an assertion recorder and the Attempt's
 * session lines. Every method delegates; the only state here is which lines exist.
 */
import type { AsyncLocalStorage } from "node:async_hooks";
import { AssertionAuthoringError, hasErrorName } from "../_shared/mod.ts";
import { sumUsage, type TurnRecord, worstCoverage } from "../agents/mod.ts";
import type { AssertionRecorder, EvidenceSnapshot } from "../expect/mod.ts";
import type { DiagnosticInput, ProgressUpdate, StreamEvent } from "../agents/mod.ts";
import { SessionLine } from "./session_line.ts";
import type { LineDeps } from "./session_line.ts";
import type { Kind, SendInput, SessionHandle, TestContext, TurnHandle } from "./types.ts";

/** The private signal `t.skip` throws; recognised by brand across API copies. */
export const SKIP_KEY: unique symbol = Symbol.for("niceeval.skip") as never;

/** True for the value `t.skip` throws. */
export function isSkipSignal(value: unknown): boolean {
  return typeof value === "object" && value !== null && SKIP_KEY in value;
}

/** Methods of `t` reserved for a later release: calling one throws `not-supported`. */
const LATER_METHODS = ["sendFile", "requireInputRequest", "respond", "respondAll", "judge"];
/** Properties of `t` reserved for a later release: reading one throws `not-supported`. */
const LATER_PROPERTIES = ["reasoningEffort"];

/** Everything `t` needs. */
export interface ContextDeps extends LineDeps {
  readonly kind: Kind;
  readonly recorder: AssertionRecorder;
  readonly groups: AsyncLocalStorage<readonly string[]>;
}

type Methods = Record<string, (...args: unknown[]) => unknown>;

/** Creates `t` and its session lines; `lines` grows with `t.newSession()`. */
export function createTestContext(
  deps: ContextDeps,
): { t: TestContext<Kind>; lines: SessionLine[] } {
  const lines: SessionLine[] = [new SessionLine(0, deps)];
  const allTurns = () => sortedTurns(lines);
  const recorder = deps.recorder;
  const t: Record<string | symbol, unknown> = {
    evaluationKind: deps.kind,
    ...withoutOrders(scopedMethods(deps, () => snapshot(deps, allTurns(), "attempt"))),
    newSession: () => {
      const line = new SessionLine(lines.length, deps);
      lines.push(line);
      return sessionHandle(line, deps);
    },
    progress: (u: ProgressUpdate) => deps.control.activity(`running eval · ${u.message}`),
    log: (message: string) => {
      deps.state.log(String(message));
      deps.control.activity(`running eval · ${message}`);
    },
    diagnostic: (d: DiagnosticInput) => deps.state.diagnostic(d),
    skip: (reason: string) => skip(deps, reason),
    group: <V>(title: string, body: () => V | PromiseLike<V>) => {
      const path = [...(deps.groups.getStore() ?? []), String(title)];
      return deps.groups.run(path, async () => await body());
    },
    check: guard(deps, (...args: unknown[]) => (recorder.check as Methods[string])(...args)),
    score: guard(deps, (points: unknown) => recorder.score(points as number)),
  };
  defineConversation(t, lines[0]!, deps);
  Object.defineProperties(t, {
    signal: { get: () => deps.signal, enumerable: true },
    model: { value: deps.model, enumerable: true },
    flags: { value: deps.flags, enumerable: true },
    usage: { get: () => sumUsage(allTurns().map((turn) => turn.usage)), enumerable: true },
    // Not enumerable: spreading `t` must not throw.
    sandbox: { get: () => deps.sandbox?.() ?? notAvailable(deps, "no-sandbox", "t.sandbox") },
  });
  for (const name of LATER_METHODS) {
    t[name] = () => notAvailable(deps, "not-supported", `t.${name}`);
  }
  for (const name of LATER_PROPERTIES) {
    Object.defineProperty(t, name, { get: () => notAvailable(deps, "not-supported", `t.${name}`) });
  }
  return { t: Object.freeze(t) as unknown as TestContext<Kind>, lines };
}

function skip(deps: ContextDeps, reason: unknown): never {
  if (typeof reason !== "string" || reason.trim() === "") {
    throw deps.authoringError(
      new AssertionAuthoringError(
        "invalid-argument",
        "Cannot skip: t.skip(reason) needs a non-empty reason",
      ),
    );
  }
  // Registered at the call: catching the signal does not undo the skip (rule 3.2.2). A skip
  // from code still running after the body settled comes too late, like a late assertion.
  if (!deps.state.bodySettled) deps.state.skipReason ??= reason;
  throw Object.assign(new Error(`Skipped: ${reason}`), { [SKIP_KEY]: true, name: "SkipSignal" });
}

function notAvailable(deps: ContextDeps, code: string, member: string): never {
  const message = code === "no-sandbox"
    ? "Cannot read t.sandbox: this Attempt runs without a sandbox"
    : `Cannot use ${member}: it is not supported in this release`;
  throw deps.authoringError(new AssertionAuthoringError(code, message));
}

/**
 * Wraps an assertion entry point so that an authoring error is recorded when it is thrown (rule
 * 3.5.8), before the test can catch it, and so that handles it returns do the same.
 */
function guard<A extends unknown[]>(
  deps: ContextDeps,
  fn: (...args: A) => unknown,
): (...args: A) => unknown {
  return (...args: A) => {
    try {
      const result = fn(...args);
      return isHandle(result) ? guardHandle(deps, result) : result;
    } catch (error) {
      if (hasErrorName(error, "AssertionAuthoringError")) {
        deps.authoringError(error as AssertionAuthoringError);
      }
      throw error;
    }
  };
}

function isHandle(value: unknown): value is Methods {
  return typeof value === "object" && value !== null &&
    typeof (value as { label?: unknown }).label === "function";
}

/** A handle whose methods record authoring errors at the call; chaining returns the wrapper. */
function guardHandle(deps: ContextDeps, handle: Methods): Methods {
  const wrapped: Methods = {};
  for (const [name, method] of Object.entries(handle)) {
    wrapped[name] = (...args: unknown[]) => {
      try {
        const result = method(...args);
        return result === handle ? wrapped : result;
      } catch (error) {
        if (hasErrorName(error, "AssertionAuthoringError")) {
          deps.authoringError(error as AssertionAuthoringError);
        }
        throw error;
      }
    };
  }
  return Object.freeze(wrapped);
}

/** The scoped (and order) assertions of one scope, guarded. */
function scopedMethods(deps: ContextDeps, read: () => EvidenceSnapshot): Methods {
  const out: Methods = {};
  for (const [name, method] of Object.entries(deps.recorder.scoped(read) as unknown as Methods)) {
    out[name] = guard(deps, method);
  }
  return out;
}

/** `t` has no order assertions: turns of different sessions have no common order (§3.2). */
function withoutOrders(methods: Methods): Methods {
  const { toolOrder: _tools, eventOrder: _events, ...rest } = methods;
  return rest;
}

/** Adds `send`, `reply`, `sessionId` and `events` of `line` to `target`. */
function defineConversation(
  target: Record<string | symbol, unknown>,
  line: SessionLine,
  deps: ContextDeps,
): void {
  target.send = (input: SendInput) => {
    const sent = (async () => turnHandle(await line.send(inputText(input, deps)), deps))();
    // The failure is recorded with the Attempt either way; a send nobody awaits (it was still in
    // flight when the body settled) must not surface as an unhandled rejection.
    sent.catch(() => undefined);
    return sent;
  };
  Object.defineProperties(target, {
    reply: { get: () => lastMessage(line.turns), enumerable: true },
    sessionId: { get: () => line.session.id, enumerable: true },
    events: {
      get: () => Object.freeze(line.turns.flatMap((turn) => turn.events)) as readonly StreamEvent[],
      enumerable: true,
    },
  });
}

function sessionHandle(line: SessionLine, deps: ContextDeps): SessionHandle<Kind> {
  const handle: Record<string | symbol, unknown> = {
    ...scopedMethods(deps, () => snapshot(deps, [...line.turns], "session")),
  };
  defineConversation(handle, line, deps);
  Object.defineProperty(handle, "usage", {
    get: () => sumUsage(line.turns.map((turn) => turn.usage)),
    enumerable: true,
  });
  return Object.freeze(handle) as unknown as SessionHandle<Kind>;
}

function turnHandle(turn: TurnRecord, deps: ContextDeps): TurnHandle<Kind> {
  const handle: Record<string, unknown> = {
    ...scopedMethods(deps, () => snapshot(deps, [turn], "turn")),
    events: turn.events,
    toolCalls: turn.toolCalls,
    status: turn.status,
    message: turn.message,
  };
  if (turn.data !== undefined) handle.data = turn.data;
  if (turn.usage !== undefined) handle.usage = turn.usage;
  return Object.freeze(handle) as unknown as TurnHandle<Kind>;
}

function snapshot(
  deps: ContextDeps,
  turns: readonly TurnRecord[],
  scope: EvidenceSnapshot["scope"],
): EvidenceSnapshot {
  return {
    turns,
    scope,
    declaredCoverage: worstCoverage(
      turns.map((turn) => turn.coverage),
      deps.agent.evidenceCoverage,
    ),
  };
}

function inputText(input: SendInput, deps: ContextDeps): string {
  if (typeof input === "string") return input;
  if (typeof input === "object" && input !== null && typeof input.text === "string") {
    const extra = Object.keys(input).filter((key) => key !== "text");
    if (extra.length === 0) return input.text;
    throw deps.authoringError(
      new AssertionAuthoringError(
        "not-supported",
        `Cannot send: input field "${extra[0]}" is not supported in this release`,
      ),
    );
  }
  throw deps.authoringError(
    new AssertionAuthoringError(
      "invalid-argument",
      "Cannot send: send(input) takes a string or { text }",
    ),
  );
}

function lastMessage(turns: readonly TurnRecord[]): string {
  for (let i = turns.length - 1; i >= 0; i--) {
    const events = turns[i]!.events;
    for (let j = events.length - 1; j >= 0; j--) {
      const event = events[j]!;
      if (event.type === "message" && event.role === "assistant" && event.text.trim() !== "") {
        return event.text;
      }
    }
  }
  return "";
}

/** Every completed turn of every line, in completion order. */
function sortedTurns(lines: readonly SessionLine[]): TurnRecord[] {
  return lines.flatMap((line) => line.turns).sort((a, b) =>
    a.endedAt - b.endedAt || a.session - b.session
  );
}
