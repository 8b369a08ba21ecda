/**
 * Help of a command group (`sandbox`, `doctor`, `ramp`; issue 18.8): `niceeval sandbox --help`
 * lists the group's subcommands the way the root help lists commands.
 */
import { Command } from "commander";
import { COMMANDS, GROUP_SUMMARIES } from "./commands.ts";

/** The help of one command group: usage, summary, its subcommands and two examples. */
export function groupHelpText(group: string): string {
  const subs = Object.entries(COMMANDS).filter(([name]) => name.startsWith(`${group} `));
  const program = new Command(`niceeval ${group}`)
    .usage("<subcommand> [flags]")
    .description(GROUP_SUMMARIES[group] ?? "")
    .helpOption("-h, --help", "print help")
    .addHelpCommand(false);
  const words = subs.map(([name]) => name.slice(group.length + 1));
  const width = Math.max(...words.map((w) => w.length));
  const lines = subs.map(([, help], i) => `  ${words[i]!.padEnd(width)}  ${help.summary}\n`);
  const [first, help] = subs[0]!;
  return program.helpInformation() + "\nSubcommands:\n" + lines.join("") +
    `\nExamples:\n  ${help.examples[0]}\n  niceeval ${first} --help\n`;
}
