/** The flag table of `niceeval show`. */
import type { FlagSpec } from "./flags.ts";

/** Flags of `show`. */
export const SHOW_FLAGS: readonly FlagSpec[] = [
  {
    name: "run",
    value: "<id>",
    repeatable: true,
    description: "show these runs as stored (full run ID or a unique prefix of ≥ 8 characters)",
  },
  {
    name: "experiment",
    value: "<id>",
    repeatable: true,
    description: "current results of only these experiments (exact IDs)",
  },
  { name: "runs", description: "list the stored runs" },
  { name: "compare", description: "compare two runs or experiments: show --compare <A> <B>" },
  {
    name: "fail-on-regression",
    description: "with --compare, exit 1 when an eval regressed (default: off)",
  },
  { name: "json", description: "one JSON document on stdout (default: off)" },
  {
    name: "record",
    value: "<root>",
    description: "directory where results are stored (default: .niceeval/record)",
  },
];
