/** `.env` parsing (authoring.md §1.1 rules 3–4): credentials only, never overriding set variables. */
import { UsageError } from "../_shared/mod.ts";

const LINE_REGEXP = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

/**
 * Parses `.env` text into ordered entries. A malformed line throws `env.invalid-line` naming the
 * line number and never the value.
 */
export function parseEnvFile(text: string, file = ".env"): [string, string][] {
  const out: [string, string][] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const match = LINE_REGEXP.exec(line);
    const value = match ? unquote(match[2]!) : undefined;
    if (!match || value === undefined) {
      throw new UsageError(
        "env.invalid-line",
        `${file}:${i + 1}: expected KEY=value`,
        "fix or remove that line; values may be wrapped in single or double quotes",
      );
    }
    out.push([match[1]!, value]);
  });
  return out;
}

function unquote(value: string): string | undefined {
  if (value.startsWith("'")) {
    return value.length >= 2 && value.endsWith("'") && !value.slice(1, -1).includes("'")
      ? value.slice(1, -1)
      : undefined;
  }
  if (value.startsWith('"')) {
    if (value.length < 2 || !value.endsWith('"')) return undefined;
    return unescapeDouble(value.slice(1, -1));
  }
  return /["'\s]/.test(value) && !/^[^"']*$/.test(value) ? undefined : value;
}

function unescapeDouble(body: string): string | undefined {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '"') return undefined;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const next = body[++i];
    const mapped = next === "n"
      ? "\n"
      : next === "t"
      ? "\t"
      : next === '"'
      ? '"'
      : next === "\\"
      ? "\\"
      : undefined;
    if (mapped === undefined) return undefined;
    out += mapped;
  }
  return out;
}

/**
 * The entries of `parsed` whose keys are not yet set in `env` (even to ""). A key given twice in
 * the file takes its last value, as sourcing the file in a shell would.
 */
export function missingEnvEntries(
  parsed: readonly [string, string][],
  env: Readonly<Record<string, string>>,
): [string, string][] {
  const out = new Map<string, string>();
  for (const [key, value] of parsed) {
    if (!Object.hasOwn(env, key)) out.set(key, value);
  }
  return [...out];
}
