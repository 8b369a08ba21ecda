/**
 * Display-width helpers of the live panel: every width is measured in terminal columns with
 * `string-width` (wide characters count 2, escape sequences 0), never with `.length`.
 */
import stringWidth from "string-width";

const SEGMENTER = new Intl.Segmenter();

/** Terminal columns `text` occupies. */
export function widthOf(text: string): number {
  return stringWidth(text);
}

/** `text` cut to at most `width` columns, ending with `…` when something was cut (OUT-H17). */
export function fit(text: string, width: number): string {
  if (widthOf(text) <= width) return text;
  if (width <= 0) return "";
  let out = "";
  let used = 0;
  for (const { segment } of SEGMENTER.segment(text)) {
    const w = widthOf(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return out + "…";
}

/** `text` padded with spaces on the right to `width` columns. */
export function padEnd(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - widthOf(text)));
}

/** `text` padded with spaces on the left to `width` columns. */
export function padStart(text: string, width: number): string {
  return " ".repeat(Math.max(0, width - widthOf(text))) + text;
}
