/** Record identifiers: SlotIds and Attempt locators (REC-1, REC-12). */
import { UsageError } from "../_shared/mod.ts";
import { sha256Hex } from "../_shared/mod.ts";
import { flatString } from "./_flat.ts";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
/** `@`, the version digit `1` (typed as I or L too), then 12 characters. */
const LOCATOR_REGEXP = /^@[1IiLl]([0-9A-Za-z]{12})$/;

/** A lowercase UUID v4: every `recordId`, `invocationId`, RunId and AttemptId (REC-1). */
const UUID_V4_REGEXP = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** A SlotId: 16 hex digits, a dash, the ordinal padded to at least 4 digits (REC-1). */
const SLOT_ID_REGEXP = /^[0-9a-f]{16}-(?:\d{4}|[1-9]\d{4,})$/;

/**
 * True when `value` is a RunId, AttemptId, `invocationId` or `recordId`: a lowercase UUID v4.
 * Identifiers read from the Record are checked with it before they become part of a path.
 */
export function isRecordUuid(value: unknown): value is string {
  return typeof value === "string" && UUID_V4_REGEXP.test(value);
}

/** True when `value` has the SlotId grammar of REC-1 (it names a member file). */
export function isSlotId(value: unknown): value is string {
  return typeof value === "string" && SLOT_ID_REGEXP.test(value);
}

/** `<first 16 hex of SHA-256(evalId)>-<ordinal, 4 digits>`. */
export function slotIdOf(evalId: string, ordinal: number): string {
  // Flat: SlotIds are kept for the whole run, one per slot.
  return flatString(`${sha256Hex(evalId).slice(0, 16)}-${String(ordinal).padStart(4, "0")}`);
}

/** `@1` + 12 Crockford base32 characters of the first 60 bits of SHA-256(attemptId). */
export function locatorOf(attemptId: string): string {
  const hex = sha256Hex(attemptId);
  // 60 bits = three groups of 20 bits (5 hex digits), each 4 characters, most significant first.
  let out = "@1";
  for (let group = 0; group < 3; group++) {
    const bits = parseInt(hex.slice(group * 5, group * 5 + 5), 16);
    for (let shift = 15; shift >= 0; shift -= 5) out += CROCKFORD[(bits >>> shift) & 31];
  }
  return flatString(out);
}

/**
 * Normalizes a user-typed locator (case-insensitive; `O` → `0`, `I`/`L` → `1`) to `@1XXXXXXXXXXXX`,
 * or throws `malformed-locator`.
 */
export function parseLocator(input: string): string {
  // REC-12: a locator starts with `@`; without it the input could be anything (issue 18.11).
  if (LOCATOR_REGEXP.test(`@${input.trim()}`)) {
    throw new UsageError(
      "malformed-locator",
      `"${input}" is not an Attempt locator: locators start with @`,
      `did you mean @${input.trim()}? (e.g. niceeval show @${input.trim()})`,
    );
  }
  const match = LOCATOR_REGEXP.exec(input.trim());
  const body = match?.[1]?.toUpperCase().replace(/O/g, "0").replace(/[IL]/g, "1");
  if (!body || [...body].some((c) => !CROCKFORD.includes(c))) {
    throw new UsageError(
      "malformed-locator",
      `"${input}" is not an Attempt locator`,
      "a locator is @1 followed by 12 characters, as printed by niceeval (e.g. @17QK3M9XT2HC4)",
    );
  }
  return `@1${body}`;
}
