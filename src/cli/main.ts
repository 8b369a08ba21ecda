/**
 * `main(args, io)`: routes argv to a command and maps errors to exit codes — 2 for usage errors
 * (no stack), 3 for bugs (stack, version). Its static imports are plain data and flag parsing:
 * every command, the help renderer included, is a literal dynamic `import()` (docs/start.md).
 */
import { UsageError } from "../_shared/mod.ts";
import { VERSION } from "../_shared/mod.ts";
import {
  EXP_FLAGS,
  EXP_LIST_FLAGS,
  firstPositionalIndex,
  flagSet,
  type FlagSpec,
  INIT_FLAGS,
  intFlag,
  LIST_FLAGS,
  oneLine,
  parseFlags,
  quoteValue,
  tagsFlag,
  unknownFlag,
} from "./flags.ts";
import {
  COMMANDS,
  DOCTOR_FLAGS,
  isCommandGroup,
  RAMP_HOLD_FLAGS,
  SANDBOX_LIST_FLAGS,
  SANDBOX_PRUNE_FLAGS,
} from "./commands.ts";
import { internalHint, jsonRequested, writeErrorLine } from "./json_errors.ts";
import type { Io } from "./io.ts";
import type { RampCommand } from "./ramp.ts";

const RESERVED: Readonly<Record<string, string>> = {
  accept: "exp",
  migrate: "exp",
  debug: "exp",
  check: "exp --dry",
  session: "exp",
};

/** Commands reached through a group word (`sandbox list`, `doctor docker`). */
const GROUPED_REGEXP = /^(?:sandbox|doctor|ramp) /;

/** Flags accepted before any command (CLI-4, CLI-5). */
const ROOT_FLAGS: readonly FlagSpec[] = [
  { name: "help", description: "print help" },
  { name: "version", description: "print the version" },
];

/** Runs one command; returns its exit code. */
export async function main(args: readonly string[], io: Io): Promise<number> {
  try {
    return await dispatch(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      // ERR-5: each message is one line, whatever value it quotes.
      io.stderr.write(`error: ${oneLine(error.message)} [${error.code}]\n`);
      for (const line of error.extraLines) io.stderr.write(`error: ${oneLine(line)}\n`);
      io.stderr.write(`hint: ${oneLine(error.hint)}\n`);
      // With --json the error is also an `error` line on stdout (issue 18.8).
      if (jsonRequested(args)) writeErrorLine(io, error, error.hint);
      return 2;
    }
    const e = error instanceof Error ? error : new Error(String(error));
    io.stderr.write(`internal error: ${e.message}\n${e.stack ?? ""}\n`);
    io.stderr.write(`hint: ${internalHint()}\n`);
    if (jsonRequested(args)) writeErrorLine(io, error, internalHint());
    return 3;
  }
}

/**
 * What `niceeval --version` and every help print (CLI-4, CLI-5), or undefined when `args` ask for
 * a command. It loads no command module; only a help loads its renderer.
 *
 * @throws {UsageError} for an unknown or reserved command, as {@link main} reports it.
 */
export async function helpOrVersion(args: readonly string[]): Promise<string | undefined> {
  const [command, ...rest] = args;
  if (command === undefined || command === "-h" || command === "--help") {
    const { helpText } = await import("./help.ts");
    return helpText();
  }
  if (command === "-v" || command === "--version") return `${VERSION}\n`;
  // `sandbox --help` (no subcommand yet): the group's help (issue 18.8).
  if (isCommandGroup(command) && rest[0]?.startsWith("-") && wantsHelp(rest)) {
    const { groupHelpText } = await import("./group_help.ts");
    return groupHelpText(command);
  }
  const { sub, tail } = route(command, rest);
  if (!wantsHelp(tail)) return undefined;
  const { helpText } = await import("./help.ts");
  return helpText(sub);
}

