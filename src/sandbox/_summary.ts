/** Command summaries and redaction for evidence and error messages (sandboxes.md rules 30–31). */
import { SandboxCommandError } from "./errors.ts";
import type { CommandResult, ExecCommand } from "./types.ts";

/** Longest command summary kept in evidence. */
const SUMMARY_MAX_CHARS = 200;
/** Characters of output quoted by `SandboxCommandError`. */
const OR_THROW_TAIL_CHARS = 2000;

const PLAIN_ARG_REGEXP = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** Replaces every non-empty sensitive value with `***`, longest first. */
function redact(text: string, values: readonly string[]): string {
  const sorted = values.filter((v) => v !== "").sort((a, b) => b.length - a.length);
  let out = text;
  for (const value of sorted) out = out.split(value).join("***");
  return out;
}

/** Quotes one argument the way a POSIX shell would read it back. */
function quoteArg(arg: string): string {
  if (PLAIN_ARG_REGEXP.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** A one-line, redacted summary of at most 200 characters. */
export function commandSummary(command: ExecCommand, sensitive: readonly string[]): string {
  const text = "argv" in command
    ? command.argv.map(quoteArg).join(" ")
    : command.script.replace(/\s+/g, " ").trim();
  return truncate(redact(text, sensitive), SUMMARY_MAX_CHARS);
}

/** Cuts `text` to `max` characters, marking the cut with `…`. */
function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : chars.slice(0, max - 1).join("") + "…";
}

/** The last `max` characters of `text`. */
function tail(text: string, max: number): string {
  return text.length <= max ? text : text.slice(text.length - max);
}

/** Builds the `*OrThrow` error (rule 30). */
export function commandError(
  result: CommandResult,
  options: { command: ExecCommand; sensitiveValues: readonly string[] },
): SandboxCommandError {
  const { command, sensitiveValues } = options;
  const output = result.stderr !== "" ? result.stderr : result.stdout;
  const quoted = tail(redact(output, sensitiveValues), OR_THROW_TAIL_CHARS);
  const head = `command failed (exit ${result.exitCode}): ${
    commandSummary(command, sensitiveValues)
  }`;
  return new SandboxCommandError(result, quoted === "" ? head : `${head}\n${quoted}`);
}
