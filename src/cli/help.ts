/** Help texts (CLI-4), rendered by commander from the same flag tables the parser uses. */
import { Command, Option } from "commander";
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

interface CommandHelp {
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

/** Help of one command, or of the root when `name` is undefined. */
export function helpText(name?: string): string {
  if (name === undefined) return rootHelp();
  const help = COMMANDS[name]!;
  const command = new Command(`niceeval ${name}`).usage(help.usage).description(help.summary)
    .helpOption("-h, --help", "print help");
  for (const flag of help.flags) {
    const value = flag.value
      ? ` ${flag.value}`
      : flag.optionalValues
      ? `[=${flag.optionalValues.join("|")}]`
      : "";
    const short = flag.short !== undefined ? `-${flag.short}, ` : "";
    command.addOption(new Option(`${short}--${flag.name}${value}`, flag.description));
  }
  return command.helpInformation() + `\nExamples:\n  ${help.examples[0]}\n  ${help.examples[1]}\n`;
}

/**
 * The root help. Commands are listed by hand: commander would read `exp list` as a command `exp`
 * with an argument `list`, and would then reject `exp` as a duplicate.
 */
function rootHelp(): string {
  const program = new Command("niceeval")
    .usage("<command> [subcommand] [arguments] [flags]")
    .description("Evaluate AI agents: plan, run, store and report Attempts")
    .helpOption("-h, --help", "print help")
    .version("", "-v, --version", "print the version")
    .addHelpCommand(false);
  const entries = Object.entries(COMMANDS);
  const width = Math.max(...entries.map(([cmd]) => cmd.length));
  const commands = entries.map(([cmd, help]) => `  ${cmd.padEnd(width)}  ${help.summary}\n`);
  return program.helpInformation() + "\nCommands:\n" + commands.join("") +
    "\nExamples:\n  niceeval init --example\n  niceeval exp local\n";
}
