/**
 * @module sandbox
 * Owns sandbox layers and their factories, the facade (`t.sandbox`, hook argument), the sandbox
 * lifecycle of one Attempt (create with retry, setups, fixtures, prepare, ledger baseline, the
 * cleanup stack), reuse and Eval-group pools with their ledger, owner stamps and crash cleanup, the
 * provider contract and registry, and the providers (`local`, `docker`, `e2b`, `vercel`, custom).
 *
 * This domain never schedules (lanes, machine slots and pacing reach it as callbacks), never decides
 * verdicts and never writes the Record: failures and diagnostics leave it as data.
 */
export {
  checkLayerPaths,
  defineSandbox,
  dockerSandbox,
  e2bSandbox,
  layerHookIdentities,
  localSandbox,
  sandboxLayer,
  vercelSandbox,
} from "./layer.ts";
export type {
  DefineSandboxOptions,
  DockerSandboxOptions,
  DockerSource,
  E2BSandboxOptions,
  LocalSandboxOptions,
  VercelSandboxOptions,
} from "./layer.ts";
export { layerState } from "./_layer_state.ts";
export { layerIdentity } from "./layer_identity.ts";
export {
  hasSandboxCode,
  ProviderError,
  SandboxAbortedError,
  SandboxCommandError,
  SandboxConfigError,
  SandboxCreateError,
  SandboxError,
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxRetiredError,
  SandboxTimeoutError,
  SandboxUnsupportedError,
} from "./errors.ts";
export { commandTimeout, createFacade, createFacadeLease } from "./facade.ts";
export type { CommandEvidence, FacadeOptions } from "./facade.ts";
export { hostPath, sandboxPath } from "./paths.ts";
export { createIgnoreMatcher } from "./ignore.ts";
export { isTransientFileError, withFileRetry } from "./file_retry.ts";
export { CLEANUP_TIMEOUT_MS, CleanupStack, FORCED_CLEANUP_TIMEOUT_MS } from "./cleanup.ts";
export type { CleanupDiagnostic, CleanupKind } from "./cleanup.ts";
export { classifyTransportError, createWithRetry, requestedLifetimeMs } from "./create.ts";
export { openFreshSandbox, openLeasedSandbox, releaseOutcomeOf } from "./attempt.ts";
export type { AttemptSandbox, FreshSandboxOptions } from "./attempt.ts";
export type { AttemptLayer, SandboxFailure } from "./_steps.ts";
export {
  anchorLedger,
  baselineLedger,
  LEDGER_ANCHOR_TAG,
  ledgerGitArgv,
  resetLedger,
} from "./ledger.ts";
export { Pool, poolCapacity, poolIdentity, poolScope } from "./pool.ts";
export type { InstanceAdmission } from "./pool.ts";
export { createInstanceFactory } from "./pool_instance.ts";
export { machineBudgetsBelow } from "./machine_budget.ts";
export type { BudgetedSlot, MachineBudget } from "./machine_budget.ts";
export { agentInstallIdentity, createPhysicalResolver, resolvePhysicalPairs } from "./physical.ts";
export type { PhysicalInput, PhysicalLayer, PhysicalSandbox } from "./physical.ts";
export { classifyOwner, ownerIdentityOf } from "./owner.ts";
export type { OwnerIdentity, OwnerStatus } from "./owner.ts";
export {
  createLocalProvider,
  destroyLocalRoot,
  findLocalRoots,
  localTmpDir,
  sweepLocalOrphans,
} from "./providers/local.ts";
export type { LocalPlan } from "./providers/local.ts";
export { createProviderRegistry } from "./registry.ts";
export { artifactPreparer } from "./builds.ts";
export type { ProviderLoader, ProviderRegistry } from "./registry.ts";
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
} from "./types.ts";
export { dockerPoolPreflight, inspectDocker } from "./providers/docker_tools.ts";
export type {
  AddressPoolPreflight,
  AddressPoolUsage,
  DockerDoctorReport,
  InspectDockerOptions,
} from "./providers/docker_tools.ts";
