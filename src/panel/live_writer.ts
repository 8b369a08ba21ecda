/**
 * The live-mode writer (OUT-H6): owns the redraw timers and the terminal. It draws the panel on
 * stderr at most 4 times per second and only when the frame changed, refreshes elapsed times at
 * least once per second, erases the panel before each permanent stdout line and redraws it after,
 * and hides the cursor while the panel is up.
 */
import { cursorHide, cursorLeft, cursorShow, cursorUp, eraseDown } from "ansi-escapes";
import type { Clock, RunEvent, TimerHandle } from "../_shared/mod.ts";
import { MIN_BOX_WIDTH } from "./_frame.ts";
import { reducePanel } from "./reduce.ts";
import { renderPanel } from "./render.ts";
import { createPanelState, type PanelStart, type PanelState } from "./state.ts";

/** Minimum time between two frames: at most 4 redraws per second (OUT-H6). */
export const FRAME_MS = 250;
/** Elapsed times refresh at least this often (OUT-H6). */
export const TICK_MS = 1_000;
/** Width assumed when the terminal does not say (OUT-H2). */
const FALLBACK_COLUMNS = 80;

/** The terminal stream the panel is drawn on. */
interface PanelSink {
  write(text: string): void;
  /** Terminal columns, when known. */
  columns(): number | undefined;
  /** Terminal rows, when known. */
  rows?(): number | undefined;
}

/** Options of {@link LiveWriter}. */
interface LiveWriterOptions {
  /** Where the panel is drawn (stderr, OUT-H1). */
  readonly panel: PanelSink;
  /** Where permanent lines go (stdout). */
  readonly lines: { write(text: string): void };
  readonly clock: Clock;
  /** `NO_COLOR` is set: the panel is drawn without colour and unboxed (OUT-H17). */
  readonly noColor: boolean;
}

/** Draws the live panel of one run. */
export class LiveWriter {
  readonly #o: LiveWriterOptions;
  #state: PanelState;
  /** The frame on screen, or "" when none is. */
  #drawn = "";
  #height = 0;
  #lastDrawAt = -Infinity;
  #frameTimer: TimerHandle | undefined;
  #tickTimer: TimerHandle | undefined;
  #phase: "new" | "running" | "stopped" = "new";

  constructor(start: PanelStart, options: LiveWriterOptions) {
    this.#o = options;
    this.#state = createPanelState(start);
  }

  /** Hides the cursor and draws the first frame. */
  start(): void {
    if (this.#phase !== "new") return;
    this.#phase = "running";
    this.#draw(cursorHide);
    this.#tick();
  }

  /**
   * Folds one run event into the panel and writes the permanent lines it caused above it; the
   * redraw follows within FRAME_MS.
   */
  event(event: RunEvent, lines: readonly string[] = []): void {
    this.#state = reducePanel(this.#state, event);
    this.permanent(lines);
    this.#request();
  }

  /** Writes permanent lines above the panel: erase, write, redraw (OUT-H6, OUT-H9). */
  permanent(lines: readonly string[]): void {
    if (lines.length === 0) return;
    if (this.#height > 0) this.#o.panel.write(this.#eraseSequence());
    this.#drawn = "";
    this.#height = 0;
    this.#o.lines.write(lines.map((line) => line + "\n").join(""));
    this.#request();
  }

  /** Erases the panel for good, shows the cursor and cancels every timer. Idempotent. */
  stop(): void {
    if (this.#phase === "stopped") return;
    const wasRunning = this.#phase === "running";
    this.#phase = "stopped";
    this.#clear("frame");
    this.#clear("tick");
    const text = this.#eraseSequence() + (wasRunning ? cursorShow : "");
    this.#height = 0;
    this.#drawn = "";
    if (text) this.#o.panel.write(text);
  }

  #request(): void {
    if (this.#phase !== "running" || this.#frameTimer !== undefined) return;
    const wait = this.#lastDrawAt + FRAME_MS - this.#o.clock.now();
    if (wait <= 0) this.#draw();
    else {
      this.#frameTimer = this.#o.clock.setTimeout(() => {
        this.#frameTimer = undefined;
        this.#draw();
      }, wait);
    }
  }

  #tick(): void {
    this.#tickTimer = this.#o.clock.setTimeout(() => {
      this.#tickTimer = undefined;
      this.#request();
      this.#tick();
    }, TICK_MS);
  }

  /** Renders the panel and writes it when it changed; `prefix` is written in the same call. */
  #draw(prefix = ""): void {
    const { panel, clock, noColor } = this.#o;
    const width = panel.columns() || FALLBACK_COLUMNS;
    const rows = panel.rows?.();
    const lines = renderPanel(this.#state, {
      width,
      now: clock.now(),
      color: !noColor,
      boxed: !noColor && width >= MIN_BOX_WIDTH,
      ...(rows ? { rows } : {}),
    });
    const text = lines.map((line) => line + "\n").join("");
    if (text === this.#drawn) {
      if (prefix) panel.write(prefix);
      return;
    }
    panel.write(prefix + this.#eraseSequence() + text);
    this.#drawn = text;
    this.#height = lines.length;
    this.#lastDrawAt = clock.now();
  }

  /** Moves to the panel's first line and clears to the end of the screen. */
  #eraseSequence(): string {
    return this.#height === 0 ? "" : cursorUp(this.#height) + cursorLeft + eraseDown;
  }

  #clear(which: "frame" | "tick"): void {
    const handle = which === "frame" ? this.#frameTimer : this.#tickTimer;
    if (handle !== undefined) this.#o.clock.clearTimeout(handle);
    if (which === "frame") this.#frameTimer = undefined;
    else this.#tickTimer = undefined;
  }
}
