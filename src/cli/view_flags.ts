/** The flag table of `niceeval view`. */
import type { FlagSpec } from "./flags.ts";

/** Where the report goes without `--out`, relative to the project. */
export const DEFAULT_REPORT_PATH = ".niceeval/report.html";

/** Flags of `view`. */
export const VIEW_FLAGS: readonly FlagSpec[] = [
  {
    name: "run",
    value: "<id>",
    repeatable: true,
    description: "report these runs as stored (full run ID or a unique prefix of ≥ 8 characters)",
  },
  {
    name: "experiment",
    value: "<id>",
    repeatable: true,
    description: "current results of only these experiments (exact IDs)",
  },
  {
    name: "compare",
    description: "add a comparison page of two runs or experiments: view --compare <A> <B>",
  },
  {
    name: "out",
    value: "<file>",
    description: `write the report to this file (default: ${DEFAULT_REPORT_PATH})`,
  },
  {
    name: "open",
    description: "open the report in the browser ($BROWSER, else the system's opener)",
  },
  {
    name: "serve",
    description:
      "serve the report on 127.0.0.1, rebuilt whenever a run finishes or is removed, until Ctrl-C",
  },
  {
    name: "port",
    value: "<n>",
    description: "with --serve: the port; integer 1–65535 (default: a free port)",
  },
  {
    name: "record",
    value: "<root>",
    description: "directory where results are stored (default: .niceeval/record)",
  },
];
