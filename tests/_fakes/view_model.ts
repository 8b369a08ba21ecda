/**
 * A realistic, deterministic `niceeval view` model for tests, browser tests and benchmarks:
 * experiments with several Runs each (history), evals with tags and both kinds, varied verdicts,
 * slots without an Attempt, failing assertions with expected/received and a source line, tool
 * calls, logs, an errored Attempt with a stack, diagnostics and a comparison.
 */
import type {
  ViewAttempt,
  ViewComparison,
  ViewEval,
  ViewExperiment,
  ViewModel,
  ViewRun,
  ViewSlot,
} from "../../src/report/view/model.ts";
import type { SlotCounts } from "../../src/report/show_runs.ts";
import { createSeededRandom } from "./random.ts";

/** Options of {@link fakeViewModel}. */
export interface FakeViewModelOptions {
  readonly experiments: number;
  readonly evals: number;
  /** Ordinals per eval and experiment; default 1. */
  readonly attemptsPerEval?: number;
  /** Published Runs per experiment (the newest holds the results); default 4. */
  readonly runsPerExperiment?: number;
  /** Include a comparison of the first experiment's two newest Runs; default true. */
  readonly compare?: boolean;
  /** Seed of the deterministic random source; default 1. */
  readonly seed?: number;
  /** Put `</script>`, `<!--` and U+2028 / U+2029 into a log line and a description. */
  readonly hostileText?: boolean;
}

const BASE_MS = Date.UTC(2026, 10, 20, 9, 0, 0);
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const AGENTS = ["claude-code", "codex", "opencode", "ai-sdk"];
const MODELS = ["claude-sonnet-4-5", "gpt-5-mini", "qwen3-coder", null];
const AREAS = ["math", "tools", "refactor", "docs", "search", "shell"];
const TAGS = ["smoke", "tools", "slow", "regression", "flaky"];
const PASSING = new Set(["passed", "scored"]);

type Rand = () => number;
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Builds the model; the same options always give the same model. */
export function fakeViewModel(options: FakeViewModelOptions): ViewModel {
  const random = createSeededRandom(options.seed ?? 1);
  const rand: Rand = () => random.next();
  const perEval = Math.max(1, options.attemptsPerEval ?? 1);
  const runsPer = Math.max(1, options.runsPerExperiment ?? 4);
  const evals = fakeEvals(options.evals, options.hostileText ?? false);
  const slots: ViewSlot[] = [];
  const attempts: ViewAttempt[] = [];
  const runs: ViewRun[] = [];
  const experiments: ViewExperiment[] = [];
  for (let x = 0; x < options.experiments; x++) {
    const id = x === 0 ? "baseline" : `${AGENTS[x % AGENTS.length]}-${x}`;
    const agent = AGENTS[x % AGENTS.length]!;
    const model = MODELS[x % MODELS.length]!;
    const quality = 0.68 + 0.27 * ((x * 7) % 5) / 4;
    const history = Array.from({ length: runsPer }, (_, i) => ({
      runId: random.uuid(),
      startedAt: BASE_MS + (i * 86_400 + x * 600) * 1000,
      quality: Math.max(
        0.2,
        Math.min(0.98, quality - (runsPer - 1 - i) * 0.06 + (rand() - 0.5) * 0.1),
      ),
    }));
    const current = history.at(-1)!;
    const mine: ViewSlot[] = [];
    const mineAttempts: ViewAttempt[] = [];
    for (const ev of evals) {
      for (let ordinal = 0; ordinal < perEval; ordinal++) {
        const ctx = { rand, random, ev, ordinal, experimentId: id, agent, model };
        const noAttempt = rand() < 0.02;
        const verdict = noAttempt ? null : pickVerdict(rand, ev.kind, current.quality);
        const attempt = verdict === null
          ? null
          : fakeAttempt({ ...ctx, runId: current.runId, startedAtMs: current.startedAt, verdict });
        if (attempt) {
          if (options.hostileText && attempts.length === 0 && mineAttempts.length === 0) {
            (attempt.logs as unknown[]).push({
              at: attempt.startedAt,
              text: "rendered <b>ok</b></script><!-- \u2028 line \u2029 para",
            });
          }
          mineAttempts.push(attempt);
        }
        mine.push({
          experimentId: id,
          evalId: ev.id,
          ordinal,
          state: attempt ? "executed" : ordinal % 2 === 0 ? "not-dispatched" : "missing",
          reason: attempt ? null : "new",
          runId: attempt ? current.runId : null,
          verdict,
          attempt: attempt ? attempts.length + mineAttempts.length - 1 : null,
        });
      }
    }
    slots.push(...mine);
    attempts.push(...mineAttempts);
    const runDocs = history.map((h, i) =>
      fakeRun(rand, h, { id, agent, model }, i === history.length - 1 ? mine : null, evals)
    );
    runs.push(...runDocs);
    experiments.push(
      experimentOf({ id, agent, model }, mine, mineAttempts, evals, [current.runId]),
    );
  }
  runs.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
  const compare = (options.compare ?? true) && experiments.length > 0
    ? fakeComparison(rand, runs.filter((r) => r.experimentId === experiments[0]!.id), slots, evals)
    : null;
  return {
    format: "niceeval.view",
    schemaVersion: 1,
    generatedAt: new Date(BASE_MS + runsPer * 86_400_000).toISOString(),
    title: "acme-evals",
    scope: "project-current",
    experiments,
    evals,
    slots,
    attempts,
    runs,
    compare,
    problems: [{
      code: "unpublished-run",
      message: "Run 0badc0de was never published (the process stopped); its Attempts are ignored",
    }],
  };
}