async function dispatch(args: readonly string[], io: Io): Promise<number> {
  const text = await helpOrVersion(args);
  if (text !== undefined) {
    io.stdout.write(text);
    return 0;
  }
  const { sub, tail } = route(args[0]!, args.slice(1));
  switch (sub) {
    case "init": {
      const flags = parseFlags(tail, INIT_FLAGS, "init");
      noPositionals(flags.positionals, "init");
      const { runInit } = await import("./init.ts");
      return await runInit(io, { example: flagSet(flags, "example") });
    }
    case "list": {
      const flags = parseFlags(tail, LIST_FLAGS, "list");
      const { runList } = await import("./list.ts");
      return await runList(io, {
        prefixes: flags.positionals,
        tags: tagsFlag(flags),
        json: flagSet(flags, "json"),
      });
    }
    case "exp list": {
      const flags = parseFlags(tail, EXP_LIST_FLAGS, "exp list");
      if (flags.positionals.length > 1) noPositionals(flags.positionals.slice(1), "exp list");
      const { runExpList } = await import("./list.ts");
      return await runExpList(io, {
        ...(flags.positionals[0] !== undefined ? { selector: flags.positionals[0] } : {}),
        tags: tagsFlag(flags),
        json: flagSet(flags, "json"),
      });
    }
    case "show": {
      const { runShow, SHOW_FLAGS } = await import("./show.ts");
      const flags = parseFlags(tail, SHOW_FLAGS, "show");
      const record = flags.values.get("record")?.[0];
      if (flagSet(flags, "compare")) return await compareCommand(io, flags, record);
      if (flagSet(flags, "fail-on-regression")) {
        throw new UsageError(
          "usage",
          "--fail-on-regression applies to show --compare only",
          "niceeval show --compare <runA|experiment> <runB|experiment> --fail-on-regression",
        );
      }
      if (flags.positionals.length > 1) noPositionals(flags.positionals.slice(1), "show");
      return await runShow(io, {
        ...(flags.positionals[0] !== undefined ? { locator: flags.positionals[0] } : {}),
        runs: flags.values.get("run") ?? [],
        experiments: flags.values.get("experiment") ?? [],
        json: flagSet(flags, "json"),
        listRuns: flagSet(flags, "runs"),
        ...(record !== undefined ? { record } : {}),
      });
    }
    case "view": {
      const { runView, VIEW_FLAGS } = await import("./view.ts");
      const { checkCompareSides } = await import("./show_compare.ts");
      const flags = parseFlags(tail, VIEW_FLAGS, "view");
      const record = flags.values.get("record")?.[0];
      const out = flags.values.get("out")?.[0];
      const port = intFlag(flags, "port", { max: 65535 });
      const compare = flagSet(flags, "compare");
      if (compare) checkCompareSides(flags.positionals, "view");
      else noPositionals(flags.positionals, "view");
      return await runView(io, {
        runs: flags.values.get("run") ?? [],
        experiments: flags.values.get("experiment") ?? [],
        compare: compare ? [flags.positionals[0]!, flags.positionals[1]!] : null,
        open: flagSet(flags, "open"),
        serve: flagSet(flags, "serve"),
        ...(out !== undefined ? { out } : {}),
        ...(port !== undefined ? { port } : {}),
        ...(record !== undefined ? { record } : {}),
      });
    }
    case "sandbox list":
    case "sandbox prune": {
      const list = sub === "sandbox list";
      const flags = parseFlags(tail, list ? SANDBOX_LIST_FLAGS : SANDBOX_PRUNE_FLAGS, sub);
      noPositionals(flags.positionals, sub);
      const { runSandboxList, runSandboxPrune } = await import("./sandbox.ts");
      const provider = flags.values.get("provider")?.[0];
      const options = {
        json: flagSet(flags, "json"),
        ...(provider !== undefined ? { provider } : {}),
      };
      return list
        ? await runSandboxList(io, { ...options, orphans: flagSet(flags, "orphans") })
        : await runSandboxPrune(io, { ...options, force: flagSet(flags, "force") });
    }
    case "doctor docker": {
      const flags = parseFlags(tail, DOCTOR_FLAGS, sub);
      noPositionals(flags.positionals, sub);
      const { runDoctorDocker } = await import("./doctor.ts");
      return await runDoctorDocker(io, { json: flagSet(flags, "json") });
    }
    case "ramp hold":
    case "ramp resume":
    case "ramp set":
    case "ramp reset":
    case "ramp status": {
      const { runRamp } = await import("./ramp.ts");
      return await runRamp(io, rampCommand(sub, tail));
    }
    case "clean": {
      const { runClean, CLEAN_FLAGS } = await import("./clean.ts");
      const flags = parseFlags(tail, CLEAN_FLAGS, "clean");
      noPositionals(flags.positionals, "clean");
      const record = flags.values.get("record")?.[0];
      return await runClean(io, {
        ...(record !== undefined ? { record } : {}),
        discard: flagSet(flags, "discard"),
      });
    }
    default: {
      const flags = parseFlags(tail, EXP_FLAGS, "exp");
      const { expOptions } = await import("./exp_options.ts");
      const options = expOptions(flags);
      const { runExp } = await import("./exp.ts");
      return await runExp(io, options);
    }
  }
}

