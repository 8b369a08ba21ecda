/** The flag table of `niceeval clean`. */
import type { FlagSpec } from "./flags.ts";

/** Flags of `clean`. */
export const CLEAN_FLAGS: readonly FlagSpec[] = [
  {
    name: "record",
    value: "<root>",
    description: "Record root directory (default: .niceeval/record)",
  },
  {
    name: "discard",
    description: "delete unpublished Runs instead of salvaging their finished Attempts",
  },
];
