/**
 * Readable, bounded JSON previews of subjects and expectations. Sealed entries are persisted and
 * printed in one line, so every preview is JSON and at most about 200 characters.
 */
import { isJsonValue, isPlainObject, type JsonValue } from "../_shared/mod.ts";

/** Longest preview of a subject kept in `expected` / `received`. */
const PREVIEW_LIMIT = 200;
/** Longest argument text inside a match name. */
const NAME_ARGUMENT_LIMIT = 60;

/** Cuts `text` to `limit` code points, marking the cut with an ellipsis. */
export function truncate(text: string, limit = PREVIEW_LIMIT): string {
  if (text.length <= limit) return text;
  const points = Array.from(text);
  return points.length <= limit ? text : `${points.slice(0, limit).join("")}…`;
}

/** A JSON preview of any value: JSON stays JSON (unless too long), the rest becomes text. */
export function preview(value: unknown): JsonValue {
  if (typeof value === "string") return truncate(value);
  if (value === null || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (isJsonValue(value)) {
    const text = JSON.stringify(value);
    return text.length <= PREVIEW_LIMIT ? JSON.parse(text) as JsonValue : truncate(text);
  }
  return truncate(sourceText(value));
}

/** Source-like text of a value for names and previews: `/re/i`, `"text"`, `{"a":1}`. */
function sourceText(value: unknown): string {
  return sourceWithin(value, new Set());
}

function sourceWithin(value: unknown, seen: Set<object>): string {
  if (value === undefined) return "undefined";
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "symbol") return value.toString();
  if (typeof value === "function") return `[function ${value.name || "anonymous"}]`;
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? String(value);
  if (isRegExp(value)) return String(value);
  if (isDate(value)) return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
  // Cycles and deep nesting are cut: previews are bounded anyway.
  if (seen.has(value) || seen.size > 8) return "…";
  seen.add(value);
  try {
    if (Array.isArray(value)) return `[${value.map((v) => sourceWithin(v, seen)).join(",")}]`;
    if (isPlainObject(value)) {
      const parts = Object.entries(value).map(([k, v]) =>
        `${JSON.stringify(k)}:${sourceWithin(v, seen)}`
      );
      return `{${parts.join(",")}}`;
    }
  } finally {
    seen.delete(value);
  }
  const ctor = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return `[object ${typeof ctor === "string" && ctor !== "" ? ctor : "Object"}]`;
}

/** True for a `Date`, also one from another realm. */
export function isDate(value: unknown): value is Date {
  return Object.prototype.toString.call(value) === "[object Date]";
}

/** True for a `RegExp`, also one from another realm. */
export function isRegExp(value: unknown): value is RegExp {
  return Object.prototype.toString.call(value) === "[object RegExp]";
}

/** A match-name argument: source text cut to a readable length. */
export function nameArgument(value: unknown): string {
  return truncate(sourceText(value), NAME_ARGUMENT_LIMIT);
}

/** A quoted string argument for match names: `"sunny"`. */
export function quoted(text: string): string {
  return JSON.stringify(truncate(text, NAME_ARGUMENT_LIMIT));
}

/** Message of any thrown value, for the `error` field of an errored entry. */
export function thrownMessage(error: unknown): string {
  if (typeof error === "object" && error !== null && "message" in error) {
    const message = (error as { message: unknown }).message;
    if (typeof message === "string") return truncate(message);
  }
  return truncate(sourceText(error));
}
