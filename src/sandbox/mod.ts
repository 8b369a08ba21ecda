/**
 * @module sandbox
 * Owns sandbox layers and their factories, the facade (`t.sandbox`, hook argument), the sandbox
 * lifecycle of one Attempt (create with retry, setups, fixtures, prepare, ledger baseline, the
 * cleanup stack), reuse and Eval-group pools with their ledger, owner stamps and crash cleanup, the
 * provider contract and registry, and the providers (`local`, custom).
 *
 * This domain never schedules (lanes, machine slots and pacing reach it as callbacks), never decides
 * verdicts and never writes the Record: failures and diagnostics leave it as data.
 */
export {
  BUILTIN_PROVIDER_NAMES,
  checkLayerPaths,
  defineSandbox,
  layerHookIdentities,
  localSandbox,
  sandboxLayer,
} from "./layer.ts";
export type { DefineSandboxOptions, LocalSandboxOptions } from "./layer.ts";
export { layerState } from "./_layer_state.ts";
export { layerIdentity } from "./layer_identity.ts";
export type { CustomSandboxDefinition, LayerHook, LayerState } from "./_layer_state.ts";
export {
  hasSandboxCode,
  isSandboxError,
  ProviderError,
  SandboxAbortedError,
  SandboxCommandError,
  SandboxConfigError,
  SandboxCreateError,
  SandboxError,
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxPoolError,
  SandboxRetiredError,
  SandboxTimeoutError,
  SandboxUnsupportedError,
} from "./errors.ts";
export type { CreateFailure } from "./errors.ts";
export { commandTimeout, createFacade, createFacadeLease } from "./facade.ts";
export type { CommandEvidence, FacadeLease, FacadeOptions } from "./facade.ts";
export { hostPath, sandboxPath } from "./paths.ts";
export { createIgnoreMatcher, isIgnoredFile } from "./ignore.ts";
export type { IgnoreMatcher } from "./ignore.ts";
export {
  FILE_OP_TRIES,
  fileRetryDelayMs,
  isTransientFileError,
  withFileRetry,
} from "./file_retry.ts";
export type { FileRetryOptions } from "./file_retry.ts";
export { CLEANUP_TIMEOUT_MS, CleanupStack, FORCED_CLEANUP_TIMEOUT_MS } from "./cleanup.ts";
export type {
  CleanupDiagnostic,
  CleanupEntry,
  CleanupKind,
  CleanupStackOptions,
} from "./cleanup.ts";
export {
  classifyCreateFailure,
  classifyTransportError,
  CREATE_TRIES,
  createRetryDelayMs,
  createWithRetry,
  DEFAULT_LIFETIME_MS,
  LIFETIME_RESERVE_MS,
  provisionToken,
  requestedLifetimeMs,
} from "./create.ts";
export type { CreateOutcome, CreateWithRetryOptions } from "./create.ts";
export { openFreshSandbox, openLeasedSandbox, releaseOutcomeOf } from "./attempt.ts";
export type {
  AgentSandboxSteps,
  AttemptSandbox,
  AttemptSandboxCommon,
  FreshSandboxOptions,
  LeasedSandboxOptions,
} from "./attempt.ts";
export type { AttemptLayer, SandboxFailure } from "./_steps.ts";
export { copyFixtures } from "./fixtures.ts";
export {
  anchorLedger,
  baselineLedger,
  CONTAINER_LEDGER_DIR,
  LEDGER_ANCHOR_TAG,
  ledgerDirOf,
  ledgerEnv,
  ledgerGitArgv,
  PRESERVED_PATTERNS,
  resetLedger,
} from "./ledger.ts";
export type { LedgerOptions } from "./ledger.ts";
export { LEASE_RESERVE_MS, Pool, poolCapacity, poolIdentity, poolScope } from "./pool.ts";
export type {
  InstanceAdmission,
  InstanceFactory,
  PoolIdentityInput,
  PoolInstance,
  PoolLease,
  PoolOptions,
} from "./pool.ts";
export { createInstanceFactory } from "./pool_instance.ts";
export { machineBudgetsBelow } from "./machine_budget.ts";
export type { BudgetedSlot, MachineBudget, MachineBudgetOptions } from "./machine_budget.ts";
export { agentInstallIdentity, createPhysicalResolver, resolvePhysicalPairs } from "./physical.ts";
export type {
  PhysicalInput,
  PhysicalLayer,
  PhysicalProblem,
  PhysicalResolver,
  PhysicalSandbox,
  ResolvePairsOptions,
} from "./physical.ts";
export type { InstanceFactoryOptions } from "./pool_instance.ts";
export { classifyOwner, ownerIdentityOf } from "./owner.ts";
export type { OwnerIdentity, OwnerStatus } from "./owner.ts";
export {
  createLocalProvider,
  destroyLocalRoot,
  findLocalRoots,
  LOCAL_HOST_ENV,
  LOCAL_ROOT_PREFIX,
  localSandboxEnv,
  localTmpDir,
  sweepLocalOrphans,
} from "./providers/local.ts";
export type {
  LocalPlan,
  LocalProviderOptions,
  LocalSpec,
  SweepOptions,
} from "./providers/local.ts";
export { BUILTIN_PROVIDERS, createProviderRegistry } from "./registry.ts";
export { artifactPreparer, prepareArtifact } from "./builds.ts";
export type { ArtifactSource } from "./builds.ts";
export type { ProviderContext, ProviderLoader, ProviderRegistry } from "./registry.ts";
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
