/**
 * Permanent lines of a running `exp` (OUT-H9, OUT-H10): failures (first 10 expanded), setup
 * failures, errors without an Attempt, halts, warnings (once per code, experiment and eval),
 * notices and the first interrupt. The same lines go above the live panel and into plain output.
 * A failed build is one error line per (Run, build key) with its remediation (sandboxes.md rules
 * 70–71), however many Attempts needed the key; the end panel lists them.
 */
import { plural, type RunEvent } from "../_shared/mod.ts";
import type { Plan } from "../plan/mod.ts";
import { locatorOf } from "../record/mod.ts";
import { paintMarker, wrapWidth } from "./box.ts";
import { type BuildFailureGroup, BuildFailureGroups } from "./build_failures.ts";
import { attemptLines, hasAttemptLines } from "./human.ts";

const EXPANDED_FAILURES = 10;

/** Options of {@link PermanentLines}. */
interface PermanentLinesOptions {
  /** Colour the leading `✗` and `!` (a terminal without `NO_COLOR`). */
  readonly color?: boolean;
  /** Print a line per ramp change (plain mode; the live panel has its ramp line, OUT-5). */
  readonly rampLines?: boolean;
  /** Break lines at spaces to this width (stdout is a narrow terminal, issue 18 item 5). */
  readonly wrapWidth?: number;
}

/** Turns run events into permanent output lines, passed one by one to `write`. */
export class PermanentLines {
  readonly #write: (line: string) => void;
  readonly #plan: Plan;
  readonly #color: boolean;
  readonly #rampLines: boolean;
  readonly #wrapWidth: number | undefined;
  #failures = 0;
  readonly #seen = new Set<string>();
  readonly #started = new Map<string, number>();
  /** Build failures so far, by experiment id; the end panel groups its rows with them. */
  readonly buildFailures = new BuildFailureGroups();

  constructor(plan: Plan, write: (line: string) => void, options: PermanentLinesOptions = {}) {
    this.#plan = plan;
    this.#write = write;
    this.#color = options.color ?? false;
    this.#rampLines = options.rampLines ?? false;
    this.#wrapWidth = options.wrapWidth;
  }

  /** Handles one event. */
  event(e: RunEvent): void {
    switch (e.type) {
      case "attempt_start":
        this.#started.set(e.slot.experimentId, (this.#started.get(e.slot.experimentId) ?? 0) + 1);
        return;
      case "attempt_end": {
        if (!hasAttemptLines(e.result)) return;
        const lines = attemptLines(e.result, locatorOf(e.result.attemptId));
        this.#failures++;
        if (this.#failures <= EXPANDED_FAILURES) lines.forEach((line) => this.#out(line));
        else if (this.#failures === EXPANDED_FAILURES + 1) {
          this.#out("… further failures are listed at the end");
        }
        return;
      }
      case "experiment_setup":
        if (e.status === "failed") {
          const experiment = this.#plan.experiments.find((x) => x.id === e.experimentId);
          const n = (experiment?.runnable ?? 0) - (this.#started.get(e.experimentId) ?? 0);
          const message = e.message ?? "";
          const errored = plural(n, "attempt");
          this.#out(
            `✗ experiment setup failed · ${e.experimentId}: ${message} (${errored} errored)`,
          );
        }
        return;
      case "diagnostic":
        return this.#diagnostic(e);
      case "interrupted":
        this.#out("! interrupted — cleaning up (Ctrl+C again forces exit)");
        return;
      case "ramp":
        if (this.#rampLines) this.#out(rampChangeLine(e));
        return;
      default:
        return;
    }
  }

  #diagnostic(e: Extract<RunEvent, { type: "diagnostic" }>): void {
    // Halt messages already read `experiment halted: …` / `eval halted · <evalId>: …`.
    if (e.code === "dispatch-halted") {
      this.#out(`✗ ${e.message}${unstartedOf(e)}`);
      this.#hint(e);
      return;
    }
    const build = this.buildFailures.add(e.experimentId ?? "", e);
    if (build) {
      if (build.first) this.#buildFailure(build.group);
      return;
    }
    const key = `${e.code}\u0000${e.experimentId ?? ""}\u0000${e.evalId ?? ""}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    if (e.level === "info") this.#out(`i ${e.message}`);
    else if (e.level === "warning") this.#out(`! ${e.message}`);
    else {
      const errored = e.data?.errored;
      const count = typeof errored === "number"
        ? ` (${plural(errored, "attempt")} errored)`
        : e.code === "experiment-halted"
        ? unstartedOf(e)
        : "";
      this.#out(`✗ ${e.code} · ${e.experimentId ?? ""}: ${e.message}${count}`);
      this.#hint(e);
    }
  }

  /** The `hint:` line under an error that carries one (halts, docs/bail.md). */
  #hint(e: Extract<RunEvent, { type: "diagnostic" }>): void {
    const hint = e.data?.hint;
    if (typeof hint === "string" && hint !== "") this.#out(`    hint: ${hint}`);
  }

  /**
   * The error line of a failed build key (OUT-H9) with the planned Attempts of its Run that need
   * the key, then its remediation.
   */
  #buildFailure(group: BuildFailureGroup): void {
    const n =
      this.#plan.slots.filter((slot) =>
        slot.experimentId === group.run && slot.carry.action === "run" &&
        (slot.sandbox?.buildKeys ?? []).some((key) => key.startsWith(group.buildKey))
      ).length;
    const count = n > 0 ? ` (${plural(n, "attempt")} errored)` : "";
    this.#out(`✗ ${group.code} · ${group.run}: ${group.message}${count}`);
    if (group.remediation !== null) this.#out(`    fix: ${group.remediation}`);
  }

  #out(line: string): void {
    const lines = this.#wrapWidth === undefined ? [line] : wrapWidth(line, this.#wrapWidth);
    for (const part of lines) this.#write(paintMarker(part, this.#color));
  }
}

/** ` (<n> attempts not started)` of a halt that closed waiting slots (STOP-3), else "". */
function unstartedOf(e: Extract<RunEvent, { type: "diagnostic" }>): string {
  const n = e.data?.unstarted;
  return typeof n === "number" && n > 0 ? ` (${plural(n, "attempt")} not started)` : "";
}

/**
 * A ramp change in plain output (OUT-5, OUT-H9): `ramp: cap <a> → <b> (<why>)`, or
 * `ramp: <state>` when only the state changed (`ramp: held: quota`).
 */
export function rampChangeLine(e: Extract<RunEvent, { type: "ramp" }>): string {
  const state = e.state === "backing off"
    ? "backing off (rate limit)"
    : e.state === "held"
    ? `held: ${e.reason ?? ""}`
    : e.state;
  if (e.cap === e.previousCap) return `ramp: ${state}`;
  const why = e.cause === "range" ? `range ${e.from}–${e.to}` : state;
  return `ramp: cap ${e.previousCap} → ${e.cap} (${why})`;
}
