/**
 * Evidence coverage (authoring.md §7.6): how completely an adapter observes each channel, so that
 * "not observed" is never read as "did not happen". Order: complete > partial > unavailable.
 */
import { DefinitionError } from "../_shared/mod.ts";
import { isPlainObject } from "../_shared/mod.ts";
import { choices, expected, objectProblem, type Problem, problem } from "./_problem.ts";
import type { CoverageChannel, CoverageEntry, EvidenceCoverage } from "./types.ts";

/** The six channels, in declaration order. */
const COVERAGE_CHANNELS: readonly CoverageChannel[] = Object.freeze([
  "events",
  "actions",
  "messages",
  "usage",
  "status",
  "data",
]);

const STATUSES = ["complete", "partial", "unavailable"] as const;
const RANK: Readonly<Record<CoverageEntry["status"], number>> = {
  complete: 2,
  partial: 1,
  unavailable: 0,
};
const COMPLETE: CoverageEntry = Object.freeze({ status: "complete" });

/**
 * Coverage with every channel complete.
 *
 * @example
 * ```ts
 * import { completeEvidenceCoverage } from "niceeval/adapter";
 * const usage = completeEvidenceCoverage.usage; // { status: "complete" }
 * ```
 */
export const completeEvidenceCoverage: EvidenceCoverage = Object.freeze({
  events: COMPLETE,
  actions: COMPLETE,
  messages: COMPLETE,
  usage: COMPLETE,
  status: COMPLETE,
  data: COMPLETE,
});

/**
 * Builds a full, frozen coverage from a partial one; unspecified channels are complete.
 *
 * @param partial Entries for the channels the adapter does not fully observe.
 * @returns The validated coverage of all six channels.
 * @throws {DefinitionError} When a channel is unknown or an entry is malformed.
 * @example
 * ```ts
 * import { evidenceCoverage } from "niceeval/adapter";
 * const coverage = evidenceCoverage({ usage: { status: "unavailable", reason: "no usage API" } });
 * ```
 */
export function evidenceCoverage(partial: Partial<EvidenceCoverage>): EvidenceCoverage {
  return resolveCoverage(partial, "evidenceCoverage()", "");
}

/**
 * Validates a partial coverage for a definition and fills missing channels with complete;
 * throws `DefinitionError` naming `prefix.<channel>…`.
 */
export function resolveCoverage(value: unknown, what: string, prefix: string): EvidenceCoverage {
  const found = coverageProblem(value, prefix, { partial: true });
  if (found) {
    throw new DefinitionError("definition.invalid-value", found.path, `${what}: ${found.message}`);
  }
  return normalizeCoverage(value as Partial<EvidenceCoverage>, completeEvidenceCoverage);
}

/**
 * Checks a coverage object. With `partial`, channels may be missing; otherwise all six are
 * required. `undefined` channels count as missing.
 */
export function coverageProblem(
  value: unknown,
  path: string,
  options: { partial: boolean },
): Problem | undefined {
  const found = objectProblem(value, path, COVERAGE_CHANNELS, "a coverage object");
  if (found) return found;
  const record = value as Record<string, unknown>;
  for (const channel of COVERAGE_CHANNELS) {
    const entryPath = path === "" ? channel : `${path}.${channel}`;
    if (record[channel] === undefined) {
      if (options.partial) continue;
      return problem(entryPath, "is required");
    }
    const bad = entryProblem(record[channel], entryPath);
    if (bad) return bad;
  }
  return undefined;
}

function entryProblem(value: unknown, path: string): Problem | undefined {
  if (!isPlainObject(value)) return expected(path, "a coverage entry object", value);
  const status = value.status;
  if (!STATUSES.includes(status as CoverageEntry["status"])) {
    return expected(`${path}.status`, `one of ${choices(STATUSES)}`, status);
  }
  const known = status === "complete" ? ["status"] : ["status", "reason"];
  const unknown = objectProblem(value, path, known);
  if (unknown) return unknown;
  if (status !== "complete") {
    const reason = value.reason;
    if (typeof reason !== "string" || reason.trim() === "") {
      return expected(`${path}.reason`, "a non-empty string", reason);
    }
  }
  return undefined;
}

/** Copies validated entries over `base`, frozen; fields outside the entry shape are dropped. */
export function normalizeCoverage(
  partial: Partial<EvidenceCoverage>,
  base: EvidenceCoverage,
): EvidenceCoverage {
  const out = { ...base };
  for (const channel of COVERAGE_CHANNELS) {
    const entry = partial[channel];
    if (entry !== undefined) out[channel] = copyEntry(entry);
  }
  return Object.freeze(out);
}

function copyEntry(entry: CoverageEntry): CoverageEntry {
  return Object.freeze(
    entry.status === "complete"
      ? { status: "complete" as const }
      : { status: entry.status, reason: entry.reason },
  );
}

/**
 * Lowers `declared` channel by channel by a turn's own coverage; an entry that would raise or
 * keep a channel's level is ignored, so a turn can never raise its coverage.
 *
 * @param declared The agent's declared coverage.
 * @param turn The turn's validated `evidenceCoverage`, if any.
 * @returns The turn's effective coverage, frozen.
 */
export function lowerCoverage(
  declared: EvidenceCoverage,
  turn: Partial<EvidenceCoverage> | undefined,
): EvidenceCoverage {
  const out = { ...declared };
  for (const channel of COVERAGE_CHANNELS) {
    const entry = turn?.[channel];
    if (entry !== undefined && RANK[entry.status] < RANK[declared[channel].status]) {
      out[channel] = copyEntry(entry);
    }
  }
  return Object.freeze(out);
}

/**
 * The worst entry of each channel over `list` (session and Attempt coverage); the first of equally
 * bad entries wins. An empty list gives `fallback`.
 *
 * @param list The coverages of the turns in scope.
 * @param fallback What an empty scope reports, usually the declared coverage.
 * @returns The per-channel worst coverage, frozen.
 */
export function worstCoverage(
  list: readonly EvidenceCoverage[],
  fallback: EvidenceCoverage,
): EvidenceCoverage {
  if (list.length === 0) return fallback;
  const out = { ...list[0]! };
  for (const coverage of list.slice(1)) {
    for (const channel of COVERAGE_CHANNELS) {
      if (RANK[coverage[channel].status] < RANK[out[channel].status]) {
        out[channel] = coverage[channel];
      }
    }
  }
  return Object.freeze(out);
}
