/** A seeded {@link Random} (mulberry32) for reproducible tests (toolchain.md §5.6). */
import type { Random } from "../../src/_shared/random.ts";

/** Creates a deterministic random source from `seed`. */
export function createSeededRandom(seed = 1): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const hex = (n: number) =>
    Array.from({ length: n }, () => Math.floor(next() * 16).toString(16)).join("");
  return {
    next,
    uuid: () => {
      const variant = (8 + Math.floor(next() * 4)).toString(16);
      return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
    },
  };
}

/** A random source that returns the given values in order (then repeats the last). */
export function createScriptedRandom(values: readonly number[]): Random {
  let i = 0;
  const base = createSeededRandom(7);
  return {
    next: () => values[Math.min(i++, values.length - 1)] ?? 0,
    uuid: () => base.uuid(),
  };
}
