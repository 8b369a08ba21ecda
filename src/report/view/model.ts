/**
 * The data a `niceeval view` report embeds (issue 17, item 1). The CLI gathers it from the Record;
 * {@link renderHtml} writes it into the page as one JSON document that the page's script renders.
 * Every measure the overview shows is computed here, in one place, so the page and `show --json`
 * cannot disagree.
 */
import type { SlotCounts } from "../show_runs.ts";

/** The whole report. */
export interface ViewModel {
  readonly format: "niceeval.view";
  readonly schemaVersion: 1;
  /** When the report was built (ISO 8601). */
  readonly generatedAt: string;
  /** The project's directory name. */
  readonly title: string;
  /** What the results are: the project's current results, or the Runs given with `--run`. */
  readonly scope: "project-current" | "runs";
  /** In the order `show` lists them. */
  readonly experiments: readonly ViewExperiment[];
  /** Every eval of any slot, in first-seen order. */
  readonly evals: readonly ViewEval[];
  /** One per expected slot, like the rows of `show --json`. */
  readonly slots: readonly ViewSlot[];
  /** The Attempts of the slots that have one; a slot's `attempt` indexes this list. */
  readonly attempts: readonly ViewAttempt[];
  /** Every published Run of the Record, newest first: the history charts and the Runs page. */
  readonly runs: readonly ViewRun[];
  /** The comparison of `view --compare <A> <B>`; null without it. */
  readonly compare: ViewComparison | null;
  /** Warnings about the Record (unpublished Runs and the like), as `show --json` reports them. */
  readonly problems: readonly { readonly code: string; readonly message: string }[];
}

/** One experiment: the overview row and a matrix column. */
export interface ViewExperiment {
  readonly id: string;
  readonly agent: string | null;
  readonly model: string | null;
  /** The Runs its results come from, newest first. */
  readonly runIds: readonly string[];
  /** Expected slots. */
  readonly slots: number;
  readonly counts: SlotCounts;
  /** Passed ÷ slots of pass evals (0…1); null without pass evals. */
  readonly passRate: number | null;
  /** Slots of pass evals. */
  readonly passSlots: number;
  /**
   * Mean score over the scored slots of score evals (those below their passAt included); null
   * without any.
   */
  readonly meanScore: number | null;
  /** Mean possible score of those slots (docs/scores.md); null without any or when one is unknown. */
  readonly meanPossible?: number | null;
  /** Slots of score evals. */
  readonly scoreSlots: number;
  /** Median and 95th percentile of the Attempts' durations; null without Attempts. */
  readonly durationP50Ms: number | null;
  readonly durationP95Ms: number | null;
  /** Input plus output tokens over the Attempts that report usage; null when none does. */
  readonly tokens: number | null;
  /** Estimated cost over the Attempts that have one; null when none has. */
  readonly costUSD: number | null;
}

/** One eval: a matrix row. */
export interface ViewEval {
  readonly id: string;
  readonly kind: "pass" | "score";
  readonly tags: readonly string[];
  readonly description: string | null;
}

/** One expected slot of an experiment. */
export interface ViewSlot {
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
  /** As in `show --json`: executed, carried, not-dispatched, interrupted or missing. */
  readonly state: string;
  /** Why the slot has no current result (new, identity-changed, …); null when it has one. */
  readonly reason: string | null;
  readonly runId: string | null;
  /** The Attempt's verdict; null without an Attempt. */
  readonly verdict: string | null;
  /** Index into {@link ViewModel.attempts}; null without an Attempt. */
  readonly attempt: number | null;
}

/** Everything `show @locator` shows of one Attempt. */
export interface ViewAttempt {
  readonly locator: string;
  readonly attemptId: string;
  readonly experimentId: string;
  readonly evalId: string;
  readonly ordinal: number;
  /** The Run the slot's result is drawn from, and the Run that executed the Attempt. */
  readonly runId: string;
  readonly originRunId: string;
  readonly agent: string | null;
  readonly model: string | null;
  readonly verdict: string;
  readonly score: number | null;
  /** Score evals: the possible score and the passAt it ran with (docs/scores.md). */
  readonly possible?: number | null;
  readonly passAt?: number | null;
  readonly outcome: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly usage: Readonly<Record<string, unknown>> | null;
  readonly tokens: number | null;
  readonly costUSD: number | null;
  readonly error: ViewError | null;
  /** `assertions.json` entries: status, criterion, label, expected, received, reason, source. */
  readonly assertions: readonly Readonly<Record<string, unknown>>[];
  /** `events.json` turns: input, status, events (messages, operations, errors). */
  readonly turns: readonly Readonly<Record<string, unknown>>[];
  /** `events.json` phases (timings). */
  readonly phases: readonly unknown[];
  /** `events.json` diagnostics of the Attempt. */
  readonly diagnostics: readonly unknown[];
  /** `events.json` logs. */
  readonly logs: readonly unknown[];
}

/** An Attempt's error, with where user code threw it. */
export interface ViewError {
  readonly code: string;
  readonly phase: string;
  readonly message: string;
  readonly location: string | null;
  readonly stack: string | null;
}

/** One published Run. */
export interface ViewRun {
  readonly runId: string;
  readonly experimentId: string;
  readonly agent: string;
  readonly model: string | null;
  readonly startedAt: string;
  readonly completedAt: string | null;
  readonly completion: string | null;
  readonly slots: number;
  readonly counts: SlotCounts;
  /** Passed ÷ slots of pass evals of this Run (0…1); null without pass evals. */
  readonly passRate: number | null;
  /** The Run's diagnostics (code, level, message, evalId). */
  readonly diagnostics: readonly Readonly<Record<string, unknown>>[];
}

/** `show --compare --json`'s document (`niceeval.compare`). */
export type ViewComparison = Readonly<Record<string, unknown>>;
