/**
 * `openAICompatibleAgent` (authoring.md §8.2): a real HTTP client for chat-completions endpoints.
 * Requests are non-streaming; the message history of each session line lives in a session slot,
 * so later sends continue the conversation. Tools with `execute` run on the host between rounds.
 */
import type { JsonValue } from "../_shared/mod.ts";
import { type ChatMessage, type CompletionReply, postCompletion } from "./_openai_http.ts";
import {
  type CheckedOpenAIOptions,
  checkOpenAIOptions,
  type OpenAICompatibleAgentOptions,
} from "./_openai_options.ts";
import { evidenceCoverage } from "./coverage.ts";
import { AGENT_NAME_REGEXP, defineAgent } from "./define_agent.ts";
import {
  answeredHistory,
  buildTurn,
  createDraft,
  recordReply,
  runCalls,
  startCall,
  type TurnDraft,
} from "./_openai_turn.ts";
import { createSessionSlot } from "./session.ts";
import type {
  Agent,
  AgentContext,
  AgentPreconditionFailure,
  SessionSlot,
  Turn,
  TurnInput,
} from "./types.ts";

/**
 * Reads one host environment variable. The attempt runner MAY put such a reader on the agent
 * context as `env`: agents never read the process environment themselves (STYLE.md §8), so a
 * context without it has no variables set.
 */
export type HostEnvReader = (name: string) => string | undefined;

/**
 * An agent's configuration cannot work (for example: no model). The attempt is `errored` with
 * code `agent-config-invalid`; it is never retried. Recognised by its `code`, so a copy of the
 * API or another built-in may throw its own error of the same shape.
 */
class AgentConfigError extends Error {
  /** The attempt error code. */
  readonly code = "agent-config-invalid";

  /**
   * @param message What is misconfigured.
   * @param options The original error as `cause`, if any.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AgentConfigError";
  }
}

const COVERAGE = evidenceCoverage({
  data: { status: "unavailable", reason: "chat completions return no structured output" },
});

/**
 * Creates an agent that talks to a chat-completions endpoint at `${baseUrl}/chat/completions`.
 *
 * @param opts The endpoint, key variable, model default, system message, tools and extras.
 * @returns A frozen `direct` agent whose identity holds no secrets.
 * @throws {DefinitionError} On the first invalid option.
 * @example
 * ```ts
 * import { openAICompatibleAgent } from "niceeval/adapter";
 * export const agent = openAICompatibleAgent({
 *   baseUrl: "https://api.example.com/v1",
 *   defaultModel: "small-model",
 *   tools: [{
 *     name: "get_weather",
 *     parameters: { type: "object", properties: { city: { type: "string" } } },
 *     execute: () => ({ sky: "sunny" }),
 *   }],
 * });
 * ```
 */
export function openAICompatibleAgent(opts: OpenAICompatibleAgentOptions): Agent {
  const options = checkOpenAIOptions(opts, AGENT_NAME_REGEXP);
  const history = createSessionSlot<readonly ChatMessage[]>(`openai:${options.name}`);
  return defineAgent({
    name: options.name,
    kind: "direct",
    identity: options.identity,
    evidenceCoverage: COVERAGE,
    send: (input, ctx) => runTurn(options, history, input, ctx),
    precondition: (ctx) => keyPrecondition(options.apiKeyEnv, ctx.env(options.apiKeyEnv ?? "")),
  });
}

/** The key variable must be set and non-empty, unless the endpoint needs no key (`null`). */
function keyPrecondition(
  apiKeyEnv: string | null,
  value: string | undefined,
): AgentPreconditionFailure | undefined {
  if (apiKeyEnv === null || (value !== undefined && value !== "")) return undefined;
  return {
    message: `its key variable ${apiKeyEnv} (apiKeyEnv) is not set`,
    hint: `set ${apiKeyEnv} in the environment or in .env, or set apiKeyEnv to the variable ` +
      "that holds the key (null for an endpoint that needs none)",
  };
}

async function runTurn(
  o: CheckedOpenAIOptions,
  slot: SessionSlot<readonly ChatMessage[]>,
  input: TurnInput,
  ctx: AgentContext,
): Promise<Turn> {
  const model = ctx.model ?? o.defaultModel;
  if (model === undefined) {
    throw new AgentConfigError(
      `Cannot send to agent "${o.name}": no model: set the experiment's model or defaultModel`,
    );
  }
  const apiKey = o.apiKeyEnv === null ? undefined : readEnv(ctx, o.apiKeyEnv);
  const draft = createDraft(ctx.session.get(slot) ?? [], input.text);
  for (let round = 0;; round++) {
    const reply = await postCompletion({
      agentName: o.name,
      url: `${o.baseUrl}/chat/completions`,
      headers: o.headers,
      apiKey,
      payload: payloadOf(o, model, draft.messages),
      signal: ctx.signal,
      first: round === 0,
    });
    recordReply(draft, reply);
    const stop = stopReason(o, reply, round);
    if (stop !== undefined) {
      for (const call of reply.calls) startCall(draft, call);
      return finish(ctx, slot, draft, stop);
    }
    if (reply.calls.length === 0) return finish(ctx, slot, draft, undefined);
    const pending = await runCalls(draft, reply.calls, { tools: o.tools, ctx });
    // A call without `execute` stays pending and ends the turn (rule 2).
    if (pending) return finish(ctx, slot, draft, undefined);
  }
}

/** Why the turn fails after this reply (rule 3), or `undefined` to go on. */
function stopReason(
  o: CheckedOpenAIOptions,
  reply: CompletionReply,
  round: number,
): string | undefined {
  if (reply.finishReason === "length" || reply.finishReason === "content_filter") {
    return `the model stopped early (finish_reason "${reply.finishReason}")`;
  }
  if (reply.calls.length > 0 && round >= o.maxToolRounds) {
    return `the model asked for more tool calls after ${o.maxToolRounds} tool round(s) (maxToolRounds)`;
  }
  return undefined;
}

function payloadOf(
  o: CheckedOpenAIOptions,
  model: string,
  messages: readonly ChatMessage[],
): Record<string, JsonValue> {
  const system: ChatMessage[] = o.system === undefined
    ? []
    : [{ role: "system", content: o.system }];
  const payload: Record<string, JsonValue> = {
    ...o.body,
    model,
    messages: [...system, ...messages] as unknown as JsonValue,
    stream: false,
  };
  if (o.tools.length > 0) {
    payload.tools = o.tools.map((tool) => ({ type: "function", function: toolFunction(tool) }));
  }
  return payload;
}

/**
 * One tool's `function` entry. Two returns rather than a conditional of two literals, which would
 * type `description` as optional-undefined: not JSON for a project that type-checks these sources
 * without exactOptionalPropertyTypes.
 */
function toolFunction(tool: CheckedOpenAIOptions["tools"][number]): JsonValue {
  if (tool.description === undefined) return { name: tool.name, parameters: tool.parameters };
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}

/** Builds the turn and commits the history; only a returned turn changes the session. */
function finish(
  ctx: AgentContext,
  slot: SessionSlot<readonly ChatMessage[]>,
  draft: TurnDraft,
  failure: string | undefined,
): Turn {
  ctx.session.set(slot, Object.freeze(answeredHistory(draft)));
  return buildTurn(draft, failure);
}

function readEnv(ctx: AgentContext, name: string): string | undefined {
  const env = (ctx as { readonly env?: unknown }).env;
  if (typeof env !== "function") return undefined;
  const value: unknown = (env as HostEnvReader)(name);
  return typeof value === "string" && value !== "" ? value : undefined;
}
