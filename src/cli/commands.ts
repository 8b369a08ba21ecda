/**
 * The command table (CLI-4): every command's usage, summary, flags and examples, and the command
 * groups. Plain data, so routing and `--version` load no help renderer (docs/start.md).
 */
import { EXP_FLAGS, EXP_LIST_FLAGS, type FlagSpec, INIT_FLAGS, LIST_FLAGS } from "./flags.ts";
import { CLEAN_FLAGS } from "./clean_flags.ts";
import { SHOW_FLAGS } from "./show_flags.ts";
import { VIEW_FLAGS } from "./view_flags.ts";

/** Flags of `sandbox list` (sandboxes.md §7.3). */
export const SANDBOX_LIST_FLAGS: readonly FlagSpec[] = [
  { name: "orphans", description: "only orphaned and unverified sandboxes (default: all)" },
  {
    name: "provider",
    value: "<name>",
    description:
      "only this provider: local, docker, e2b or vercel (default: all that can be reached)",
  },
  { name: "json", description: "one JSON document on stdout (default: off)" },
];

/** Flags of `sandbox prune` (sandboxes.md §7.3). */
export const SANDBOX_PRUNE_FLAGS: readonly FlagSpec[] = [
  {
    name: "force",
    description: "also destroy sandboxes whose owner cannot be verified (default: orphans only)",
  },
  {
    name: "provider",
    value: "<name>",
    description:
      "only this provider: local, docker, e2b or vercel (default: all that can be reached)",
  },
  { name: "json", description: "one JSON document on stdout (default: off)" },
];

/** Flags of `doctor docker` (sandboxes.md §8.2.4). */
export const DOCTOR_FLAGS: readonly FlagSpec[] = [
  { name: "json", description: "one JSON document on stdout (default: off)" },
];

/** Flags of `ramp hold` (CMD-18). */
export const RAMP_HOLD_FLAGS: readonly FlagSpec[] = [
  {
    name: "reason",
    value: "<text>",
    description:
      "why the ramp is held, shown in every live run's panel; 1–200 characters (required)",
  },
];

/** The help of one command. */
export interface CommandHelp {
  readonly usage: string;
  readonly summary: string;
  readonly flags: readonly FlagSpec[];
  readonly examples: readonly [string, string];
}

/** Every command with its help. */
export const COMMANDS: Readonly<Record<string, CommandHelp>> = {
  init: {
    usage: "[--example]",
    summary: "Scaffold a niceeval project in the current directory",
    flags: INIT_FLAGS,
    examples: ["niceeval init", "niceeval init --example"],
  },
  list: {
    usage: "[eval-prefix...] [--tag <t>]... [--json]",
    summary: "List the discovered evals",
    flags: LIST_FLAGS,
    examples: ["niceeval list", "niceeval list greet --tag smoke"],
  },
  exp: {
    usage:
      "[experiment-selector [eval-prefix...]] [flags]  |  exp <selector> --teardown [--recover-shared-state <key> …]",
    summary:
      "Run the evals of the selected experiments, reusing earlier results; with --teardown, only clean up after killed runs",
    flags: EXP_FLAGS,
    examples: ["niceeval exp local", "niceeval exp checks --rerun all --json"],
  },
  show: {
    usage:
      "[@<locator> | --run <id>... | --runs | --compare <A> <B>] [--experiment <id>]... [--json] [--record <root>]",
    summary:
      "Show results: the current ones, stored runs, one Attempt in full, or two runs compared",
    flags: SHOW_FLAGS,
    examples: ["niceeval show", "niceeval show --compare <runA> <runB>"],
  },
  view: {
    usage:
      "[--run <id>... | --experiment <id>...] [--compare <A> <B>] [--out <file>] [--open] [--serve [--port <n>]] [--record <root>]",
    summary:
      "Build one self-contained HTML report of the results (overview, matrix, Attempts, charts)",
    flags: VIEW_FLAGS,
    examples: ["niceeval view --open", "niceeval view --compare <runA> <runB>"],
  },
  clean: {
    usage: "[--record <root>] [--discard]",
    summary:
      "Finish the results of killed runs (their finished Attempts are kept) and remove what cannot be kept",
    flags: CLEAN_FLAGS,
    examples: ["niceeval clean", "niceeval clean --discard"],
  },
  "exp list": {
    usage: "[experiment-selector] [--tag <t>]... [--json]",
    summary: "List the experiments and how many evals each selects",
    flags: EXP_LIST_FLAGS,
    examples: ["niceeval exp list", "niceeval exp list checks --json"],
  },
  "doctor docker": {
    usage: "[--json]",
    summary: "Check the Docker daemon and its address pools for niceeval sandboxes",
    flags: DOCTOR_FLAGS,
    examples: ["niceeval doctor docker", "niceeval doctor docker --json"],
  },
  "sandbox list": {
    usage: "[--orphans] [--provider <name>] [--json]",
    summary: "List sandboxes left by niceeval runs and whether their owner is alive",
    flags: SANDBOX_LIST_FLAGS,
    examples: ["niceeval sandbox list", "niceeval sandbox list --orphans --json"],
  },
  "sandbox prune": {
    usage: "[--force] [--provider <name>] [--json]",
    summary: "Destroy sandboxes whose niceeval process is gone",
    flags: SANDBOX_PRUNE_FLAGS,
    examples: ["niceeval sandbox prune", "niceeval sandbox prune --force --provider local"],
  },
  "ramp hold": {
    usage: '--reason "<text>"',
    summary:
      "Stop every ramped run of this project from raising its concurrency (it still backs off on rate limits)",
    flags: RAMP_HOLD_FLAGS,
    examples: ['niceeval ramp hold --reason "provider quota"', "niceeval ramp status"],
  },
  "ramp resume": {
    usage: "",
    summary: "Let ramped runs raise their concurrency again after a hold",
    flags: [],
    examples: ["niceeval ramp resume", "niceeval ramp status"],
  },
  "ramp set": {
    usage: "<from>:<to>",
    summary: "Override the concurrency range of every ramped run of this project",
    flags: [],
    examples: ["niceeval ramp set 2:8", "niceeval ramp set 4:4"],
  },
  "ramp reset": {
    usage: "",
    summary: "Drop the range override: ramped runs use their configured range again",
    flags: [],
    examples: ["niceeval ramp reset", "niceeval ramp status"],
  },
  "ramp status": {
    usage: "",
    summary: "Show the ramp control (hold, range override) and every live ramped run",
    flags: [],
    examples: ["niceeval ramp status", "niceeval ramp hold --reason quota"],
  },
};

/** What each group is for. */
export const GROUP_SUMMARIES: Readonly<Record<string, string>> = {
  sandbox: "Find and remove sandboxes that niceeval runs left behind",
  doctor: "Check a system that niceeval sandboxes depend on",
  ramp: "Steer the concurrency of every ramped run of this project",
};

/** True for a word that names a command group. */
export function isCommandGroup(word: string): boolean {
  return Object.hasOwn(GROUP_SUMMARIES, word);
}