function fakeEvals(count: number, hostile: boolean): ViewEval[] {
  return Array.from({ length: count }, (_, i): ViewEval => {
    const area = AREAS[i % AREAS.length]!;
    const tags = [TAGS[i % TAGS.length]!, ...(i % 3 === 0 ? [TAGS[(i + 2) % TAGS.length]!] : [])];
    return {
      id: `${area}/case-${String(i + 1).padStart(3, "0")}`,
      kind: i % 5 === 4 ? "score" : "pass",
      tags,
      description: hostile && i === 0
        ? "Checks </script><script>alert(1)</script> and <!-- comments -->"
        : i % 4 === 0
        ? `The agent solves ${area} task ${i + 1}`
        : null,
    };
  });
}

function pickVerdict(rand: Rand, kind: "pass" | "score", quality: number): string {
  const r = rand();
  if (r < 0.04) return "errored";
  if (r < 0.06) return "skipped";
  if (r < 0.07) return "interrupted";
  if (kind === "score") return "scored";
  return r < 0.07 + quality * 0.93 ? "passed" : "failed";
}

interface AttemptContext {
  readonly rand: Rand;
  readonly random: { uuid(): string };
  readonly ev: ViewEval;
  readonly ordinal: number;
  readonly experimentId: string;
  readonly agent: string;
  readonly model: string | null;
  readonly runId: string;
  readonly startedAtMs: number;
  readonly verdict: string;
}

