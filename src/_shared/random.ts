/**
 * The only source of randomness for niceeval (STYLE.md §9). Tests pass a seeded source.
 */

/** Random numbers and identifiers. */
export interface Random {
  /** A uniform number in [0, 1). */
  next(): number;
  /** A lowercase UUID v4. */
  uuid(): string;
}

/** Randomness from the platform's cryptographic generator. */
export const realRandom: Random = {
  next: () => Math.random(),
  uuid: () => crypto.randomUUID(),
};

/** Eight lowercase hex digits drawn from `random`, for temporary file names. */
export function randomHex8(random: Random): string {
  return Math.floor(random.next() * 0x1_0000_0000).toString(16).padStart(8, "0");
}
