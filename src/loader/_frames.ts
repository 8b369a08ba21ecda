/**
 * Stack frames of embedded user code (toolchain.md §8.8): the runtime shows positions in the
 * evaluated text that holds the bodies, under its `sourceURL`, so frames of user files are
 * rewritten through each file's source map to what the native loader shows: the file's `file:`
 * URL, line and column. Every reader of stacks (error locations, call sites, a layer's declaring
 * file) then works the same in both modes.
 */
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";

/** V8's structured stack frame, as `Error.prepareStackTrace` receives it. */
interface CallSite {
  getFileName(): string | undefined | null;
  getScriptNameOrSourceURL?(): string | undefined | null;
  getFunctionName(): string | null;
  isAsync?(): boolean;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
  toString(): string;
}

type PrepareStackTrace = (error: Error, sites: CallSite[]) => unknown;

/** V8's stack-trace API on `Error`. */
interface V8ErrorConstructor {
  prepareStackTrace?: PrepareStackTrace | undefined;
}

/** Name of the function each user file's body runs in: its frames show as the module's own. */
export const BODY_NAME = "__niceeval_module__";

/** A user file as the runtime sees it: its data URL, its `file:` URL and its source map. */
export interface FrameSource {
  /** The user file's `file:` URL. */
  readonly url: string;
  /**
   * The generated line (0-based) of the module on which the file's code starts: one module holds
   * the bodies of several files (docs/loader.md "One module graph").
   * @default 0
   */
  readonly line?: number;
  /** Characters the wrapper adds before the code on the first generated line. */
  readonly firstLineOffset: number;
  /** The `mappings` of the file's source map (decoded on the first frame that needs it). */
  readonly mappings: string;
}

/** Generated line (0-based) → segments `[generatedColumn, originalLine, originalColumn]`. */
type LineTable = readonly (readonly (readonly [number, number, number])[])[];

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/**
 * The frame rewriter of one embedded loader: it knows the data URLs of the files it evaluated.
 * Installing it wraps the current `Error.prepareStackTrace`, so that several loaders (tests)
 * compose; frames it does not know are formatted as the runtime formats them.
 */
export class FrameRewriter {
  /** Per data URL, the files whose code it holds, by increasing start line. */
  readonly #sources = new Map<string, FrameSource[]>();
  readonly #tables = new Map<FrameSource, LineTable>();

  /** Registers the data URL under which a user file runs (files of one URL in line order). */
  add(url: string, source: FrameSource): void {
    const sources = this.#sources.get(url);
    if (sources === undefined) this.#sources.set(url, [source]);
    else sources.push(source);
  }

  /**
   * Installs the rewriter as `Error.prepareStackTrace`; returns a function that restores the
   * previous one when it is still the rewriter's.
   */
  install(): () => void {
    const errorClass = Error as unknown as V8ErrorConstructor;
    const previous = errorClass.prepareStackTrace;
    const prepare: PrepareStackTrace = (error, sites) => {
      const mapped = sites.map((site) => this.#frame(site));
      if (previous !== undefined && mapped.every((frame) => frame === undefined)) {
        return previous(error, sites);
      }
      return header(error) + sites.map((site, i) => `\n    at ${mapped[i] ?? frame(site)}`)
        .join("");
    };
    errorClass.prepareStackTrace = prepare;
    return () => {
      if (errorClass.prepareStackTrace === prepare) errorClass.prepareStackTrace = previous;
    };
  }

  /** The rewritten text of a frame of one of this loader's files, else undefined. */
  #frame(site: CallSite): string | undefined {
    // Evaluated code names itself with a `sourceURL`; the runtime gives no file name for it.
    const url = site.getScriptNameOrSourceURL?.() ?? site.getFileName();
    if (typeof url !== "string" || !this.#sources.has(url)) return undefined;
    const line = (site.getLineNumber() ?? 1) - 1;
    const source = this.#sources.get(url)?.findLast((s) => (s.line ?? 0) <= line);
    if (source === undefined) return undefined;
    const column = site.getColumnNumber() ?? 1;
    const where = this.#original(source, line - (source.line ?? 0), column - 1);
    const location = `${source.url}:${where[0] + 1}:${where[1] + 1}`;
    // The body's own frame is the module's top level, which the runtime shows without a name.
    if (site.getFunctionName() === BODY_NAME) {
      return `${site.isAsync?.() ? "async " : ""}${location}`;
    }
    const text = frame(site);
    const at = text.lastIndexOf(url);
    if (at < 0) return location;
    const end = text.indexOf(")", at);
    return `${text.slice(0, at)}${location}${end < 0 ? "" : text.slice(end)}`;
  }

  /** Original `[line, column]` (0-based) of a generated position; the generated one if unmapped. */
  #original(source: FrameSource, line: number, column: number): [number, number] {
    let table = this.#tables.get(source);
    if (table === undefined) {
      table = decodeMappings(source.mappings);
      this.#tables.set(source, table);
    }
    const col = line === 0 ? column - source.firstLineOffset : column;
    const segments = table[line] ?? [];
    let found: readonly [number, number, number] | undefined;
    for (const segment of segments) {
      if (segment[0] > col) break;
      found = segment;
    }
    found ??= segments[0];
    return found === undefined ? [line, col] : [found[1], found[2]];
  }
}

function header(error: Error): string {
  try {
    const name = error.name ?? "Error";
    const message = error.message ?? "";
    return message === "" ? String(name) : `${name}: ${message}`;
  } catch {
    return "Error";
  }
}

/** A frame as the runtime formats it, local files shown as `file:` URLs. */
function frame(site: CallSite): string {
  try {
    const text = site.toString();
    const name = site.getFileName();
    if (typeof name !== "string" || !isAbsolute(name)) return text;
    const at = text.lastIndexOf(name);
    return at < 0
      ? text
      : text.slice(0, at) + pathToFileURL(name).href + text.slice(at + name.length);
  } catch {
    return "<unknown>";
  }
}

/** Decodes source-map `mappings` (VLQ) into per-line segments with original positions. */
export function decodeMappings(mappings: string): LineTable {
  const lines: [number, number, number][][] = [];
  let originalLine = 0;
  let originalColumn = 0;
  let sourceIndex = 0;
  let nameIndex = 0;
  for (const lineText of mappings.split(";")) {
    const segments: [number, number, number][] = [];
    let generatedColumn = 0;
    for (const segmentText of lineText.split(",")) {
      if (segmentText === "") continue;
      const fields = decodeVlq(segmentText);
      generatedColumn += fields[0] ?? 0;
      if (fields.length >= 4) {
        sourceIndex += fields[1]!;
        originalLine += fields[2]!;
        originalColumn += fields[3]!;
        if (fields.length >= 5) nameIndex += fields[4]!;
        segments.push([generatedColumn, originalLine, originalColumn]);
      }
    }
    lines.push(segments);
  }
  void sourceIndex;
  void nameIndex;
  return lines;
}

function decodeVlq(text: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of text) {
    const digit = BASE64.indexOf(char);
    if (digit < 0) break;
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
    } else {
      values.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return values;
}
