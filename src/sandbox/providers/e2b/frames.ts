/**
 * The exec wrapper of rule 123 and its control-frame parser. The wrapper starts the command with
 * `setsid` in the background (so it leads its own process group), hands it the wrapper's stdin
 * explicitly, reports `\x1e<marker>:pgid:<n>\n` on stdout, waits, and reports
 * `\x1e<marker>:exit:<code>\n` on stdout and on stderr. The marker is printed at run time from
 * octal escapes, so it never appears literally in the command text.
 */

/** Starts every control frame (ASCII record separator). */
const FRAME_START = "\x1e";
/** The longest frame body after `<marker>:` that can be valid (`pgid:` plus 10 digits). */
const MAX_BODY = 16;
const BODY_REGEXP = /^(pgid|exit):(\d{1,10})$/;
const BODY_PREFIX_REGEXP = /^(?:p(?:g(?:i(?:d(?::\d*)?)?)?)?|e(?:x(?:i(?:t(?::\d*)?)?)?)?)?$/;

/** A control frame's content or payload text, in stream order. */
export type FrameEvent =
  | { readonly kind: "data"; readonly text: string }
  | { readonly kind: "pgid" | "exit"; readonly value: number };

/** A control frame that cannot be parsed: the sandbox is retired (rule 123). */
export class FrameProtocolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FrameProtocolError";
  }
}

/** Quotes one argument for a POSIX shell. */
export function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** The wrapper around `command` (already a shell command line) reporting with `marker`. */
export function wrapCommand(command: string, marker: string): string {
  const octal = [...marker].map((c) => `\\${c.charCodeAt(0).toString(8).padStart(3, "0")}`)
    .join("");
  return [
    `m=$(printf '${octal}')`,
    "exec 3<&0",
    `setsid ${command} <&3 3<&- & p=$!`,
    "exec 3<&-",
    `printf '\\036%s:pgid:%s\\n' "$m" "$p"`,
    'wait "$p"; c=$?',
    `printf '\\036%s:exit:%s\\n' "$m" "$c"`,
    `printf '\\036%s:exit:%s\\n' "$m" "$c" >&2`,
    'exit "$c"',
  ].join("; ");
}

/** The shell command line for an argv (every argument quoted) or a script. */
export function commandLine(
  command: { readonly argv: readonly string[] } | { readonly script: string },
  shell: "bash" | "sh",
): string {
  if ("argv" in command) return command.argv.map(shellQuote).join(" ");
  return `/bin/${shell} -c ${shellQuote(command.script)}`;
}

/**
 * Parses one stream: strips control frames of `marker`, also when a frame is split across
 * chunks, and passes every other byte through. A line that starts with `\x1e<marker>:` but is not
 * a valid frame throws {@link FrameProtocolError}.
 */
export class FrameParser {
  readonly #prefix: string;
  #held = "";

  constructor(marker: string) {
    this.#prefix = `${FRAME_START}${marker}:`;
  }

  /** Parses the next chunk. */
  feed(chunk: string): FrameEvent[] {
    const text = this.#held + chunk;
    this.#held = "";
    const events: FrameEvent[] = [];
    const data = (s: string) => {
      if (s === "") return;
      const last = events.at(-1);
      if (last?.kind === "data") events[events.length - 1] = { kind: "data", text: last.text + s };
      else events.push({ kind: "data", text: s });
    };
    let pos = 0;
    while (pos < text.length) {
      const start = text.indexOf(FRAME_START, pos);
      if (start < 0) {
        data(text.slice(pos));
        break;
      }
      data(text.slice(pos, start));
      const rest = text.slice(start);
      const step = this.#frameAt(rest);
      if (step === "more") {
        this.#held = rest;
        break;
      }
      if (step === "data") {
        data(FRAME_START);
        pos = start + 1;
        continue;
      }
      events.push(step.event);
      pos = start + step.length;
    }
    return events;
  }

  /** The stream ended: held bytes that started a frame of this marker are a truncated frame. */
  end(): FrameEvent[] {
    const held = this.#held;
    this.#held = "";
    if (held === "") return [];
    if (held.startsWith(this.#prefix)) {
      throw new FrameProtocolError(`Cannot parse a control frame: the stream ended inside one`);
    }
    return [{ kind: "data", text: held }];
  }

  #frameAt(
    rest: string,
  ): "more" | "data" | { event: FrameEvent; length: number } {
    const prefix = this.#prefix;
    if (rest.length < prefix.length) return prefix.startsWith(rest) ? "more" : "data";
    if (!rest.startsWith(prefix)) return "data";
    const newline = rest.indexOf("\n", prefix.length);
    const body = rest.slice(prefix.length, newline < 0 ? undefined : newline);
    if (newline < 0) {
      if (body.length <= MAX_BODY && BODY_PREFIX_REGEXP.test(body)) return "more";
      throw malformed(body);
    }
    const match = BODY_REGEXP.exec(body);
    if (!match) throw malformed(body);
    const event = { kind: match[1] as "pgid" | "exit", value: Number(match[2]) };
    return { event, length: newline + 1 };
  }
}

function malformed(body: string): FrameProtocolError {
  return new FrameProtocolError(
    `Cannot parse a control frame: ${JSON.stringify(body.slice(0, MAX_BODY + 4))}`,
  );
}
