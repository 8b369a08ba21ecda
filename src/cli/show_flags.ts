/** The flag table of `niceeval show`. */
import type { FlagSpec } from "./flags.ts";

/** Flags of `show`. */
export const SHOW_FLAGS: readonly FlagSpec[] = [
  {
    name: "run",
    value: "<id>",
    repeatable: true,
    description:
      "show these published Runs as stored (full RunId or a unique prefix of ≥ 8 characters)",
  },
  {
    name: "experiment",
    value: "<id>",
    repeatable: true,
    description: "project-current scope: only these experiments (exact IDs)",
  },
  { name: "runs", description: "list the published Runs" },
  { name: "compare", description: "compare two Runs or experiments: show --compare <A> <B>" },
  {
    name: "fail-on-regression",
    description: "with --compare, exit 1 when an eval regressed (default: off)",
  },
  { name: "json", description: "one JSON document on stdout (default: off)" },
  {
    name: "record",
    value: "<root>",
    description: "Record root directory (default: .niceeval/record)",
  },
];