/** `show --compare <A> <B>`: the comparison report; other scopes do not combine with it. */
async function compareCommand(
  io: Io,
  flags: ReturnType<typeof parseFlags>,
  record: string | undefined,
): Promise<number> {
  if (flags.values.has("run") || flags.values.has("experiment") || flagSet(flags, "runs")) {
    throw new UsageError(
      "usage",
      "show --compare takes two Runs or experiments as arguments, not --run, --experiment or --runs",
      "niceeval show --compare <runA|experiment> <runB|experiment>",
    );
  }
  const { runCompare } = await import("./show_compare.ts");
  return await runCompare(io, {
    sides: flags.positionals,
    json: flagSet(flags, "json"),
    failOnRegression: flagSet(flags, "fail-on-regression"),
    ...(record !== undefined ? { record } : {}),
  });
}

/** Resolves the command (or `exp list`) and its arguments; throws for unknown and reserved ones. */
function route(command: string, rest: readonly string[]): { sub: string; tail: string[] } {
  if (command.startsWith("-")) throw unknownFlag(command.split("=")[0]!, ROOT_FLAGS, "");
  if (Object.hasOwn(RESERVED, command)) {
    throw new UsageError(
      "command-unavailable",
      `niceeval ${command} is not available in this release`,
      `use niceeval ${RESERVED[command]}`,
    );
  }
  if (command === "sandbox") return sandboxRoute(rest);
  if (command === "doctor") return doctorRoute(rest);
  if (command === "ramp") return groupRoute("ramp", rest);
  if (!Object.hasOwn(COMMANDS, command) || command.includes(" ")) {
    throw new UsageError(
      "usage",
      `unknown command ${quoteValue(command)}`,
      `commands: ${
        [
          ...new Set(
            Object.keys(COMMANDS).map((c) => GROUPED_REGEXP.test(c) ? c.split(" ")[0]! : c),
          ),
        ]
          .filter((c) => !c.includes(" ")).join(", ")
      }`,
    );
  }
  // CMD-2: `list` as the first positional of `exp` is the subcommand, wherever flags put it.
  const listAt = command === "exp" ? firstPositionalIndex(rest, EXP_FLAGS) : -1;
  if (listAt >= 0 && rest[listAt] === "list") {
    return { sub: "exp list", tail: rest.filter((_, i) => i !== listAt) };
  }
  return { sub: command, tail: [...rest] };
}

/** `sandbox list` and `sandbox prune` (CMD-19): the subcommand is the first argument. */
function sandboxRoute(rest: readonly string[]): { sub: string; tail: string[] } {
  const [name, ...tail] = rest;
  const sub = `sandbox ${name}`;
  if (name === undefined || !Object.hasOwn(COMMANDS, sub)) {
    throw new UsageError(
      "usage",
      name === undefined ? "niceeval sandbox needs a subcommand" : `unknown command "${sub}"`,
      "subcommands: sandbox list, sandbox prune",
    );
  }
  return { sub, tail };
}

/** `ramp <subcommand>` (CMD-18): the subcommand is the first argument. */
function groupRoute(group: string, rest: readonly string[]): { sub: string; tail: string[] } {
  const [name, ...tail] = rest;
  const sub = `${group} ${name}`;
  if (name === undefined || !Object.hasOwn(COMMANDS, sub)) {
    const subs = Object.keys(COMMANDS).filter((c) => c.startsWith(`${group} `));
    throw new UsageError(
      "usage",
      name === undefined ? `niceeval ${group} needs a subcommand` : `unknown command "${sub}"`,
      `subcommands: ${subs.join(", ")}`,
    );
  }
  return { sub, tail };
}

/** `doctor docker` (CMD-19): the checked system is the first argument. */
function doctorRoute(rest: readonly string[]): { sub: string; tail: string[] } {
  const [name, ...tail] = rest;
  const sub = `doctor ${name}`;
  if (name === undefined || !Object.hasOwn(COMMANDS, sub)) {
    throw new UsageError(
      "usage",
      name === undefined ? "niceeval doctor needs a subcommand" : `unknown command "${sub}"`,
      "subcommands: doctor docker",
    );
  }
  return { sub, tail };
}

function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === "-h" || a === "--help");
}

/** The `ramp <action>` arguments: `hold` takes `--reason`, `set` one range, the others nothing. */
function rampCommand(sub: string, tail: readonly string[]): RampCommand {
  const flags = parseFlags(tail, sub === "ramp hold" ? RAMP_HOLD_FLAGS : [], sub);
  const action = sub.slice("ramp ".length) as RampCommand["action"];
  noPositionals(flags.positionals.slice(action === "set" ? 1 : 0), sub);
  if (action === "hold") return { action, reason: flags.values.get("reason")?.[0] };
  if (action === "set") return { action, range: flags.positionals[0] };
  return { action };
}

function noPositionals(positionals: readonly string[], command: string): void {
  if (positionals.length > 0) {
    throw new UsageError(
      "usage",
      `unexpected argument ${quoteValue(positionals[0]!)}`,
      `see niceeval ${command} --help`,
    );
  }
}
