/**
 * Credential redaction (cli.md CLI-8): the values of credential variables are replaced by `***`
 * wherever text leaves the process. One {@link Redactor} per process holds the values; every
 * writer of stdout, stderr, NDJSON, JUnit and Record files applies it once, at that boundary.
 */

/** What a credential value becomes. */
const REDACTED = "***";

/** Shorter values are not redacted: they would match ordinary words and numbers. */
const MIN_SECRET_LENGTH = 6;

/**
 * A variable is a credential when its name (case-insensitive) is, or ends in `_` followed by, one
 * of these. Covers the variables of authoring.md §1.1 rule 5 (`OPENAI_API_KEY`, `E2B_API_KEY`,
 * `VERCEL_TOKEN`).
 */
const CREDENTIAL_NAME_REGEXP =
  /(?:^|_)(?:API_KEY|TOKEN|SECRET|PASSWORD|SECRET_KEY|ACCESS_KEY|PRIVATE_KEY)$/i;

/**
 * The shortest prefix (or suffix) of a value that is still redacted when text was cut next to it
 * with `…` (a truncated message): shorter ones say next to nothing about the value.
 */
const MIN_CUT_LENGTH = 4;

const ELLIPSIS = "…";
const BACKSLASH = 0x5c;
const DIGITS_REGEXP = /^[0-9]+$/;

/** True when a variable of that name holds a credential (CLI-8). */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME_REGEXP.test(name);
}

/**
 * The values of the credential variables among `entries` (an environment object or `.env`
 * entries) that are long enough to redact.
 */
export function credentialValues(
  entries: Readonly<Record<string, string>> | Iterable<readonly [string, string]>,
): string[] {
  const pairs = Symbol.iterator in entries
    ? entries as Iterable<readonly [string, string]>
    : Object.entries(entries);
  const values: string[] = [];
  for (const [name, value] of pairs) {
    if (isCredentialName(name) && value.length >= MIN_SECRET_LENGTH) values.push(value);
  }
  return values;
}

/** One value as it is searched for: raw, and as it appears inside a JSON string. */
interface Form {
  readonly text: string;
  /** Digits only: a match inside a longer number is not this value. */
  readonly digits: boolean;
}

/**
 * Replaces known secret values by `***`. Values only ever get added (the environment first, then
 * `.env`); with none, {@link Redactor.redact} returns its input at the cost of one length check.
 *
 * Every occurrence of every value is found first, overlapping ones are merged (so one value never
 * leaves a piece of another uncovered), and each merged span becomes one `***`. The text may be
 * JSON: each value is also searched for in its JSON-escaped form, and a span that starts or ends
 * inside an escape sequence (`\n`, `\"`, `\u00e9`) grows to cover the whole sequence, so that
 * redacted JSON stays valid.
 */
export class Redactor {
  /** Longest first: of two values that start at one place, the longer one decides the span. */
  #forms: Form[] = [];
  readonly #values = new Set<string>();

  /** Creates a redactor for `values` (more can be added later). */
  constructor(values: Iterable<string> = []) {
    this.add(values);
  }

  /** True while there is nothing to redact. */
  get isEmpty(): boolean {
    return this.#forms.length === 0;
  }

  /** Adds values to redact; values shorter than {@link MIN_SECRET_LENGTH} are ignored. */
  add(values: Iterable<string>): void {
    let added = false;
    for (const value of values) {
      if (value.length < MIN_SECRET_LENGTH || this.#values.has(value)) continue;
      this.#values.add(value);
      const escaped = JSON.stringify(value).slice(1, -1);
      for (const text of escaped === value ? [value] : [value, escaped]) {
        this.#forms.push({ text, digits: DIGITS_REGEXP.test(text) });
      }
      added = true;
    }
    if (added) this.#forms.sort((a, b) => b.text.length - a.text.length);
  }

  /** `text` with every known value replaced by `***`; `text` itself when nothing matched. */
  redact(text: string): string {
    if (this.#forms.length === 0 || text.length < MIN_CUT_LENGTH) return text;
    let spans: [number, number][] | undefined;
    for (const form of this.#forms) {
      for (let at = text.indexOf(form.text); at !== -1; at = text.indexOf(form.text, at + 1)) {
        const end = at + form.text.length;
        if (form.digits && (isDigitAt(text, at - 1) || isDigitAt(text, end))) continue;
        (spans ??= []).push([at, end]);
      }
    }
    if (text.includes(ELLIPSIS)) spans = this.#cutSpans(text, spans);
    return spans === undefined ? text : replaceSpans(text, spans);
  }

  /** Adds the spans of values cut by a truncation: a prefix before `…`, a suffix after it. */
  #cutSpans(
    text: string,
    spans: [number, number][] | undefined,
  ): [number, number][] | undefined {
    for (let e = text.indexOf(ELLIPSIS); e !== -1; e = text.indexOf(ELLIPSIS, e + 1)) {
      const after = e + ELLIPSIS.length;
      for (const { text: value } of this.#forms) {
        const before = text.charCodeAt(e - 1);
        for (let k = value.length - 1; k >= MIN_CUT_LENGTH; k--) {
          if (value.charCodeAt(k - 1) === before && text.startsWith(value.slice(0, k), e - k)) {
            (spans ??= []).push([e - k, e]);
            break;
          }
        }
        const first = text.charCodeAt(after);
        for (let k = value.length - 1; k >= MIN_CUT_LENGTH; k--) {
          const from = value.length - k;
          if (value.charCodeAt(from) === first && text.startsWith(value.slice(from), after)) {
            (spans ??= []).push([after, after + k]);
            break;
          }
        }
      }
    }
    return spans;
  }
}

function isDigitAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 0x30 && c <= 0x39;
}

/** Grows each span to whole escape sequences, merges overlapping ones, writes `***` for each. */
function replaceSpans(text: string, spans: [number, number][]): string {
  for (const span of spans) {
    const head = escapeAround(text, span[0]);
    if (head !== undefined && head[0] < span[0]) span[0] = head[0];
    const tail = escapeAround(text, span[1] - 1);
    if (tail !== undefined && tail[1] > span[1]) span[1] = Math.min(tail[1], text.length);
  }
  spans.sort((a, b) => a[0] - b[0]);
  let out = "";
  let copied = 0;
  let i = 0;
  while (i < spans.length) {
    let [start, end] = spans[i]!;
    for (i++; i < spans.length && spans[i]![0] <= end; i++) end = Math.max(end, spans[i]![1]);
    out += text.slice(copied, start) + REDACTED;
    copied = end;
  }
  return out + text.slice(copied);
}

/**
 * The JSON escape sequence (`\x` or `\uXXXX`) that covers position `i`, read as if `text` were
 * the inside of a JSON string; undefined when `i` is outside every escape.
 */
function escapeAround(text: string, i: number): [number, number] | undefined {
  for (let p = i; p >= 0 && p >= i - 5; p--) {
    if (text.charCodeAt(p) !== BACKSLASH) continue;
    let run = 1;
    while (p - run >= 0 && text.charCodeAt(p - run) === BACKSLASH) run++;
    // An even run: `p` is the escaped half of `\\`, which covers only `p` itself.
    if (run % 2 === 0) return p === i ? [p - 1, p + 1] : undefined;
    const end = p + (text[p + 1] === "u" ? 6 : 2);
    return i < end ? [p, end] : undefined;
  }
  return undefined;
}
