/** Flat copies of short built strings, for identifiers kept for a whole run. */

/**
 * `text` as one flat string. A concatenation (`a + b`, template literals, `+=`) of 13 or more
 * characters is a rope of its parts, and a `slice` of that length keeps the whole sliced string
 * alive: several objects where one would do, kept as long as the identifier. Long strings are
 * returned as they are.
 */
export function flatString(text: string): string {
  if (text.length > 256) return text;
  const codes = new Array<number>(text.length);
  for (let i = 0; i < text.length; i++) codes[i] = text.charCodeAt(i);
  return String.fromCharCode(...codes);
}
