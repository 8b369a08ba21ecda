/** Runs one eval through the real per-Attempt runner with a fake control and fake time. */
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { AttemptError, AttemptResult } from "../../src/_shared/mod.ts";
import { createAttemptRunner } from "../../src/attempt/mod.ts";
import type { Agent } from "../../src/agents/mod.ts";
import { scriptedAgent } from "../../src/agents/mod.ts";
import {
  defineExperiment,
  type EvalDefinition,
  type EvalKind,
  type ExperimentOptions,
} from "../../src/discovery/mod.ts";
import type { PricingTable } from "../../src/expect/mod.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import { createFakeControl, type FakeControl, planFor } from "../_fakes/control.ts";
import { createSeededRandom } from "../_fakes/random.ts";

/** The repository root: call sites of assertions in these test files are relative to it. */
export const REPO_ROOT: string = dirname(dirname(dirname(fileURLToPath(import.meta.url))));

/** Options of {@link startEval}. */
export interface RunOptions {
  /** Default: a scripted agent answering "Say hello" with "Hello, niceeval!". */
  readonly agent?: Agent;
  /** Further experiment options (model, flags, classifyFailure, timeoutMs, …). */
  readonly experiment?: Omit<ExperimentOptions, "agent">;
  readonly control?: FakeControl;
  readonly clock?: FakeClock;
  readonly pricing?: PricingTable;
  readonly root?: string;
  readonly timeoutMs?: number | null;
}

/** A started Attempt. */
export interface Started {
  readonly result: Promise<AttemptResult>;
  readonly control: FakeControl;
  readonly clock: FakeClock;
}

/** A scripted agent for the common cases. */
export function helloAgent(): Agent {
  return scriptedAgent({
    script: [
      {
        when: "Say hello",
        reply: { text: "Hello, niceeval!", usage: { inputTokens: 10, outputTokens: 5 } },
      },
    ],
    fallback: { text: "I do not know." },
  });
}

/** Starts one Attempt of `evalDef`; the caller awaits `result` (and moves time if needed). */
export function startEval(
  evalDef: EvalDefinition<EvalKind, never>,
  options: RunOptions = {},
): Started {
  const experiment = defineExperiment({
    agent: options.agent ?? helloAgent(),
    ...options.experiment,
  });
  const { plan, slot } = planFor(
    experiment,
    evalDef,
    options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs },
  );
  const clock = options.clock ?? createFakeClock();
  const control = options.control ?? createFakeControl({ startedAt: clock.now() });
  const run = createAttemptRunner({
    plan,
    root: options.root ?? REPO_ROOT,
    clock,
    random: createSeededRandom(3),
    pricing: options.pricing ?? {},
  });
  return { result: run(slot, control), control, clock };
}

/** Runs one Attempt of `evalDef` to its result. */
export function runEval(
  evalDef: EvalDefinition<EvalKind, never>,
  options: RunOptions = {},
): Promise<AttemptResult> {
  return startEval(evalDef, options).result;
}

/** The diagnostic codes of a result, in order. */
export function diagnosticCodes(result: AttemptResult): string[] {
  return result.details.diagnostics.map((d) => d.code);
}

/** An Attempt error without `location` and `stack`, for tests whose subject is not the trace. */
export function untraced(
  error: AttemptError | null,
): Omit<AttemptError, "location" | "stack"> | null {
  if (error === null) return null;
  const { location: _location, stack: _stack, ...rest } = error;
  return rest;
}
