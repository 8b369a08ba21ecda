/**
 * What the coding agents' stream mappings share (docs/coding_agents.md): reading NDJSON lines and
 * the coverage a complete stream declares.
 */
import type { EvidenceCoverage } from "../types.ts";

/** A value read from a CLI's JSON output, before the mapping checks its shape. */
// deno-lint-ignore no-explicit-any
export type Json = any;

/** Parses one line as a JSON object; undefined for anything else (array, scalar, not JSON). */
export function parseObject(line: string): Json | undefined {
  try {
    const value = JSON.parse(line);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The JSON objects of an NDJSON output, in order; a non-blank line that is no JSON object is
 * listed in `unmapped` (as `line "<first 80 characters>"`) when the reader reaches it.
 */
export function* objectLines(stdout: string, unmapped: string[]): Generator<Json> {
  for (const raw of stdout.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const value = parseObject(line);
    if (value === undefined) unmapped.push(`line ${JSON.stringify(line.slice(0, 80))}`);
    else yield value;
  }
}

/**
 * The declared coverage of a CLI whose stream shows the whole of every channel but `data`, which
 * is unavailable with the reason "`cli` returns no structured data".
 */
export function streamCoverage(cli: string): EvidenceCoverage {
  return Object.freeze({
    events: { status: "complete" },
    actions: { status: "complete" },
    messages: { status: "complete" },
    usage: { status: "complete" },
    status: { status: "complete" },
    data: { status: "unavailable", reason: `${cli} returns no structured data` },
  }) as EvidenceCoverage;
}
