/** Hand-built evidence fixtures and small drivers for the expect tests. */
import type { JsonValue } from "../../src/_shared/json.ts";
import type {
  CoverageChannel,
  EvidenceCoverage,
  StreamEvent,
  ToolCall,
  TurnRecord,
  Usage,
} from "../../src/agents/types.ts";
import {
  type AssertionRecorder,
  createAssertionRecorder,
  type EvidenceSnapshot,
  type Kind,
  type RecorderOptions,
  type ScopedAssertionMethods,
  type SealedAssertion,
} from "../../src/expect/mod.ts";

/** Coverage with the given channels lowered; the rest complete. */
export function coverage(
  lowered: Partial<Record<CoverageChannel, "partial" | "unavailable">> = {},
): EvidenceCoverage {
  const entry = (channel: CoverageChannel) => {
    const status = lowered[channel];
    return status === undefined ? { status: "complete" as const } : { status, reason: "test" };
  };
  return {
    events: entry("events"),
    actions: entry("actions"),
    messages: entry("messages"),
    usage: entry("usage"),
    status: entry("status"),
    data: entry("data"),
  };
}

/** A tool occurrence of a fixture turn. */
export interface ToolSpec {
  name: string;
  input?: JsonValue;
  status?: ToolCall["status"];
  output?: JsonValue;
}

/** Options of {@link turn}. */
export interface TurnSpec {
  index?: number;
  session?: number;
  input?: string;
  status?: "completed" | "failed";
  tools?: ToolSpec[];
  text?: string;
  error?: string;
  usage?: Usage;
  coverage?: EvidenceCoverage;
  /** Replaces the generated events entirely. */
  events?: StreamEvent[];
}

/** Builds a `TurnRecord` like the attempt domain does: user message, tools, text, error. */
export function turn(spec: TurnSpec = {}): TurnRecord {
  const index = spec.index ?? 1;
  const input = spec.input ?? "hi";
  const events: StreamEvent[] = [{ type: "message", role: "user", text: input }];
  const toolCalls: ToolCall[] = [];
  for (const [i, tool] of (spec.tools ?? []).entries()) {
    const operationId = `call-${index}-${i + 1}`;
    const status = tool.status ?? "completed";
    const toolInput = tool.input ?? {};
    events.push({
      type: "operation.started",
      operationId,
      operation: { kind: "tool", name: tool.name, input: toolInput },
    });
    if (status !== "pending") {
      events.push({
        type: "operation.finished",
        operationId,
        kind: "tool",
        status,
        ...(tool.output === undefined ? {} : { output: tool.output }),
      });
    }
    toolCalls.push({
      operationId,
      name: tool.name,
      input: toolInput,
      status,
      ...(tool.output === undefined || status === "pending" ? {} : { output: tool.output }),
    });
  }
  if (spec.text !== undefined) events.push({ type: "message", role: "assistant", text: spec.text });
  if (spec.error !== undefined) events.push({ type: "error", message: spec.error });
  return {
    index,
    session: spec.session ?? 0,
    input,
    status: spec.status ?? "completed",
    events: spec.events ?? events,
    toolCalls,
    message: spec.text ?? "",
    ...(spec.usage === undefined ? {} : { usage: spec.usage }),
    coverage: spec.coverage ?? coverage(),
    startedAt: 0,
    endedAt: 1,
  };
}

/** A snapshot of `turns` in `scope`. */
export function snapshot(
  turns: readonly TurnRecord[],
  scope: EvidenceSnapshot["scope"] = "turn",
  declaredCoverage: EvidenceCoverage = coverage(),
): EvidenceSnapshot {
  return { turns, scope, declaredCoverage };
}

/** A recorder with fixed group path and call site. */
export function recorder<K extends Kind = "pass">(
  kind: K = "pass" as K,
  overrides: Partial<RecorderOptions<K>> = {},
): AssertionRecorder<K> {
  return createAssertionRecorder<K>({
    kind,
    groupPath: () => [],
    callSite: () => "evals/a.eval.ts:1",
    estimateCost: () => ({ usd: undefined, complete: false }),
    ...overrides,
  });
}

/** Registers `t.check(value, match)` alone and returns its sealed entry after evaluation. */
export async function checkOne(value: unknown, match: unknown): Promise<SealedAssertion> {
  const r = recorder();
  r.check(value, match);
  await r.pending();
  return only(r.seal());
}

/** Registers one scoped assertion on `snap` and returns its sealed entry. */
export async function scopedOne(
  snap: EvidenceSnapshot,
  call: (scoped: ScopedAssertionMethods<"pass">) => unknown,
  options: Partial<RecorderOptions<"pass">> = {},
): Promise<SealedAssertion> {
  const r = recorder("pass", options);
  call(r.scoped(() => snap));
  await r.pending();
  return only(r.seal());
}

function only(entries: SealedAssertion[]): SealedAssertion {
  if (entries.length !== 1) throw new Error(`expected one entry, got ${entries.length}`);
  return entries[0] as SealedAssertion;
}
