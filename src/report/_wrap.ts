/**
 * Breaking a line of permanent output at a width (issue 18 item 5, docs/progress.md): between
 * words, never inside one, preferring the ` · ` separators and never right after a number, so
 * `0 reused` and `12 passed` stay together and run IDs and locators stay whole.
 */
import stringWidth from "string-width";

/** Where a line may break after a word: 2 after a `·`, 1 after a plain word, 0 after a number. */
type BreakRank = 0 | 1 | 2;

const NUMBER_REGEXP = /^[(~<$]*[\d.,:/]+[%×]?$/;

interface Word {
  readonly text: string;
  /** The spaces after the word in the source line. */
  readonly space: string;
  /** How good a break after this word is. */
  readonly rank: BreakRank;
}

function wordsOf(text: string): Word[] {
  const parts = [...text.matchAll(/(\S+)(\s*)/g)].map(([, word, space]) => [word!, space!]);
  return parts.map(([word, space], i) => {
    const next = parts[i + 1]?.[0];
    const rank: BreakRank = next === "·" || NUMBER_REGEXP.test(word!) ? 0 : word === "·" ? 2 : 1;
    return { text: word!, space: space!, rank };
  });
}

/** Words `from` to `to` (exclusive) as one line, without the last word's trailing spaces. */
function join(words: readonly Word[], from: number, to: number): string {
  return words.slice(from, to).map((w, i) => i < to - from - 1 ? w.text + w.space : w.text)
    .join("");
}

/**
 * The end (exclusive) of the line that starts at word `from` within `room` columns: after a `·`
 * when that fills at least half the room, else after the last word that is not a number, else
 * after the last word that fits, else after one word (a word wider than the room).
 */
function lineEnd(words: readonly Word[], from: number, room: number): number {
  let fit = from + 1;
  while (fit < words.length && stringWidth(join(words, from, fit + 1)) <= room) fit++;
  const last = (rank: BreakRank) => {
    for (let end = fit; end > from; end--) if (words[end - 1]!.rank >= rank) return end;
    return null;
  };
  const dot = last(2);
  if (dot !== null && stringWidth(join(words, from, dot)) * 2 >= room) return dot;
  return last(1) ?? fit;
}

/**
 * `text` broken into lines of at most `width` columns; each continuation line gets the first
 * line's indent plus two spaces. A word is never split: a word wider than the width stays whole on
 * its own line (the caller cuts it when it must).
 */
export function wrapWidth(text: string, width: number): string[] {
  if (stringWidth(text) <= width) return [text];
  const indent = /^\s*/.exec(text)![0];
  const words = wordsOf(text.slice(indent.length));
  const lines: string[] = [];
  let from = 0;
  while (from < words.length) {
    const lead = lines.length === 0 ? indent : indent + "  ";
    const rest = lead + join(words, from, words.length);
    if (stringWidth(rest) <= width) {
      lines.push(rest);
      break;
    }
    const end = lineEnd(words, from, width - stringWidth(lead));
    lines.push(lead + join(words, from, end));
    from = end;
  }
  return lines;
}
