/**
 * Build failures as reports show them (sandboxes.md rules 66–71): one group per (Run, build key)
 * with the affected `evalId#attempt`, the failure's code and message, and the remediation text of
 * rule 70. Everything is read from the diagnostic's `data` (the rule 67 detail, which carries the
 * text since its emission), so a report renders it from a run event or from the Record alike.
 */
import { plural } from "../_shared/mod.ts";

/** Codes of the per-slot diagnostic of a key that could not be prepared (rule 66). */
const BUILD_FAILURE_CODES: ReadonlySet<string> = new Set([
  "sandbox-build-failed",
  "sandbox-build-timeout",
  "sandbox-build-cancelled",
]);
const BUILD_FAILURE_SCHEMA = "niceeval.sandbox-build-failure/v1";
/** Attempt ids listed on one line before `… <n> more`. */
const LISTED_ATTEMPTS = 10;

/** A diagnostic as reports read it: a run event's or a Run document's. */
export interface BuildDiagnostic {
  readonly code: string;
  readonly message: string;
  readonly data: Readonly<Record<string, unknown>> | null;
}

/** The build failures of one (Run, build key). */
export interface BuildFailureGroup {
  /** The Run: its id in the Record, its experiment id while the run goes on. */
  readonly run: string;
  /** The first 16 hex of the key, or of the image reference of a failed pull. */
  readonly buildKey: string;
  readonly code: string;
  /** `sandbox.build`, or `sandbox.pull` for a failed pull. */
  readonly phase: string;
  /** The first diagnostic's message. */
  readonly message: string;
  readonly errorCode: string | null;
  /** The log excerpt of rule 68. */
  readonly excerpt: string | null;
  /** The text of rule 70, or the bare hint id of a detail that has no text. */
  readonly remediation: string | null;
  /** `evalId#attempt` of every affected Attempt, by eval id, then attempt. */
  readonly attempts: readonly string[];
}

interface MutableGroup extends BuildFailureGroup {
  readonly attempts: string[];
}

/** Groups build failure diagnostics by (Run, build key); other diagnostics are ignored. */
export class BuildFailureGroups {
  readonly #groups = new Map<string, MutableGroup>();
  readonly #bySlot = new Map<string, MutableGroup>();

  /**
   * Adds one diagnostic of `run`; returns its group and whether it opened it, or undefined when
   * the diagnostic is not a build failure with a rule 67 detail.
   */
  add(run: string, d: BuildDiagnostic): { group: BuildFailureGroup; first: boolean } | undefined {
    const detail = detailOf(d);
    if (detail === undefined) return undefined;
    const key = `${run}\u0000${detail.buildKey}`;
    let group = this.#groups.get(key);
    const first = group === undefined;
    if (group === undefined) {
      group = {
        run,
        buildKey: detail.buildKey,
        code: d.code,
        phase: detail.phase,
        message: d.message,
        errorCode: detail.errorCode,
        excerpt: detail.excerpt,
        remediation: detail.remediation,
        attempts: [],
      };
      this.#groups.set(key, group);
    }
    const attempt = `${detail.evalId}#${detail.attempt}`;
    const slot = `${run}\u0000${attempt}`;
    if (!this.#bySlot.has(slot)) {
      const at = group.attempts.findIndex((other) => compareAttempts(attempt, other) < 0);
      group.attempts.splice(at < 0 ? group.attempts.length : at, 0, attempt);
      this.#bySlot.set(slot, group);
    }
    return { group, first };
  }

  /** Every group, in the order their first diagnostics came. */
  get groups(): readonly BuildFailureGroup[] {
    return [...this.#groups.values()];
  }

  /** The group that `evalId#ordinal` of `run` belongs to. */
  of(run: string, evalId: string, ordinal: number): BuildFailureGroup | undefined {
    return this.#bySlot.get(`${run}\u0000${evalId}#${ordinal}`);
  }
}

/** Groups the diagnostics of one Run document (`show`). */
export function runBuildFailures(
  runId: string,
  diagnostics: readonly BuildDiagnostic[],
): readonly BuildFailureGroup[] {
  const groups = new BuildFailureGroups();
  for (const d of diagnostics) groups.add(runId, d);
  return groups.groups;
}

/**
 * The lines under a group's head: the error, the log line of its `ERR_*` code, the remediation,
 * and the affected Attempts (all of them, or the first 10 then `… <n> more`).
 */
export function buildGroupBody(
  group: BuildFailureGroup,
  options: { readonly indent: string; readonly allAttempts?: boolean },
): string[] {
  const { indent } = options;
  const lines = [`${indent}error ${group.code}: ${oneLine(group.message)}`];
  const logLine = group.errorCode !== null && group.excerpt !== null
    ? echoed(oneLine(group.excerpt.split("\n")[0] ?? ""))
    : "";
  if (logLine !== "") lines.push(`${indent}log: ${logLine}`);
  if (group.remediation !== null) lines.push(`${indent}fix: ${group.remediation}`);
  const shown = options.allAttempts ? group.attempts : group.attempts.slice(0, LISTED_ATTEMPTS);
  const more = group.attempts.length - shown.length;
  lines.push(
    `${indent}affected: ${shown.join(", ")}${more > 0 ? `, … ${more} more` : ""}`,
  );
  return lines;
}

/** `<n> attempt(s)` of a group. */
export function groupSize(group: BuildFailureGroup): string {
  return plural(group.attempts.length, "attempt");
}

/** The rule 67 detail of a build failure diagnostic, or undefined. */
function detailOf(d: BuildDiagnostic) {
  const data = d.data;
  if (!BUILD_FAILURE_CODES.has(d.code) || data === null || data.schema !== BUILD_FAILURE_SCHEMA) {
    return undefined;
  }
  const { buildKey, evalId, attempt } = data;
  if (typeof buildKey !== "string" || typeof evalId !== "string") return undefined;
  if (typeof attempt !== "number") return undefined;
  const text = (value: unknown) => typeof value === "string" && value !== "" ? value : null;
  return {
    buildKey,
    evalId,
    attempt,
    phase: text(data.phase) ?? "sandbox.build",
    errorCode: text(data.errorCode),
    excerpt: text(data.message),
    remediation: text(data.remediationText) ?? text(data.remediation),
  };
}

/** `evalId#attempt` order: eval id by code units, then the attempt number. */
function compareAttempts(a: string, b: string): number {
  const i = a.lastIndexOf("#");
  const j = b.lastIndexOf("#");
  const evalA = a.slice(0, i);
  const evalB = b.slice(0, j);
  if (evalA !== evalB) return evalA < evalB ? -1 : 1;
  return Number(a.slice(i + 1)) - Number(b.slice(j + 1));
}

/** `text` on one line: line breaks and the space around them become one space; never cut. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** Echoed build output (the log line), cut to 300 characters with `…`; the error never is. */
function echoed(text: string): string {
  const chars = [...text];
  return chars.length > 300 ? chars.slice(0, 299).join("") + "…" : text;
}
