/** Which human output a terminal gets (OUT-H1, OUT-H2, OUT-H17, cli.md CLI-9). */
import { MIN_BOX_WIDTH } from "./_frame.ts";

/** The terminal facts the choice depends on. */
interface TerminalFacts {
  /** Environment snapshot (`CI`, `TERM`, `NO_COLOR`). */
  readonly env: Readonly<Record<string, string>>;
  readonly stdoutIsTerminal: boolean;
  readonly stderrIsTerminal: boolean;
  /** Columns of stdout, when known. */
  readonly stdoutColumns?: number | undefined;
}

/** How `exp` speaks to a human. */
interface HumanMode {
  /** Live panel on stderr (OUT-H1); else plain, append-only output. */
  readonly live: boolean;
  /** `NO_COLOR` is set and non-empty: no colour, no boxes anywhere. */
  readonly noColor: boolean;
  /** Permanent output (PLAN, end panels) is boxed (OUT-H2). */
  readonly boxed: boolean;
  /** Permanent output is coloured (live mode on a terminal without `NO_COLOR`). */
  readonly color: boolean;
  /** Width of permanent output: stdout's columns, 80 when unknown. */
  readonly width: number;
  /**
   * Unboxed permanent lines are broken at spaces to the width: stdout is a terminal, which would
   * otherwise wrap them inside a word (issue 18 item 5). Logs and pipes keep each line whole.
   */
  readonly wrap: boolean;
}

/** Width assumed when the terminal does not say (OUT-H2). */
const DEFAULT_WIDTH = 80;

/** Decides live or plain mode, boxes and colour. */
export function humanMode(facts: TerminalFacts): HumanMode {
  const { env } = facts;
  const ci = env.CI !== undefined && env.CI !== "" && env.CI !== "false" && env.CI !== "0";
  const live = facts.stderrIsTerminal && !ci && env.TERM !== "dumb";
  const noColor = (env.NO_COLOR ?? "") !== "";
  const width = facts.stdoutColumns || DEFAULT_WIDTH;
  return {
    live,
    noColor,
    boxed: facts.stdoutIsTerminal && !noColor && width >= MIN_BOX_WIDTH,
    // Plain mode stays free of escape sequences, so CI logs diff cleanly.
    color: live && facts.stdoutIsTerminal && !noColor,
    width,
    wrap: facts.stdoutIsTerminal,
  };
}
