/**
 * Builds the test context `t` (authoring.md §3) over an assertion recorder and the Attempt's
 * session lines. Every method delegates; the only state here is which lines exist.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { AssertionAuthoringError } from "../_shared/mod.ts";
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

const LATER_MEMBERS = [
  "sendFile",
  "requireInputRequest",
  "respond",
  "respondAll",
  "judge",
  "reasoningEffort",
];

/** Everything `t` needs. */
export interface ContextDeps extends LineDeps {
  readonly kind: Kind;
  readonly recorder: AssertionRecorder;
  readonly groups: AsyncLocalStorage<readonly string[]>;
}

/** Creates `t` and its session lines; `lines` grows with `t.newSession()`. */
export function createTestContext(
  deps: ContextDeps,
): { t: TestContext<Kind>; lines: SessionLine[] } {
  const lines: SessionLine[] = [new SessionLine(0, deps)];
  const main = lines[0]!;
  const allTurns = () => sortedTurns(lines);
  const scoped = deps.recorder.scoped(() => snapshot(deps, allTurns(), "attempt"));
  const t: Record<string | symbol, unknown> = {
    evaluationKind: deps.kind,
    ...scoped,
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
    skip: (reason: string) => {
      if (typeof reason !== "string" || reason.trim() === "") {
        throw deps.authoringError(
          new AssertionAuthoringError(
            "invalid-argument",
            "t.skip(reason) needs a non-empty reason",
          ),
        );
      }
      deps.state.skipReason ??= reason;
      throw Object.assign(new Error(`skipped: ${reason}`), {
        [SKIP_KEY]: true,
        name: "SkipSignal",
      });
    },
    group: <V>(title: string, body: () => V | PromiseLike<V>) => {
      const path = [...(deps.groups.getStore() ?? []), String(title)];
      return deps.groups.run(path, async () => await body());
    },
    check: (...args: unknown[]) => (deps.recorder.check as (...a: unknown[]) => unknown)(...args),
    score: (points: number) => deps.recorder.score(points),
  };
  defineConversation(t, main, deps);
  Object.defineProperties(t, {
    signal: { get: () => deps.signal, enumerable: true },
    model: { value: deps.model, enumerable: true },
    flags: { value: deps.flags, enumerable: true },
    usage: { get: () => sumUsage(allTurns().map((turn) => turn.usage)), enumerable: true },
    sandbox: {
      get: () => {
        throw deps.authoringError(
          new AssertionAuthoringError(
            "no-sandbox",
            "this Attempt runs without a sandbox; t.sandbox is not available",
          ),
        );
      },
    },
  });
  for (const name of LATER_MEMBERS) {
    t[name] = () => {
      throw deps.authoringError(
        new AssertionAuthoringError("not-supported", `t.${name} is not supported in this release`),
      );
    };
  }
  return { t: Object.freeze(t) as unknown as TestContext<Kind>, lines };
}

/** Adds `send`, `reply`, `sessionId` and `events` of `line` to `target`. */
function defineConversation(
  target: Record<string | symbol, unknown>,
  line: SessionLine,
  deps: ContextDeps,
): void {
  target.send = async (input: SendInput) =>
    turnHandle(await line.send(inputText(input, deps)), deps);
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
    ...deps.recorder.scoped(() => snapshot(deps, [...line.turns], "session")),
  };
  defineConversation(handle, line, deps);
  Object.defineProperty(handle, "usage", {
    get: () => sumUsage(line.turns.map((turn) => turn.usage)),
    enumerable: true,
  });
  return Object.freeze(handle) as unknown as SessionHandle<Kind>;
}

function turnHandle(turn: TurnRecord, deps: ContextDeps): TurnHandle<Kind> {
  const scoped = deps.recorder.scoped(() => snapshot(deps, [turn], "turn"));
  const handle: Record<string, unknown> = {
    ...scoped,
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
        `send input field "${extra[0]}" is not supported in this release`,
      ),
    );
  }
  throw deps.authoringError(
    new AssertionAuthoringError("invalid-argument", "send(input) takes a string or { text }"),
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
