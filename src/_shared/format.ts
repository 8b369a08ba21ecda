/** Number formats shared by every human output (cli.md OUT-H4). */

/** `0.4s`, `54s`, `2m 14s`, `1h 03m`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${(Math.floor(s * 10) / 10).toFixed(1)}s`;
  if (s < 60) return `${Math.floor(s)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(Math.floor(s % 60)).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** `812`, `18.4k`, `4.56M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(Math.round(n));
  if (n < 1_000_000) return `${trim((n / 1000).toFixed(1))}k`;
  return `${trim((n / 1_000_000).toFixed(2))}M`;
}

/** `~$0.84`, or `<$0.01` below half a cent. */
export function formatCost(usd: number): string {
  return usd < 0.005 ? "<$0.01" : `~$${usd.toFixed(2)}`;
}

/** At most two decimals, trailing zeros dropped: `2`, `0.75`. */
export function formatScore(n: number): string {
  return trim((Math.round(n * 100) / 100).toFixed(2));
}

/** `1 attempt`, `2 attempts`. */
export function plural(n: number, noun: string, pluralNoun = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : pluralNoun}`;
}

function trim(text: string): string {
  return text.includes(".") ? text.replace(/\.?0+$/, "") : text;
}
