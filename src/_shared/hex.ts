/**
 * Lowercase hex identifiers as bytes and back (issue 20): a run of 100,000 Attempts keeps their
 * digests, SlotIds and AttemptIds in typed arrays, and spells one out only when it is written.
 */

const HEX = "0123456789abcdef";
const LATIN1 = new TextDecoder("latin1");

/**
 * Reads the `count` bytes spelled in lowercase hex at `text[from]` into `out[at]`. False when one of
 * the characters is not a lowercase hex digit; `out` may then hold some of the bytes.
 */
export function readHex(
  text: string,
  from: number,
  count: number,
  out: Uint8Array,
  at: number,
): boolean {
  for (let i = 0; i < count; i++) {
    const high = nibble(text.charCodeAt(from + 2 * i));
    const low = nibble(text.charCodeAt(from + 2 * i + 1));
    if (high < 0 || low < 0) return false;
    out[at + i] = (high << 4) | low;
  }
  return true;
}

/** Writes `count` bytes of `bytes` from `from` as lowercase hex character codes at `text[at]`. */
export function writeHex(
  bytes: Uint8Array,
  from: number,
  count: number,
  text: Uint8Array,
  at: number,
): void {
  for (let i = 0; i < count; i++) {
    const byte = bytes[from + i]!;
    text[at + 2 * i] = HEX.charCodeAt(byte >> 4);
    text[at + 2 * i + 1] = HEX.charCodeAt(byte & 15);
  }
}

/** The string of one-byte character codes: one flat string, not a rope of pieces. */
export function latin1Text(codes: Uint8Array): string {
  return LATIN1.decode(codes);
}

/** The value of a lowercase hex digit's character code, or -1. */
function nibble(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  return -1;
}
