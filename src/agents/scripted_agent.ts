/**
 * `scriptedAgent` (authoring.md §8.1): a deterministic, keyless direct agent for the quickstart,
 * niceeval's own tests and benchmarks. It uses no network, no environment and no clock except
 * `delayMs`; the same script and inputs always produce the same turns.
 */
import { realClock, sleep } from "../_shared/mod.ts";
import { hasErrorName } from "../_shared/mod.ts";
import type { JsonValue } from "../_shared/mod.ts";
import {
  type CheckedScript,
  checkReply,
  checkScript,
  type ScriptedAgentOptions,
  type ScriptReply,
  type ScriptRule,
} from "./_script_options.ts";
import { resolveCoverage } from "./coverage.ts";
import { AGENT_NAME_REGEXP, defineAgent } from "./define_agent.ts";
import { SendRejectedError } from "./send_failure.ts";
import { createSessionSlot } from "./session.ts";
import type { Agent, AgentContext, SessionSlot, StreamEvent, Turn, TurnInput } from "./types.ts";

/** Per-session-line counters; replaced, never mutated, so a rejected try leaves no trace. */
interface LineState {
  /** Turns returned on this line. */
  readonly turns: number;
  /** Committed matches per rule index. */
  readonly matches: readonly number[];
}

/** The rule that answers, or `undefined` index for the fallback. */
interface Choice {
  readonly index: number | undefined;
  readonly reply: ScriptReply;
}

/**
 * Creates a scripted agent: rules are tried in order and the first match answers.
 *
 * @param opts The script, an optional fallback, name (default `"scripted"`) and coverage.
 * @returns A frozen `direct` agent whose identity is the script.
 * @throws {DefinitionError} On the first invalid option.
 * @example
 * ```ts
 * import { scriptedAgent } from "niceeval/adapter";
 * export const agent = scriptedAgent({
 *   script: [{ when: /weather/i, reply: { text: "It is sunny." } }],
 *   fallback: { text: "Hello!" },
 * });
 * ```
 */
export function scriptedAgent(opts: ScriptedAgentOptions): Agent {
  const script = checkScript(opts, AGENT_NAME_REGEXP);
  const evidenceCoverage = resolveCoverage(
    script.evidenceCoverage,
    "scriptedAgent()",
    "evidenceCoverage",
  );
  const slot = createSessionSlot<LineState>(`scripted:${script.name}`);
  return defineAgent({
    name: script.name,
    kind: "direct",
    identity: script.identity,
    evidenceCoverage,
    send: (input, ctx) => answer(script, slot, input, ctx),
  });
}

async function answer(
  script: CheckedScript,
  slot: SessionSlot<LineState>,
  input: TurnInput,
  ctx: AgentContext,
): Promise<Turn> {
  const state = ctx.session.get(slot) ?? { turns: 0, matches: [] };
  const choice = await choose(script, state, input, ctx);
  const { reply } = choice;
  // The delay comes first, so a scripted rejection can also be slow.
  if (reply.delayMs !== undefined) await sleep(realClock, reply.delayMs, { signal: ctx.signal });
  if (reply.reject && ctx.sendTry < (reply.reject.times ?? 1)) {
    const { reason, retryAfterMs } = reply.reject;
    throw new SendRejectedError(
      `Cannot send to scripted agent "${script.name}": try ${ctx.sendTry + 1} rejected (${reason})`,
      retryAfterMs === undefined ? { reason } : { reason, retryAfterMs },
    );
  }
  const matches = [...state.matches];
  if (choice.index !== undefined) matches[choice.index] = (matches[choice.index] ?? 0) + 1;
  if (reply.throw !== undefined) {
    // The match counts (an array reply moves on) but no turn is returned.
    ctx.session.set(slot, { turns: state.turns, matches });
    throw new Error(reply.throw);
  }
  const turnIndex = state.turns + 1;
  ctx.session.set(slot, { turns: turnIndex, matches });
  if (reply.sessionId !== undefined) ctx.session.capture(reply.sessionId);
  return buildTurn(reply, turnIndex);
}

async function choose(
  script: CheckedScript,
  state: LineState,
  input: TurnInput,
  ctx: AgentContext,
): Promise<Choice> {
  for (const [index, rule] of script.rules.entries()) {
    if (!matches(rule, index, input, ctx)) continue;
    return { index, reply: await pickReply(rule, index, state.matches[index] ?? 0, input, ctx) };
  }
  if (script.fallback) return { index: undefined, reply: script.fallback };
  // The code travels on the error too, so that `classifyFailure` can branch on it (§8.1).
  throw Object.assign(
    new Error(
      `Cannot answer with scripted agent "${script.name}": no rule matches input ${
        JSON.stringify(input.text)
      } and there is no fallback [scripted-no-match]`,
    ),
    { code: "scripted-no-match" },
  );
}

function matches(rule: ScriptRule, index: number, input: TurnInput, ctx: AgentContext): boolean {
  const { when } = rule;
  if (typeof when === "string") return input.text === when;
  if (typeof when === "function") {
    const result: unknown = when(input, ctx);
    if (typeof result !== "boolean") {
      throw new TypeError(
        `Cannot match script[${index}]: its when function must return a boolean, got ${typeof result}`,
      );
    }
    return result;
  }
  when.lastIndex = 0;
  return when.test(input.text);
}

async function pickReply(
  rule: ScriptRule,
  index: number,
  matched: number,
  input: TurnInput,
  ctx: AgentContext,
): Promise<ScriptReply> {
  const { reply } = rule;
  if (Array.isArray(reply)) return reply[Math.min(matched, reply.length - 1)]!;
  if (typeof reply !== "function") return reply as ScriptReply;
  const computed: unknown = await reply(input, ctx);
  try {
    return checkReply(computed, `script[${index}].reply`);
  } catch (error) {
    if (!hasErrorName(error, "DefinitionError")) throw error;
    throw new TypeError(
      `Cannot answer with script[${index}]: its reply function returned an invalid reply: ${
        (error as Error).message
      }`,
      { cause: error },
    );
  }
}

function buildTurn(reply: ScriptReply, turnIndex: number): Turn {
  const events: StreamEvent[] = [];
  if (reply.thinking !== undefined) events.push({ type: "thinking", text: reply.thinking });
  (reply.tools ?? []).forEach((tool, i) => {
    const operationId = `call-${turnIndex}-${i + 1}`;
    const input = structuredClone(tool.input ?? {}) as JsonValue;
    events.push({
      type: "operation.started",
      operationId,
      operation: { kind: "tool", name: tool.name, input },
    });
    const status = tool.status ?? "completed";
    if (status === "pending") return;
    events.push(
      tool.output === undefined
        ? { type: "operation.finished", operationId, kind: "tool", status }
        : {
          type: "operation.finished",
          operationId,
          kind: "tool",
          status,
          output: structuredClone(tool.output) as JsonValue,
        },
    );
  });
  if (reply.text !== undefined) {
    events.push({ type: "message", role: "assistant", text: reply.text });
  }
  if (reply.error !== undefined) events.push({ type: "error", message: reply.error });
  const turn: Turn = { events, status: reply.status ?? "completed" };
  if (reply.data !== undefined) turn.data = structuredClone(reply.data) as JsonValue;
  if (reply.usage !== undefined) turn.usage = { ...reply.usage };
  return turn;
}
