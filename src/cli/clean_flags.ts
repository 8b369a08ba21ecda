/** The flag table of `niceeval clean`. */
import type { FlagSpec } from "./flags.ts";

/** Flags of `clean`. */
export const CLEAN_FLAGS: readonly FlagSpec[] = [
  {
    name: "record",
    value: "<root>",
    description: "directory where results are stored (default: .niceeval/record)",
  },
  {
    name: "discard",
    description: "delete what killed runs left instead of keeping their finished Attempts",
  },
];
