/** Flat copies of short built strings, for identifiers kept for a whole run. */

/** The longest text that {@link flatString} copies. */
const MAX_FLAT = 256;
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** UTF-8 room for {@link MAX_FLAT} UTF-16 code units. */
const scratch = new Uint8Array(MAX_FLAT * 3);
/** Views of `scratch` by length, made once each. */
const views = new Map<number, Uint8Array>();

/**
 * `text` as one flat string. A concatenation (`a + b`, template literals, `+=`) of 13 or more
 * characters is a rope of its parts, and a `slice` of that length keeps the whole sliced string
 * alive: several objects where one would do, kept as long as the identifier. Long strings are
 * returned as they are.
 *
 * ASCII text, the usual case (digests, most IDs), round-trips through a reused byte buffer, which
 * leaves no garbage but the new string; other text is copied code unit by code unit, so that a lone
 * surrogate survives as it is.
 */
export function flatString(text: string): string {
  if (text.length > MAX_FLAT) return text;
  const { written } = encoder.encodeInto(text, scratch);
  // Every code unit that is not ASCII takes more than one byte.
  if (written === text.length) {
    let view = views.get(written);
    if (view === undefined) {
      view = scratch.subarray(0, written);
      views.set(written, view);
    }
    return decoder.decode(view);
  }
  const codes = new Array<number>(text.length);
  for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
  return String.fromCharCode(...codes);
}
