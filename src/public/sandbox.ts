/**
 * @module
 * `niceeval/sandbox`: sandbox layers for sandbox agents. A template layer chooses the provider
 * (`localSandbox`, `dockerSandbox`, `e2bSandbox`, `vercelSandbox`, or a custom one made with
 * `defineSandbox`); `sandboxLayer` adds a fixture, hooks and prepare steps without choosing one. Layers go into the `sandbox` option of an Experiment,
 * Eval or Eval group; the test body reaches the sandbox through `t.sandbox`.
 *
 * @example
 * ```ts
 * import { localSandbox, sandboxLayer } from "niceeval/sandbox";
 * export const template = localSandbox({ fixture: "./fixture" });
 * export const layer = sandboxLayer().prepare("git init -q", ["touch", "notes.md"]);
 * ```
 */
export {
  defineSandbox,
  dockerSandbox,
  e2bSandbox,
  localSandbox,
  sandboxLayer,
  vercelSandbox,
} from "../sandbox/mod.ts";
export type {
  DefineSandboxOptions,
  DockerSandboxOptions,
  DockerSource,
  E2BSandboxOptions,
  LocalSandboxOptions,
  VercelSandboxOptions,
} from "../sandbox/mod.ts";
export {
  SandboxAbortedError,
  SandboxCommandError,
  SandboxConfigError,
  SandboxError,
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxRetiredError,
  SandboxTimeoutError,
  SandboxUnsupportedError,
} from "../sandbox/mod.ts";
export type {
  CommandOptions,
  CommandResult,
  CreateContext,
  CreateErrorClass,
  EvalSandbox,
  ExecCommand,
  ExecOptions,
  ExecResult,
  HookContext,
  LayerCommon,
  Lifetime,
  OutputChunk,
  OwnedInstance,
  OwnerStamp,
  PrepareContext,
  PrepareStep,
  ProviderScheduling,
  SandboxCapabilities,
  SandboxDiagnostic,
  SandboxHandle,
  SandboxHook,
  SandboxLayer,
  SandboxOps,
  SandboxProvider,
  TransferOptions,
} from "../sandbox/mod.ts";
