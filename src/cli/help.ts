/**
 * Help texts (CLI-4), rendered by commander from the same flag tables the parser uses. Imported
 * only when a help is printed, so no other command loads commander (docs/start.md).
 */
import { Command, Option } from "commander";
import { COMMANDS } from "./commands.ts";

export { COMMANDS } from "./commands.ts";

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