function locator(rand: Rand): string {
  let out = "@1";
  for (let i = 0; i < 12; i++) out += CROCKFORD[Math.floor(rand() * 32)];
  return out;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function fakeAttempt(c: AttemptContext): ViewAttempt {
  const { rand, verdict } = c;
  const start = c.startedAtMs + Math.floor(rand() * 3_600_000);
  const durationMs = Math.round(800 + rand() * rand() * 240_000);
  const input = Math.round(500 + rand() * 20_000);
  const output = Math.round(50 + rand() * 3_000);
  const usage = { inputTokens: input, outputTokens: output };
  const score = verdict === "scored" ? Math.round(rand() * 100) / 100 : null;
  const errored = verdict === "errored";
  const at = (frac: number) => iso(start + Math.round(durationMs * frac));
  return {
    locator: locator(rand),
    attemptId: c.random.uuid(),
    experimentId: c.experimentId,
    evalId: c.ev.id,
    ordinal: c.ordinal,
    runId: c.runId,
    originRunId: c.runId,
    agent: c.agent,
    model: c.model,
    verdict,
    score,
    outcome: errored ? "errored" : verdict === "interrupted" ? "interrupted" : "completed",
    startedAt: iso(start),
    durationMs,
    usage,
    tokens: input + output,
    costUSD: Math.round((input * 3 + output * 15) / 1000) / 1000,
    error: errored
      ? {
        code: "agent-error",
        phase: "agent.send",
        message: "connection reset by peer while reading the agent's response",
        location: "evals/x.eval.ts:12:7",
        stack: "Error: connection reset by peer\n    at send (evals/x.eval.ts:12:7)\n" +
          "    at run (evals/helpers.ts:40:3)",
      }
      : null,
    assertions: fakeAssertions(c, score),
    turns: fakeTurns(c, at, usage),
    phases: verdict === "passed" ? [] : [
      ...(errored ? [{ phase: "sandbox.create", startedAt: at(0), endedAt: at(0.1) }] : []),
      { phase: "eval", startedAt: at(0.1), endedAt: at(0.95) },
    ],
    diagnostics: rand() < 0.05
      ? [{
        code: "agent-retry",
        level: "warning",
        message: "agent.send retried once: rate limited",
        data: { count: 1 },
      }]
      : [],
    logs: [
      ...(errored ? [{ at: at(0.2), text: `workspace ready for ${c.ev.id}` }] : []),
      ...(verdict === "failed" ? [{ at: at(0.8), text: "diff:\n- 42\n+ 41" }] : []),
    ],
  };
}

function fakeAssertions(c: AttemptContext, score: number | null): Record<string, unknown>[] {
  // The fields the page reads; the Record's entries carry a few more (result, met, …).
  const base = { group: [], gate: true };
  const out: Record<string, unknown>[] = [{
    ...base,
    criterion: "turn succeeded",
    matcher: "succeeded",
    label: null,
    status: c.verdict === "errored" ? "errored" : "passed",
    source: "evals/x.eval.ts:9",
  }];
  if (c.verdict === "failed") {
    out.push({
      ...base,
      criterion: 'includes("42")',
      matcher: "includes",
      label: "answer mentions 42",
      group: ["final answer"],
      status: "failed",
      expected: "42",
      received: "The answer is 41.",
      reason: "text does not include the expected value",
      source: "evals/x.eval.ts:12",
    });
  } else if (c.verdict === "passed" && c.ordinal % 4 === 1) {
    out.push({
      ...base,
      criterion: 'calledTool("read_file")',
      matcher: "calledTool",
      label: null,
      status: "passed",
      source: "evals/x.eval.ts:14",
    });
  }
  if (score !== null) {
    out.push({
      ...base,
      entry: "measurement",
      criterion: "similarity to the reference",
      matcher: "similarity",
      label: null,
      status: "passed",
      measurement: score,
      atLeast: 0.5,
      gate: false,
      score: { points: 1, earned: score },
      source: "evals/x.eval.ts:20",
    });
  }
  return out;
}

function fakeTurns(
  c: AttemptContext,
  at: (frac: number) => string,
  usage: Record<string, number>,
): Record<string, unknown>[] {
  const opId = `op-${c.ordinal}-1`;
  const failed = c.verdict === "errored";
  // Most Attempts pass with a short transcript; the others get the whole story.
  const rich = c.verdict !== "passed" && c.verdict !== "scored";
  const tool = rich || c.rand() < 0.1;
  const events: Record<string, unknown>[] = !tool ? [] : [
    ...(rich ? [{ type: "thinking", text: "Read the input file first." }] : []),
    {
      type: "operation.started",
      operationId: opId,
      operation: { kind: "tool", name: "read_file", input: { path: "input.txt" } },
    },
    {
      type: "operation.finished",
      operationId: opId,
      kind: "tool",
      status: "completed",
      output: { content: "numbers: 19, 23" },
    },
  ];
  if (failed) events.push({ type: "error", message: "stream closed before the turn ended" });
  else {
    events.push({
      type: "message",
      role: "assistant",
      text: c.verdict === "failed" ? "The answer is 41." : "The answer is 42.",
    });
  }
  return [{
    sessionId: null,
    session: 0,
    index: 0,
    input: "Add the numbers in input.txt.",
    status: failed ? "failed" : "completed",
    events,
    usage: rich ? usage : null,
    startedAt: at(0.1),
    endedAt: at(0.9),
  }];
}

function emptyCounts(): Mutable<SlotCounts> {
  return { passed: 0, failed: 0, errored: 0, skipped: 0, scored: 0, interrupted: 0, notRun: 0 };
}

function countSlots(slots: readonly ViewSlot[]): SlotCounts {
  const counts = emptyCounts();
  for (const s of slots) {
    const v = s.verdict;
    if (v !== null && v in counts) counts[v as keyof SlotCounts]++;
    else if (s.state === "interrupted") counts.interrupted++;
    else counts.notRun++;
  }
  return counts;
}

function passRateOf(slots: readonly ViewSlot[], evals: readonly ViewEval[]): number | null {
  const pass = new Set(evals.filter((e) => e.kind === "pass").map((e) => e.id));
  const mine = slots.filter((s) => pass.has(s.evalId));
  return mine.length === 0 ? null : mine.filter((s) => s.verdict === "passed").length / mine.length;
}

function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function experimentOf(
  e: { id: string; agent: string; model: string | null },
  slots: readonly ViewSlot[],
  attempts: readonly ViewAttempt[],
  evals: readonly ViewEval[],
  runIds: readonly string[],
): ViewExperiment {
  const scoreIds = new Set(evals.filter((v) => v.kind === "score").map((v) => v.id));
  const durations = attempts.map((a) => a.durationMs).sort((a, b) => a - b);
  const scored = attempts.filter((a) => a.score !== null);
  const scoreSlots = slots.filter((s) => scoreIds.has(s.evalId)).length;
  return {
    ...e,
    runIds,
    slots: slots.length,
    counts: countSlots(slots),
    passRate: passRateOf(slots, evals),
    passSlots: slots.length - scoreSlots,
    meanScore: scored.length === 0
      ? null
      : scored.reduce((sum, a) => sum + (a.score ?? 0), 0) / scored.length,
    scoreSlots,
    durationP50Ms: quantile(durations, 0.5),
    durationP95Ms: quantile(durations, 0.95),
    tokens: attempts.reduce((sum, a) => sum + (a.tokens ?? 0), 0),
    costUSD: attempts.reduce((sum, a) => sum + (a.costUSD ?? 0), 0),
  };
}

function fakeRun(
  rand: Rand,
  h: { runId: string; startedAt: number; quality: number },
  e: { id: string; agent: string; model: string | null },
  current: readonly ViewSlot[] | null,
  evals: readonly ViewEval[],
): ViewRun {
  const slots = current ?? evals.map((ev, i): ViewSlot => ({
    experimentId: e.id,
    evalId: ev.id,
    ordinal: 0,
    state: "executed",
    reason: null,
    runId: h.runId,
    verdict: pickVerdict(rand, ev.kind, h.quality),
    attempt: i,
  }));
  const failedEval = slots.find((s) => s.verdict === "errored")?.evalId;
  return {
    runId: h.runId,
    experimentId: e.id,
    agent: e.agent,
    model: e.model,
    startedAt: iso(h.startedAt),
    completedAt: iso(h.startedAt + 3_900_000),
    completion: "completed",
    slots: slots.length,
    counts: countSlots(slots),
    passRate: passRateOf(slots, evals),
    diagnostics: failedEval
      ? [{
        code: "build-failed",
        level: "error",
        message: "image build failed: npm install exited with code 1",
        evalId: failedEval,
      }]
      : [],
  };
}

function tally(verdicts: readonly (string | null)[], scores: readonly (number | null)[]) {
  const known = scores.filter((s): s is number => s !== null);
  return {
    passed: verdicts.filter((v) => v !== null && PASSING.has(v)).length,
    total: verdicts.length,
    meanScore: known.length === 0 ? null : known.reduce((a, b) => a + b, 0) / known.length,
  };
}

function fakeComparison(
  rand: Rand,
  expRuns: readonly ViewRun[],
  slots: readonly ViewSlot[],
  evals: readonly ViewEval[],
): ViewComparison | null {
  const [b, a] = expRuns;
  if (!a || !b) return null;
  const counts: Record<string, number> = {
    fixed: 0,
    regressed: 0,
    "still-failing": 0,
    "still-passing": 0,
    new: 0,
    gone: 0,
  };
  const byEval = new Map<string, ViewSlot[]>();
  for (const s of slots) {
    if (s.runId !== b.runId) continue;
    const list = byEval.get(s.evalId) ?? [];
    if (list.length === 0) byEval.set(s.evalId, list);
    list.push(s);
  }
  const rows = evals.map((ev, i) => {
    const mine = byEval.get(ev.id) ?? [];
    const after = i === evals.length - 1 && i > 2
      ? null
      : tally(mine.map((s) => s.verdict), mine.map(() => ev.kind === "score" ? 0.7 : null));
    const before = i === 1 && evals.length > 3
      ? null
      : tally([rand() < 0.7 ? "passed" : "failed"], [ev.kind === "score" ? 0.6 : null]);
    const passing = (t: { passed: number; total: number }) => t.passed === t.total;
    const state = before === null
      ? "new"
      : after === null
      ? "gone"
      : passing(before)
      ? passing(after) ? "still-passing" : "regressed"
      : passing(after)
      ? "fixed"
      : "still-failing";
    counts[state]!++;
    return { evalId: ev.id, state, a: before, b: after };
  });
  const side = (r: ViewRun) => ({
    runId: r.runId,
    experimentId: r.experimentId,
    startedAt: r.startedAt,
  });
  return {
    format: "niceeval.compare",
    schemaVersion: 1,
    a: side(a),
    b: side(b),
    counts,
    evals: rows,
  };
}
