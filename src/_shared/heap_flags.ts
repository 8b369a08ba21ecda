/**
 * The V8 heap settings the launchers that can pass V8 flags use: the npm launcher
 * (`npm/bin/niceeval.cjs`, which spells them out too; a test keeps both equal) and the compiled
 * binary (`compile.ts` builds them in). A young generation of 2 MB semi-spaces and an old
 * generation that grows 30 % past the live heap instead of up to 4 ×: measured in
 * docs/memory.md, they roughly halve the peak memory of a long run for about 20 % more CPU time
 * in the runner.
 */
export const LAUNCHER_V8_FLAGS = "--max-semi-space-size=2,--heap-growing-percent=30";
