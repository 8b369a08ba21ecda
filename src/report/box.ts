/**
 * Panels of permanent output (cli.md OUT-H2, OUT-H3): PLAN and the end panels, as a rounded box
 * on a wide colour terminal, else as a title line with its body indented by two spaces. A body
 * line wider than the box, or than a terminal when unboxed, is broken at spaces, never inside a
 * word, its continuation indented two more spaces (issue 18 item 5), so IDs and locators stay
 * whole; only a single word wider than a box is cut with `…`. Unboxed output for files and logs
 * is never broken or cut, so logs keep every word on its line.
 */
import pc from "picocolors";
import stringWidth from "string-width";
import { wrapWidth } from "./_wrap.ts";

export { wrapWidth };

/** A box never spans more than this many columns (OUT-H2). */
const MAX_BOX_WIDTH = 120;

/** One panel of permanent output. */
export interface BoxPanel {
  readonly title: string;
  /** Right note of the title (`0.5s`, `3 experiments`). */
  readonly note: string | null;
  readonly body: readonly string[];
  /** Colour of the title: a good, bad or unfinished outcome. */
  readonly tone?: "good" | "bad" | "warn";
}

/** How panels are laid out. */
export interface BoxLayout {
  /** Rounded box (stdout is a terminal, `NO_COLOR` unset, width ≥ 60). */
  readonly boxed: boolean;
  /** Terminal columns. */
  readonly width: number;
  /** ANSI colour. */
  readonly color: boolean;
  /**
   * Unboxed body lines are broken at spaces to `width` (stdout is a terminal, which would
   * otherwise wrap them inside a word). Boxed lines always are.
   */
  readonly wrap?: boolean;
}

/** Plain text: no box, no colour (files, pipes, CI logs). */
export const UNBOXED: BoxLayout = { boxed: false, width: 80, color: false };

const SEGMENTER = new Intl.Segmenter();
const MARKER_REGEXP = /^(\s*)([✗!])(?= )/;

/** The lines of `panel`. */
export function boxLines(panel: BoxPanel, layout: BoxLayout): string[] {
  const c = pc.createColors(layout.color);
  const tone = panel.tone === "good"
    ? c.green
    : panel.tone === "bad"
    ? c.red
    : panel.tone === "warn"
    ? c.yellow
    : (s: string) => s;
  if (!layout.boxed) {
    const title = c.bold(tone(panel.title)) + (panel.note ? `  ${panel.note}` : "");
    const body = panel.body.flatMap((line) =>
      layout.wrap ? wrapWidth(`  ${line}`, layout.width) : [`  ${line}`]
    );
    return [title, ...body.map((line) => paintMarker(line, layout.color))];
  }
  const width = Math.min(layout.width, MAX_BOX_WIDTH);
  const inner = width - 4;
  const right = panel.note ? ` ${panel.note} ─╮` : "╮";
  const label = fitWidth(panel.title, width - 5 - stringWidth(right));
  const fill = "─".repeat(Math.max(0, width - 4 - stringWidth(label) - stringWidth(right)));
  const lines = [`${c.dim("╭─")} ${c.bold(tone(label))} ${c.dim(fill + right)}`];
  for (const line of panel.body.flatMap((l) => wrapWidth(l, inner))) {
    const text = fitWidth(line, inner);
    const padded = text + " ".repeat(Math.max(0, inner - stringWidth(text)));
    lines.push(`${c.dim("│")} ${paintMarker(padded, layout.color)} ${c.dim("│")}`);
  }
  lines.push(c.dim(`╰${"─".repeat(width - 2)}╯`));
  return lines;
}

/** The lines of several panels, one after another. */
export function panelsLines(panels: readonly BoxPanel[], layout: BoxLayout): string[] {
  return panels.flatMap((panel) => boxLines(panel, layout));
}

/** `text` cut to at most `width` terminal columns, ending with `…` when something was cut. */
export function fitWidth(text: string, width: number): string {
  if (stringWidth(text) <= width) return text;
  if (width <= 0) return "";
  let out = "";
  let used = 0;
  for (const { segment } of SEGMENTER.segment(text)) {
    const w = stringWidth(segment);
    if (used + w > width - 1) break;
    out += segment;
    used += w;
  }
  return out + "…";
}

/** Terminal columns `text` occupies. */
export function textWidth(text: string): number {
  return stringWidth(text);
}

/** `text` padded with spaces to `width` terminal columns. */
export function padWidth(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - stringWidth(text)));
}

/** Colours the leading `✗` (red) or `!` (yellow) of a permanent line. */
export function paintMarker(line: string, color: boolean): string {
  if (!color) return line;
  const c = pc.createColors(true);
  return line.replace(
    MARKER_REGEXP,
    (_all, indent: string, marker: string) => indent + (marker === "✗" ? c.red : c.yellow)(marker),
  );
}
