/**
 * The frame of the live panel (OUT-H3): a rounded box, or a title line with indented body lines.
 * Every line is cut to the width; nothing wraps (OUT-H17).
 */
import pc from "picocolors";
import { fit, padEnd, widthOf } from "./_text.ts";

/** A box never spans more than this many columns (OUT-H2). */
export const MAX_BOX_WIDTH = 120;
/** Below this width nothing is boxed (OUT-H2, OUT-H17). */
export const MIN_BOX_WIDTH = 60;

/** A framed panel before layout. */
interface Frame {
  readonly title: string;
  readonly note: string | null;
  /** Sections in order; a section with a name gets a divider (`├─ NAME ──┤`). */
  readonly sections: readonly { readonly name: string | null; readonly lines: readonly string[] }[];
  readonly bottomNote: string | null;
}

/** How a frame is laid out. */
interface FrameLayout {
  readonly width: number;
  readonly boxed: boolean;
  readonly color: boolean;
}

const MARKER_REGEXP = /^(\s*)([●◦✗!])(?= )/;

/** The lines of `frame`. */
export function frameLines(frame: Frame, layout: FrameLayout): string[] {
  return layout.boxed ? boxed(frame, layout) : unboxed(frame, layout);
}

function boxed(frame: Frame, layout: FrameLayout): string[] {
  const c = pc.createColors(layout.color);
  const width = Math.min(layout.width, MAX_BOX_WIDTH);
  const inner = width - 4;
  /** `╭─ LABEL ───── note ─╮` and its variants; a label too long for the width is cut with `…`. */
  const edge = (left: string, label: string, note: string | null, end: string): string => {
    const right = note ? ` ${note} ─${end}` : end;
    if (!label) return c.dim(left + "─".repeat(Math.max(0, width - widthOf(left + right))) + right);
    const title = fit(label, width - widthOf(left) - widthOf(right) - 3);
    const fill = "─".repeat(
      Math.max(0, width - widthOf(left) - widthOf(title) - 2 - widthOf(right)),
    );
    return `${c.dim(left)} ${c.bold(title)} ${c.dim(fill + right)}`;
  };
  const lines = [edge("╭─", frame.title, frame.note, "╮")];
  for (const section of frame.sections) {
    if (section.name !== null) lines.push(edge("├─", section.name, null, "┤"));
    for (const line of section.lines) {
      lines.push(`${c.dim("│")} ${paint(padEnd(fit(line, inner), inner), c)} ${c.dim("│")}`);
    }
  }
  lines.push(edge("╰", "", frame.bottomNote, "╯"));
  return lines;
}

function unboxed(frame: Frame, layout: FrameLayout): string[] {
  const c = pc.createColors(layout.color);
  const note = [frame.note, frame.bottomNote].filter((n) => n).join(" · ");
  // The title gives way first: the note holds the elapsed time and the ETA.
  const title = note
    ? `${fit(frame.title, Math.max(1, layout.width - 2 - widthOf(note)))}  ${note}`
    : frame.title;
  const lines = [c.bold(fit(title, layout.width))];
  for (const section of frame.sections) {
    if (section.name !== null) lines.push(fit(`  ${section.name}`, layout.width));
    for (const line of section.lines) lines.push(paint(fit(`  ${line}`, layout.width), c));
  }
  return lines;
}

/** Colours the leading marker of a line (`●` cyan, `◦` dim, `✗` red, `!` yellow). */
function paint(line: string, c: ReturnType<typeof pc.createColors>): string {
  const colors: Record<string, (text: string) => string> = {
    "●": c.cyan,
    "◦": c.dim,
    "✗": c.red,
    "!": c.yellow,
  };
  return line.replace(MARKER_REGEXP, (_all, indent: string, marker: string) => {
    return indent + colors[marker]!(marker);
  });
}
