/** Eval group discovery (authoring.md §1.4). */
import { API_FORMAT_VERSION, readBrand } from "../_shared/mod.ts";
import type { EvalDefinition, EvalGroupDefinition } from "./definitions.ts";
import type { DiscoveredEval, ModuleLoader } from "./evals.ts";
import { groupShapeProblem } from "./_revalidate.ts";
import { compareCodeUnits, type DiscoveryIssue, importIssue, unreadableExport } from "./issues.ts";
import type { WalkedFile } from "./walk.ts";

/** One discovered eval group. */
export interface DiscoveredGroup {
  /** The group's directory relative to `evals/`. */
  readonly id: string;
  readonly file: string;
  readonly definition: EvalGroupDefinition;
  /** Member eval IDs in normalized (code-unit) order (GRP-2). */
  readonly memberIds: readonly string[];
}

/** Imports `eval-group.ts` files, resolves members and marks each member eval's `groupId`. */
export async function discoverGroups(
  files: readonly WalkedFile[],
  evals: readonly DiscoveredEval[],
  load: ModuleLoader,
  issues: DiscoveryIssue[],
): Promise<DiscoveredGroup[]> {
  const idsByDefinition = new Map<EvalDefinition, string[]>();
  for (const e of evals) {
    const ids = idsByDefinition.get(e.definition);
    if (ids) ids.push(e.id);
    else idsByDefinition.set(e.definition, [e.id]);
  }
  const owner = new Map<string, string>();
  const groups: DiscoveredGroup[] = [];
  for (const file of files) {
    const dir = file.relative.slice("evals/".length, -"/eval-group.ts".length);
    const issue = (code: string, message: string, hint: string) =>
      issues.push({ file: file.relative, code, level: "error", message, hint });
    if (!inGroupDirectory(file.relative)) {
      issue(
        "discovery.group-location",
        "eval-group.ts must be inside a subdirectory of evals/",
        "move it into evals/<group>/",
      );
      continue;
    }
    let mod: Record<string, unknown>;
    try {
      mod = await load(file.path);
    } catch (error) {
      issues.push(importIssue(file, error));
      continue;
    }
    const found = readBrand(mod.default);
    if (found?.kind !== "eval-group" || found.version !== API_FORMAT_VERSION) {
      issue(
        "discovery.invalid-export",
        found?.kind === "eval-group"
          ? `the eval group was made by an API of format version ${found.version}; this niceeval reads version ${API_FORMAT_VERSION}`
          : "the default export must be defineEvalGroup({...})",
        "export default defineEvalGroup({ evals, onUnavailable })",
      );
      continue;
    }
    const definition = mod.default as EvalGroupDefinition;
    const shape = groupShapeProblem(definition);
    if (shape !== undefined) {
      issue(
        "discovery.invalid-export",
        `the default export is an invalid eval group definition: ${shape}`,
        "export default defineEvalGroup({ evals, onUnavailable })",
      );
      continue;
    }
    let members: string[] | undefined;
    try {
      members = resolveMembers(definition, idsByDefinition, issue);
    } catch (error) {
      issues.push(unreadableExport(file.relative, error));
      continue;
    }
    if (members === undefined) continue;
    const overlap = members.find((id) => owner.has(id));
    if (overlap !== undefined) {
      issue(
        "discovery.group-overlap",
        `eval "${overlap}" already belongs to group "${owner.get(overlap)}"`,
        "list each eval in at most one group",
      );
      continue;
    }
    for (const id of members) owner.set(id, dir);
    groups.push({ id: dir, file: file.relative, definition, memberIds: members });
  }
  const byId = new Map(groups.map((g) => [g.id, g]));
  for (const e of evals) {
    const id = owner.get(e.id);
    const group = id === undefined ? undefined : byId.get(id);
    if (group === undefined) continue;
    e.groupId = group.id;
    if (group.definition.sandbox !== undefined) e.groupSandbox = group.definition.sandbox;
  }
  return groups;
}

/** Whether an `eval-group.ts` lies in a subdirectory of `evals/`; only such a file is imported. */
export function inGroupDirectory(relative: string): boolean {
  return relative.startsWith("evals/") && relative.slice("evals/".length).includes("/");
}

function resolveMembers(
  definition: EvalGroupDefinition,
  idsByDefinition: Map<EvalDefinition, string[]>,
  issue: (code: string, message: string, hint: string) => void,
): string[] | undefined {
  const members = new Set<string>();
  for (const [i, member] of definition.evals.entries()) {
    const ids = idsByDefinition.get(member);
    if (!ids) {
      issue(
        "discovery.group-member-unresolved",
        `evals[${i}] is not an eval discovered under evals/`,
        "import the member from its *.eval.ts entry file",
      );
      return undefined;
    }
    // Only a template is forbidden (rule 1.4.3); a template-less layer of prepare steps is fine.
    if ((member.sandbox as { kind?: string } | undefined)?.kind === "template") {
      issue(
        "discovery.group-member-sandbox",
        `member "${ids[0]}" has its own sandbox template`,
        "move the sandbox to defineEvalGroup({ sandbox })",
      );
      return undefined;
    }
    for (const id of ids) members.add(id);
  }
  return [...members].sort(compareCodeUnits);
}
